"""`python -m keras_albert pretrain|finetune|convert|export` with bad arguments.

Run in-process through `keras_albert.cli.main.main` (what `__main__` calls),
plus one real subprocess: each must exit with status 2 and one `error:`
line that names the flag, the bad value and what is accepted.

Runs on every backend. Export and publish are TensorFlow's: without it,
their cases past the flag checks answer the one-line "needs TensorFlow"
error instead (also exit 2, nothing written):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_cli_inputs.py
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from keras_albert.cli.main import main
from keras_albert.utils.backend import tensorflow_available

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _edited(tmp_path, bundled, name, file, edit):
    """A copy of a bundled preset with one JSON file edited."""
    from keras_albert.presets.preset_resolution import bundled_presets_dir

    copy = tmp_path / name
    shutil.copytree(bundled_presets_dir() / bundled, copy)
    document = json.loads((copy / file).read_text())
    (copy / file).write_text(json.dumps(edit(document)))


def _set_config(**values):
    def edit(document):
        document["config"].update(values)
        return {**document, "config": {k: v for k, v in document["config"].items() if v != "DELETE"}}

    return edit


@pytest.fixture
def files(tmp_path):
    (tmp_path / "empty.txt").write_text("\n\n")
    (tmp_path / "two.txt").write_text("a first text\na second text\n")
    (tmp_path / "train.tsv").write_text("text\tlabel\na cat\tx\n")
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "hf").mkdir()
    # Crafted presets and configs that once ended in a traceback.
    task = "albert_tiny_en_student_supersense"
    _edited(tmp_path, task, "metadata_list", "metadata.json", lambda d: [])
    _edited(tmp_path, task, "metadata_string", "metadata.json", lambda d: "hello")
    _edited(tmp_path, task, "backbone_list", "task.json", _set_config(backbone=["x"]))
    _edited(tmp_path, task, "classes_string", "task.json", _set_config(num_classes="26"))
    _edited(tmp_path, task, os.fsdecode(b"pre\xffset"), "task.json", lambda d: d)
    _edited(tmp_path, "albert_tiny_en", "positions_string", "config.json", _set_config(max_sequence_length="128"))
    _edited(tmp_path, "albert_tiny_en", "no_positions", "config.json", _set_config(max_sequence_length="DELETE"))
    _edited(tmp_path, "albert_tiny_en", "no_layers", "config.json", _set_config(num_layers="DELETE"))
    (tmp_path / "hf_act").mkdir()
    (tmp_path / "hf_act" / "config.json").write_text(json.dumps(dict(
        model_type="albert", vocab_size=30, num_hidden_layers=1, num_attention_heads=1,
        embedding_size=8, hidden_size=8, intermediate_size=8, hidden_act=["gelu_new"])))
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
    ("export_int8_too_few_calibration_texts", ["export", "--preset", "albert_tiny_en_student_supersense", "--format", "tflite", "--quantize", "int8", "--calibration_texts", "{tmp}/two.txt", "--output", "{tmp}/m.tflite"], ["`--calibration_texts` holds 2 texts", "100", "leave --calibration_texts out"]),
    ("export_empty_texts", ["export", "--preset", "albert_tiny_en", "--format", "tflite", "--texts", "{tmp}/empty.txt", "--output", "{tmp}/m.tflite"], ["--texts", "empty.txt", "holds no text"]),
    ("publish_metadata_list", ["publish", "--preset", "{tmp}/metadata_list", "--output", "{tmp}/out"], ["metadata.json", "holds list", "JSON object"]),
    ("publish_metadata_string", ["publish", "--preset", "{tmp}/metadata_string", "--output", "{tmp}/out"], ["metadata.json", "holds str", "JSON object"]),
    ("publish_num_classes_string", ["publish", "--preset", "{tmp}/classes_string", "--output", "{tmp}/out"], ["task.json", "config.num_classes", "positive int", "num_classes='26'"]),
    ("publish_preset_path_not_utf8", ["publish", "--preset", "{tmp}/pre\udcffset", "--output", "{tmp}/out"], ["`preset`", "pre\\xffset", "not UTF-8", "rename"]),
    ("publish_task_backbone_list", ["publish", "--preset", "{tmp}/backbone_list", "--output", "{tmp}/out"], ["task.json", "config.backbone", "['x']", "serialized Keras object"]),
    ("export_task_backbone_list", ["export", "--preset", "{tmp}/backbone_list", "--format", "saved_model", "--output", "{tmp}/out"], ["task.json", "config.backbone", "['x']"]),
    ("pretrain_init_preset_positions_string", ["pretrain", "--corpus", "{tmp}/two.txt", "--output", "{tmp}/run", "--init_preset", "{tmp}/positions_string", "--num_groups=2"], ["config.json", "max_sequence_length='128'", "positive integer"]),
    ("pretrain_init_preset_without_positions", ["pretrain", "--corpus", "{tmp}/two.txt", "--output", "{tmp}/run", "--init_preset", "{tmp}/no_positions", "--num_groups=2"], ["config.json", "lacks ['max_sequence_length']"]),
    ("pretrain_init_preset_without_layers", ["pretrain", "--corpus", "{tmp}/two.txt", "--output", "{tmp}/run", "--init_preset", "{tmp}/no_layers", "--num_groups=2", "--max_seq_length=64"], ["config.json", "lacks ['num_layers']"]),
    ("convert_hf_activation_list", ["convert", "--from", "hf", "--src", "{tmp}/hf_act", "--dst", "{tmp}/out"], ["config.json", "hidden_act=['gelu_new']", "accepted", "gelu_new"]),
    ("export_untrained_preset", ["export", "--preset", "albert_tiny_en", "--format", "saved_model", "--output", "{tmp}/out"], ["albert_tiny_en", "holds AlbertPretrainer;", "exportable tasks: AlbertCausalLM, AlbertClassifier,", "Fine-tune it first", "--format=tfhub"]),
]


# Cases that export or publish once the flags are checked.
NEED_TENSORFLOW = {
    "export_int8_too_few_calibration_texts", "publish_metadata_list",
    "publish_metadata_string", "publish_num_classes_string", "publish_preset_path_not_utf8",
    "publish_task_backbone_list", "export_task_backbone_list", "export_untrained_preset",
}
NO_TENSORFLOW = ["keras_albert.export", "needs TensorFlow, which is not installed", "pip install tensorflow"]


def _needles(case):
    name, _, needles = case
    return NO_TENSORFLOW if name in NEED_TENSORFLOW and not tensorflow_available() else needles


@pytest.mark.entry_point("cli")
@pytest.mark.parametrize("argv, needles", [(case[1], _needles(case)) for case in CASES],
                         ids=[case[0] for case in CASES])
def test_cli_refuses_bad_arguments(argv, needles, files, capsys):
    status, stderr = _run(argv, files, capsys)
    assert status == 2, stderr
    missing = [needle for needle in needles if needle not in stderr]
    assert not missing, f"{missing} not in: {stderr[-2000:]}"
    assert "Traceback" not in stderr
    assert not (files / "out").exists() and not (files / "run").exists()


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
