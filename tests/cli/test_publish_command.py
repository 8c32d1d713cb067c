"""`python -m keras_albert publish`: the directory and card from the command
line, label names from a flag or a file, bad input in one line, and an
upload failure that names the cause and keeps the directory.

Publishing runs on every backend and without TensorFlow (its cases here
publish the preset and card alone); the exports it adds are TensorFlow's,
and asked for without it, one line says so:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_publish_command.py
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest
from huggingface_hub import ModelCard

from keras_albert.cli.main import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

SUPERSENSE = "albert_tiny_en_student_supersense"


def test_publish_writes_the_preset_and_a_card(tmp_path, capsys):
    output = tmp_path / "published"
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={output}", "--exports=none",
                 "--limitations=Trained on WordNet glosses only.", "--title=Noun senses, small",
                 "--description=Tells which of 26 kinds of thing a noun's definition is about.",
                 "--base_model=me/albert-tiny-student", "--datasets=me/wordnet-glosses"]) == 0
    printed = capsys.readouterr().out
    result = json.loads(printed[printed.index("{"):])
    assert result["uploaded"] is False and result["handle"] is None
    assert len(result["label_names"]) == 26 and "noun.animal" in result["label_names"]
    card = (output / "README.md").read_text(encoding="utf-8")
    assert "Trained on WordNet glosses only." in card
    assert "every Keras backend" in card
    assert (output / "config.json").is_file() and (output / "labels.txt").is_file()
    read = ModelCard.load(output / "README.md")
    assert read.text.startswith(
        "\n# Noun senses, small\n\nTells which of 26 kinds of thing a noun's definition is about.\n")
    assert read.data.model_name == "Noun senses, small"
    assert read.data.base_model == "me/albert-tiny-student" and read.data.datasets == ["me/wordnet-glosses"]


def test_label_names_from_a_file_must_match_the_saved_ones(tmp_path, capsys):
    names = tmp_path / "labels.txt"
    names.write_text("a\nb\n", encoding="utf-8")
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={tmp_path / 'o'}", "--exports=none",
                 f"--label_names_file={names}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("arguments, message", [
    (["--handle=s3://bucket/model"], "unknown scheme"),
    (["--exports=auto", "--exports=tfhub"], "auto and none stand alone"),
    (["--label_names=a,b", "--label_names_file=x.txt"], "not both"),
    (["--license=gpl"], "value should be one of <apache-2.0|mit>"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, arguments, message):
    output = tmp_path / "o"
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={output}"] + arguments) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not output.exists()


def test_offline_upload_is_one_line_and_keeps_the_directory(tmp_path, monkeypatch, capsys):
    from keras_albert.publishing import hub_upload

    monkeypatch.setattr(hub_upload, "network_available", lambda host: False)
    output = tmp_path / "published"
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={output}", "--exports=none",
                 "--handle=kaggle://me/albert/keras/tiny"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert (output / "README.md").is_file() and (output / "config.json").is_file()
    # One retry instruction, the same in the message and in the README.
    assert err[0].endswith(hub_upload.RETRY)
    assert "run the same publish command (or call) again once online" in " ".join(README.read_text().split())
    # And it works: the same command again (no --overwrite) replaces its output and uploads.
    calls = []
    monkeypatch.setattr(hub_upload, "network_available", lambda host: True)
    monkeypatch.setattr(hub_upload, "_upload_kaggle", lambda *args: calls.append(args))
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={output}", "--exports=none",
                 "--handle=kaggle://me/albert/keras/tiny"]) == 0
    assert calls and calls[0][0] == output


_WITHOUT_TENSORFLOW = """
import sys
import tests.tensorflow_blocked
from keras_albert.cli.main import main

output = sys.argv[1]
print("exit", main(["publish", "--preset=albert_tiny_en_student_supersense", "--output=" + output + "_auto"]))
print("exit", main(["publish", "--preset=albert_tiny_en_student_supersense", "--output=" + output,
                    "--exports=none"]))
"""


@pytest.mark.large
def test_without_tensorflow_the_preset_and_card_publish_and_exports_say_what_they_need(tmp_path):
    # It needed TensorFlow for the card alone: a model trained on JAX or
    # PyTorch could not be published there.
    output = tmp_path / "published"
    result = subprocess.run([sys.executable, "-c", _WITHOUT_TENSORFLOW, str(output)], capture_output=True,
                            text=True, timeout=300, cwd=ROOT, env={**os.environ, "KERAS_BACKEND": "jax",
                                                                    "PYTHONPATH": str(ROOT)})
    assert [line for line in result.stdout.splitlines() if line.startswith("exit")] == ["exit 2", "exit 0"], (
        result.stdout[-2000:] + result.stderr[-2000:])
    refusals = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert refusals == [
        'error: publish\'s default exports="auto" (a serving SavedModel for a task, TF-Hub modules for an '
        "encoder) needs TensorFlow, which is not installed: pip install tensorflow tensorflow-text (training "
        "and presets work without it). To publish the preset and its model card alone: exports=() "
        "(--exports=none)."]
    assert not (tmp_path / "published_auto").exists()
    card = (output / "README.md").read_text(encoding="utf-8")
    assert "Keras backend jax" in card and "TensorFlow " not in card.split("Published with", 1)[1].split("\n")[0]
    assert (output / "labels.txt").is_file() and not (output / "serving").exists()
