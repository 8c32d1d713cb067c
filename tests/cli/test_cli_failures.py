"""Every CLI failure is one line on stderr and exit 2, found before long work,
and leaves nothing behind that the command did not mean to keep.

Runs on every backend. Export is TensorFlow's: without it the export cases
answer the one-line "needs TensorFlow" error instead, as fast:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_cli_failures.py
"""

import json
import time

import numpy as np
import pytest

import keras_albert
from keras_albert.cli import export_command
from keras_albert.cli.main import main
from keras_albert.pipelines import finetuning
from keras_albert.utils.backend import tensorflow_available
from tests.conftest import _WORDS


def _failure(capsys, arguments):
    code = main(arguments)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    return err


def _export_refusal(err, *needles):
    """`err` names every needle, or without TensorFlow says it is needed."""
    needles = needles if tensorflow_available() else ("needs TensorFlow, which is not installed",)
    missing = [needle for needle in needles if needle not in err]
    assert not missing, err


def _unrelated(tmp_path):
    user = tmp_path / "user"
    (user / "sub").mkdir(parents=True)
    (user / "keep_me.txt").write_text("mine")
    (user / "sub" / "data.bin").write_bytes(b"\x01")
    return user


def _untouched(user):
    assert sorted(p.name for p in user.rglob("*")) == ["data.bin", "keep_me.txt", "sub"]
    assert (user / "keep_me.txt").read_text() == "mine"


@pytest.mark.parametrize("fmt", ["saved_model", "tfhub"])
def test_export_into_a_directory_of_other_files_is_refused(tmp_path, capsys, fmt):
    user = _unrelated(tmp_path)
    err = _failure(capsys, ["export", "--preset=albert_tiny_en", f"--format={fmt}", f"--output={user}"])
    _export_refusal(err, "keep_me.txt", "--overwrite")
    _untouched(user)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["user"]


def test_export_to_the_working_directory_is_refused(tmp_path, capsys, monkeypatch):
    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    err = _failure(capsys, ["export", "--preset=albert_tiny_en", "--format=saved_model", "--output=."])
    _export_refusal(err, "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_tflite_output_that_cannot_be_written_fails_before_conversion(tmp_path, capsys):
    (tmp_path / "a_file").write_text("x")
    start = time.monotonic()
    err = _failure(capsys, [
        "export", "--preset=albert_tiny_en", "--format=tflite",
        f"--output={tmp_path / 'a_file' / 'model.tflite'}",
    ])
    _export_refusal(err, "a_file", "is a file")
    assert time.monotonic() - start < 5  # No preset loaded, nothing converted.


def test_tflite_over_a_file_of_another_kind_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    err = _failure(capsys, [
        "export", "--preset=albert_tiny_en", "--format=tflite", f"--output={tmp_path / 'notes.txt'}",
    ])
    _export_refusal(err, "not a TFLite model", "--overwrite")
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("target", ["keras_albert", "hf"])
def test_convert_into_a_directory_of_other_files_is_refused(tmp_path, capsys, target):
    user = _unrelated(tmp_path)
    (tmp_path / "release.tar.gz").write_bytes(b"whatever")
    source = "tf1" if target == "keras_albert" else "keras_albert"
    src = tmp_path / "release.tar.gz" if source == "tf1" else tmp_path
    err = _failure(capsys, [
        "convert", f"--from={source}", f"--to={target}", f"--src={src}", f"--dst={user}",
    ])
    assert "`--dst`" in err and "keep_me.txt" in err
    _untouched(user)


@pytest.mark.parametrize(
    "error",
    [
        PermissionError(13, "Permission denied", "/root/out"),
        OSError(28, "No space left on device"),
        IsADirectoryError(21, "Is a directory", "x"),
    ],
    ids=["permission", "disk_full", "is_a_directory"],
)
def test_os_errors_are_one_line_and_exit_2(capsys, monkeypatch, error):
    def fail(args):
        raise error

    monkeypatch.setattr(export_command, "run", fail)
    err = _failure(capsys, ["export", "--preset=albert_tiny_en", "--format=saved_model", "--output=y"])
    assert error.strerror in err


def test_value_error_over_several_lines_is_one_line(capsys, monkeypatch):
    def fail(args):
        raise ValueError("first line\nsecond line")

    monkeypatch.setattr(export_command, "run", fail)
    assert _failure(capsys, ["export", "--preset=albert_tiny_en", "--format=tflite", "--output=y"]) == (
        "error: first line second line"
    )


def _finetune(tmp_path, train, *extra):
    return [
        "finetune", "--preset=albert_tiny_en", "--task=classification", f"--train={train}",
        f"--eval={train}", f"--output={tmp_path / 'out'}", "--epochs=1", "--batch_size=8",
        "--sequence_length=16", *extra,
    ]


def test_finetune_input_error_leaves_no_output_directory(tmp_path, capsys):
    (tmp_path / "train.tsv").write_text("text\tlabel\nhello\tpos\nhello\tworld\ta\n")
    err = _failure(capsys, _finetune(tmp_path, tmp_path / "train.tsv"))
    assert "train.tsv' line 3: 3 fields" in err
    assert not (tmp_path / "out").exists()


def test_finetune_output_preset_of_other_files_is_refused_before_training(tmp_path, capsys):
    (tmp_path / "train.tsv").write_text("text\tlabel\nhello\tpos\n")
    _unrelated(tmp_path / "out")
    (tmp_path / "out" / "user").rename(tmp_path / "out" / "preset")
    err = _failure(capsys, _finetune(tmp_path, tmp_path / "train.tsv"))
    assert "preset" in err and "keep_me.txt" in err


@pytest.mark.large
def test_failed_serving_check_keeps_the_trained_preset_and_metrics(tmp_path, capsys, monkeypatch):
    def failing_export(*args, **kwargs):
        raise ValueError("The serving model disagrees with the Keras model by 1.35e-03. Nothing was written.")

    monkeypatch.setattr(finetuning, "export_serving_saved_model", failing_export)
    rng = np.random.default_rng(0)
    rows = ["text\tlabel"] + [
        f"{' '.join(rng.choice(_WORDS, 3))} {animal}\t{label}"
        for animal, label in [("cat", "pet"), ("fish", "wild")] * 8
    ]
    (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
    err = _failure(capsys, _finetune(tmp_path, tmp_path / "train.tsv"))
    output = tmp_path / "out"
    assert "disagrees" in err
    assert str(output / "preset") in err and str(output / "metrics.json") in err
    metrics = json.loads((output / "metrics.json").read_text())
    # Epoch 0 is the head fitted before fine-tuning, kept if epoch 1 is no better.
    assert "disagrees" in metrics["serving_error"] and metrics["best_epoch"] in (0, 1)
    assert keras_albert.AlbertClassifier.from_preset(str(output / "preset")).num_classes == 2
    assert not (output / "serving").exists()


def test_tflite_into_an_unwritable_directory_fails_before_conversion(unwritable_directory, capsys):
    start = time.monotonic()
    err = _failure(capsys, [
        "export", "--preset=albert_tiny_en", "--format=tflite",
        f"--output={unwritable_directory / 'model.tflite'}",
    ])
    _export_refusal(err, "not writable", "locked")
    assert time.monotonic() - start < 5


def test_finetune_into_an_unwritable_directory_fails_before_training(tmp_path, unwritable_directory, capsys):
    (tmp_path / "train.tsv").write_text("text\tlabel\nhello\tpos\n")
    arguments = _finetune(tmp_path, tmp_path / "train.tsv")
    arguments = [a for a in arguments if not a.startswith("--output=")]
    err = _failure(capsys, arguments + [f"--output={unwritable_directory / 'run'}"])
    assert "not writable" in err
