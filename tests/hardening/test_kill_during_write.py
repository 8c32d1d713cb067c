"""Fault injection: SIGKILL a preset save, an export and a conversion at each
point of the directory swap; the previous artifact or the new one is always
there and loads, and running the write again leaves no stale sibling."""

import hashlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

import keras_albert
from tests.scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = pathlib.Path(__file__).with_name("kill_during_write.py")


def _digest(directory):
    digest = hashlib.sha256()
    for path in sorted(pathlib.Path(directory).rglob("*")):
        digest.update(str(path.relative_to(directory)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _run_until_paused(operation, point, target, source=None):
    """Starts the write, waits for its pause, SIGKILLs it."""
    command = [sys.executable, str(SCRIPT), operation, point, str(target)]
    process = subprocess.Popen(
        command + ([str(source)] if source else []),
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        for line in process.stdout:
            if line.strip() == "PAUSED":
                break
        else:
            raise AssertionError(f"never paused: {process.stderr.read()[-3000:]}")
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


def _run_to_the_end(operation, target, source=None):
    """kill_during_write.py's write, run here: what it leaves does not
    depend on the process (only the kill needs one)."""
    write = load_script("tests/hardening/kill_during_write.py").write
    assert write(operation, str(target), str(source) if source else None) == 0


def _siblings(target):
    return sorted(p.name for p in target.parent.iterdir() if p.name.startswith(f".{target.name}."))


def _previous_backbone(path):
    keras_albert.AlbertBackbone(
        vocabulary_size=60, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
    ).save_to_preset(str(path))


@pytest.mark.large
@pytest.mark.parametrize("point", ["staged", "exchange", "between_renames", "before_cleanup"])
def test_killed_preset_save(tmp_path, point):
    target = tmp_path / "preset"
    _previous_backbone(target)
    before = _digest(target)
    _run_until_paused("save", point, target)
    new = point == "before_cleanup"
    # Loading finds the previous preset (put back from `.old` if a kill fell
    # between the two renames) or, once swapped, the new one.
    loaded = keras_albert.AlbertBackbone.from_preset(str(target))
    assert loaded.num_layers == (2 if new else 1)
    if not new:
        assert _digest(target) == before
    _run_to_the_end("save", target)
    assert keras_albert.AlbertBackbone.from_preset(str(target)).num_layers == 2
    assert _siblings(target) == []


@pytest.fixture(scope="module")
def classifier_preset(tmp_path_factory):
    path = tmp_path_factory.mktemp("classifier") / "preset"
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=8000, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, max_sequence_length=32,
    )
    keras_albert.AlbertClassifier(
        backbone, num_classes=3,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
    ).save_to_preset(str(path))
    return path


@pytest.fixture(scope="module")
def finished(classifier_preset, tmp_path_factory):
    """A finished write of each kind, made once: copied where a killed
    write is to replace it."""
    root = tmp_path_factory.mktemp("finished")
    made = {}

    def copy(operation, target):
        if operation not in made:
            made[operation] = root / operation
            _run_to_the_end(operation, made[operation], classifier_preset)
        shutil.copytree(made[operation], target)

    return copy


@pytest.mark.large
@pytest.mark.parametrize("point", ["staged", "before_cleanup"])
def test_killed_export(tmp_path, classifier_preset, finished, point):
    import tensorflow as tf

    target = tmp_path / "serving"
    finished("export", target)
    before = _digest(target)
    _run_until_paused("export", point, target, classifier_preset)
    if point == "staged":
        assert _digest(target) == before
    serve = tf.saved_model.load(str(target)).signatures["serving_default"]
    assert serve(text=tf.constant(["a cat"]))["probabilities"].shape == (1, 3)
    _run_to_the_end("export", target, classifier_preset)
    assert _siblings(target) == []


@pytest.mark.large
@pytest.mark.parametrize("point", ["exchange", "before_cleanup"])
def test_killed_conversion(tmp_path, classifier_preset, finished, point):
    from keras_albert.convert.huggingface import read_hf_state

    target = tmp_path / "hf"
    finished("convert", target)
    before = _digest(target)
    _run_until_paused("convert", point, target, classifier_preset)
    if point == "exchange":
        assert _digest(target) == before
    assert json.loads((target / "config.json").read_text())["model_type"] == "albert"
    assert read_hf_state(target)
    _run_to_the_end("convert", target, classifier_preset)
    assert _siblings(target) == []
