"""`save_to_preset`: bad destinations fail clearly; a kill mid-write keeps the old preset."""

import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

import keras_albert
from tests.hardening.conftest import assert_names

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _a_file(tmp):
    path = tmp / "taken.txt"
    path.write_text("keep me")
    return path


BAD_DESTINATIONS = [
    ("none", lambda tmp: None, ["preset_dir=None", "directory path"]),
    ("empty", lambda tmp: "", ["preset_dir=''", "directory path"]),
    ("integer", lambda tmp: 7, ["preset_dir=7", "str or os.PathLike"]),
    ("existing_file", _a_file, ["taken.txt", "existing file", "directory path"]),
]


@pytest.mark.entry_point("save_to_preset")
@pytest.mark.parametrize("who", ["task", "backbone", "tokenizer", "preprocessor"])
@pytest.mark.parametrize("make, needles", [case[1:] for case in BAD_DESTINATIONS], ids=[case[0] for case in BAD_DESTINATIONS])
def test_bad_destination_is_refused(classifier, who, make, needles, tmp_path):
    saver = {
        "task": classifier,
        "backbone": classifier.backbone,
        "tokenizer": classifier.preprocessor.tokenizer,
        "preprocessor": classifier.preprocessor,
    }[who]
    destination = make(tmp_path)
    with pytest.raises(ValueError) as error:
        saver.save_to_preset(destination)
    assert_names(error, *needles)
    if isinstance(destination, pathlib.Path):
        assert destination.read_text() == "keep me"


def test_saving_adds_to_an_existing_preset(classifier, tmp_path):
    # keras-hub semantics kept: a tokenizer saved next to a backbone adds files.
    target = tmp_path / "preset"
    classifier.backbone.save_to_preset(str(target))
    classifier.preprocessor.tokenizer.save_to_preset(str(target))
    names = sorted(os.listdir(target))
    assert {"config.json", "model.weights.h5", "tokenizer.json", "assets"} <= set(names)
    assert [p for p in os.listdir(tmp_path) if p != "preset"] == []  # no staging left
    assert keras_albert.AlbertTokenizer.from_preset(str(target)).vocabulary_size() == 8000


def _digest(directory):
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.large
def test_kill_during_save_to_preset_keeps_the_previous_preset(classifier, tmp_path):
    target = tmp_path / "preset"
    classifier.save_to_preset(str(target))
    before = _digest(target)
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "hardening" / "kill_during_save_to_preset.py"), str(target)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=300,
    )
    assert result.returncode == -9, result.stderr.decode()[-2000:]  # killed mid-save
    assert _digest(target) == before  # byte for byte the 3-class preset
    assert keras_albert.AlbertClassifier.from_preset(str(target)).num_classes == 3
