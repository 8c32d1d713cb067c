"""`python -m keras_albert pretrain|finetune|convert|export` with bad arguments.

Run in-process through `keras_albert.cli.main.main` (what `__main__` calls),
plus one real subprocess: each must exit with status 2 and one `error:`
line that names the flag, the bad value and what is accepted.
"""

import os
import pathlib
import subprocess
import sys

import pytest

from keras_albert.cli.main import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    (tmp_path / "empty.txt").write_text("\n\n")
    (tmp_path / "two.txt").write_text("a first text\na second text\n")
    (tmp_path / "train.tsv").write_text("text\tlabel\na cat\tx\n")
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "hf").mkdir()
    return tmp_path


def _run(argv, files, capsys):
    argv = [arg.replace("{tmp}", str(files)) for arg in argv]
    try:
        status = main(argv)
    except SystemExit as exit:  # argparse refuses before `run`
        status = exit.code
    return status, capsys.readouterr().err


# (id, argv, needles in stderr)
CASES = [
    ("pretrain_missing_corpus", ["pretrain", "--corpus", "{tmp}/nope*.txt", "--output", "{tmp}/run"], ["corpus", "nope*.txt"]),
    ("pretrain_bad_sentence_task", ["pretrain", "--corpus", "x", "--output", "o", "--sentence_task", "xyz"], ["--sentence_task=xyz", "sop"]),
    ("pretrain_bad_bool", ["pretrain", "--corpus", "x", "--output", "o", "--jit_compile", "maybe"], ["'maybe' after --jit_compile", "--name=false"]),
    ("finetune_missing_train", ["finetune", "--preset", "albert_tiny_en", "--task", "classification", "--train", "{tmp}/nope.tsv", "--eval", "{tmp}/train.tsv", "--output", "{tmp}/out"], ["--train", "nope.tsv", "does not exist"]),
    ("finetune_zero_epochs", ["finetune", "--preset", "albert_tiny_en", "--task", "classification", "--train", "{tmp}/train.tsv", "--eval", "{tmp}/train.tsv", "--output", "{tmp}/out", "--epochs", "0"], ["--epochs", "positive integer", "0"]),
    ("finetune_unknown_task", ["finetune", "--preset", "p", "--task", "translation", "--train", "t", "--eval", "e", "--output", "o"], ["--task=translation", "classification"]),
    ("finetune_output_is_file", ["finetune", "--preset", "albert_tiny_en", "--task", "classification", "--train", "{tmp}/train.tsv", "--eval", "{tmp}/train.tsv", "--output", "{tmp}/a_file"], ["--output", "a_file", "is a file"]),
    ("convert_missing_src", ["convert", "--from", "hf", "--src", "{tmp}/nope", "--dst", "{tmp}/out"], ["--src", "nope", "does not exist"]),
    ("convert_same_formats", ["convert", "--from", "keras_albert", "--to", "keras_albert", "--src", "{tmp}/hf", "--dst", "{tmp}/out"], ["--from", "--to", "'keras_albert'"]),
    ("convert_config_not_json", ["convert", "--from", "tfhub", "--src", "{tmp}/hf", "--dst", "{tmp}/out", "--config", "{layers: 2"], ["--config", "not valid JSON", "{layers: 2"]),
    ("convert_hf_without_config", ["convert", "--from", "hf", "--src", "{tmp}/hf", "--dst", "{tmp}/out"], ["config.json", "not found"]),
    ("convert_unknown_source", ["convert", "--from", "onnx", "--src", "s", "--dst", "d"], ["--from=onnx", "tf1"]),
    ("export_unknown_preset", ["export", "--preset", "albert_nope", "--format", "saved_model", "--output", "{tmp}/out"], ["preset='albert_nope'", "albert_tiny_en"]),
    ("export_quantize_saved_model", ["export", "--preset", "albert_tiny_en", "--format", "saved_model", "--quantize", "dynamic", "--output", "{tmp}/out"], ["--quantize", "--format=tflite"]),
    ("export_int8_too_few_calibration_texts", ["export", "--preset", "albert_tiny_en_student_supersense", "--format", "tflite", "--quantize", "int8", "--calibration_texts", "{tmp}/two.txt", "--output", "{tmp}/m.tflite"], ["representative_texts", "2", "100"]),
    ("export_empty_texts", ["export", "--preset", "albert_tiny_en", "--format", "tflite", "--texts", "{tmp}/empty.txt", "--output", "{tmp}/m.tflite"], ["--texts", "empty.txt", "holds no text"]),
    ("export_untrained_preset", ["export", "--preset", "albert_tiny_en", "--format", "saved_model", "--output", "{tmp}/out"], ["albert_tiny_en", "holds a 'AlbertPretrainer'", "exportable tasks"]),
]


@pytest.mark.entry_point("cli")
@pytest.mark.parametrize("argv, needles", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_cli_refuses_bad_arguments(argv, needles, files, capsys):
    status, stderr = _run(argv, files, capsys)
    assert status == 2, stderr
    missing = [needle for needle in needles if needle not in stderr]
    assert not missing, f"{missing} not in: {stderr[-2000:]}"
    assert "Traceback" not in stderr


@pytest.mark.large
@pytest.mark.entry_point("cli")
def test_cli_subprocess_reports_and_exits_2(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "keras_albert", "convert", "--from=hf", f"--src={tmp_path}/nope", f"--dst={tmp_path}/out"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2
    assert "error: `--src` does not exist" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()
