"""Presets and sources read as regular files only, and a fuzz of preset
directories: every outcome a loaded model or a one-line error, never a
hang, a traceback, or a file read through a link.

Runs on every backend; publishing is TensorFlow's, so its cases skip
without it, and export answers the one-line "needs TensorFlow" error:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_special_files.py
"""

import json
import os
import random
import shutil

import pytest

import keras_albert
from keras_albert.cli.main import main
from keras_albert.utils.backend import tensorflow_available
from tests.hardening.conftest import assert_names
from tests.hardening.conftest import no_hang


def _copy(preset, tmp_path, name="preset"):
    copy = tmp_path / name
    shutil.copytree(preset, copy)
    return copy


def _secrets(tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    (private / "id_rsa").write_text("-----BEGIN PRIVATE KEY-----\n")
    return private


@pytest.mark.entry_point("publish")
@pytest.mark.parametrize("link, target", [
    ("notes.txt", "/etc/passwd"),
    ("assets/linkdir", "PRIVATE"),
    ("assets/big.bin", "/dev/zero"),
])
def test_publish_never_copies_through_a_link(classifier_preset, tmp_path, link, target):
    pytest.importorskip("tensorflow", reason="publishing is TensorFlow's")
    from keras_albert.publishing.publisher import publish_preset

    preset = _copy(classifier_preset, tmp_path)
    target = str(_secrets(tmp_path)) if target == "PRIVATE" else target
    os.symlink(target, preset / link)
    with no_hang(), pytest.raises(ValueError) as error:
        publish_preset(str(preset), tmp_path / "published", label_names=["a", "b", "c"], exports=())
    assert_names(error, link.split("/")[-1], "link", "regular files")
    assert not [p for p in os.listdir(tmp_path) if "published" in p]


@pytest.mark.entry_point("publish")
def test_publish_never_copies_a_linked_run_record(classifier_preset, tmp_path):
    pytest.importorskip("tensorflow", reason="publishing is TensorFlow's")
    from keras_albert.publishing.publisher import publish_preset

    run = tmp_path / "run"
    _copy(classifier_preset, run)
    os.symlink("/etc/passwd", run / "metrics.json")
    with pytest.raises(ValueError) as error:
        publish_preset(str(run / "preset"), tmp_path / "published", label_names=["a", "b", "c"],
                       exports=())
    assert_names(error, "metrics.json", "symbolic link", "/etc/passwd")
    assert not (tmp_path / "published").exists()


@pytest.mark.entry_point("cli")
def test_export_refuses_a_fifo_vocabulary_at_once(classifier_preset, tmp_path, capsys):
    preset = _copy(classifier_preset, tmp_path)
    vocabulary = preset / "assets" / "tokenizer" / "vocabulary.spm"
    vocabulary.unlink()
    os.mkfifo(vocabulary)
    with no_hang():
        status = main(["export", f"--preset={preset}", "--format=saved_model",
                       f"--output={tmp_path / 'serving'}"])
    stderr = capsys.readouterr().err
    assert status == 2, stderr
    if tensorflow_available():
        assert_names(stderr, "vocabulary.spm", "is a FIFO")
    else:  # export is TensorFlow's: the command says so, also at once
        assert_names(stderr, "needs TensorFlow, which is not installed")
    assert not (tmp_path / "serving").exists()


@pytest.mark.entry_point("converters")
@pytest.mark.parametrize("special", ["fifo", "device", "dir_link"])
def test_convert_refuses_special_files_in_the_source(tmp_path, capsys, special):
    src = tmp_path / "hf"
    src.mkdir()
    (src / "config.json").write_text(json.dumps({"model_type": "albert"}))
    if special == "fifo":
        os.mkfifo(src / "spiece.model")
    elif special == "device":
        os.symlink("/dev/zero", src / "spiece.model")
    else:
        os.symlink(str(_secrets(tmp_path)), src / "extra")
    with no_hang():
        status = main(["convert", "--from=hf", f"--src={src}", f"--dst={tmp_path / 'out'}"])
    stderr = capsys.readouterr().err
    assert status == 2, stderr
    assert_names(stderr, "--src", "spiece.model" if special != "dir_link" else "extra")
    assert not (tmp_path / "out").exists()


# A fuzz of preset directories: links, special files and JSON shapes.
_VALUES = [None, [], {}, "", "x", "128", -1, 0, 1.5, True, [1], {"a": 1}, ["gelu_new"]]
_JSON_FILES = ["config.json", "task.json", "tokenizer.json", "preprocessor.json", "metadata.json"]


def _paths(value, prefix=()):
    """Every key path into a JSON value."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, prefix + (index,))


def _set(document, path, value):
    if not path:
        return value
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return document


def _mutate(preset, rng, outside):
    # Regular files only: an earlier mutation may have made one a FIFO.
    files = sorted(p for p in preset.rglob("*") if p.is_file() and not p.is_symlink())
    names = [n for n in _JSON_FILES if preset / n in files]
    kind = rng.choice(["json", "json", "json", "link", "fifo", "device"])
    if kind == "json" and names:
        name = rng.choice(names)
        document = json.loads((preset / name).read_text())
        path = rng.choice(list(_paths(document)))
        (preset / name).write_text(json.dumps(_set(document, path, rng.choice(_VALUES))))
        return f"{name}:{'/'.join(map(str, path))}"
    victim = rng.choice(files)
    victim.unlink()
    if kind == "link":
        os.symlink(rng.choice([str(outside), str(outside / "secret.txt"), "/etc/passwd"]), victim)
    elif kind == "fifo":
        os.mkfifo(victim)
    else:
        os.symlink(rng.choice(["/dev/zero", "/dev/urandom"]), victim)
    return f"{kind}:{victim.relative_to(preset)}"


@pytest.mark.entry_point("from_preset")
@pytest.mark.parametrize("seed", range(100))
def test_fuzzed_preset_loads_or_fails_in_one_line(classifier_preset, tmp_path, seed):
    rng = random.Random(seed)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    preset = _copy(classifier_preset, tmp_path)
    cases = [_mutate(preset, rng, outside) for _ in range(rng.choice([1, 1, 2]))]
    before = sorted(os.listdir(tmp_path))
    try:
        with no_hang(60):
            keras_albert.AlbertClassifier.from_preset(str(preset))
    except (ValueError, OSError) as error:
        # The CLI prints these as one `error:` line: it must say something.
        assert str(error).strip(), cases
    assert sorted(os.listdir(tmp_path)) == before, cases
    assert sorted(os.listdir(outside)) == ["secret.txt"], cases
