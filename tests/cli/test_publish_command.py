"""`python -m keras_albert publish`: the directory and card from the command
line, label names from a flag or a file, bad input in one line, and an
upload failure that names the cause and keeps the directory.

Publishing is TensorFlow's (keras_albert.export): its cases skip without
it, where flag errors still answer and a publish says in one line what to
install:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_publish_command.py
"""

import json
import pathlib

import pytest
from huggingface_hub import ModelCard

from keras_albert.cli.main import main
from keras_albert.utils.backend import tensorflow_available

needs_tensorflow = pytest.mark.skipif(not tensorflow_available(), reason="publishing is TensorFlow's")

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"

SUPERSENSE = "albert_tiny_en_student_supersense"


@needs_tensorflow
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


@needs_tensorflow
def test_label_names_from_a_file_must_match_the_saved_ones(tmp_path, capsys):
    names = tmp_path / "labels.txt"
    names.write_text("a\nb\n", encoding="utf-8")
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={tmp_path / 'o'}", "--exports=none",
                 f"--label_names_file={names}"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: ")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("arguments, message", [
    pytest.param(["--handle=s3://bucket/model"], "unknown scheme", marks=needs_tensorflow),
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


@needs_tensorflow
def test_offline_upload_is_one_line_and_keeps_the_directory(tmp_path, monkeypatch, capsys):
    from keras_albert.export import hub_upload

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


@pytest.mark.skipif(tensorflow_available(), reason="what a machine without TensorFlow answers")
def test_without_tensorflow_publish_says_what_to_install(tmp_path, capsys):
    output = tmp_path / "published"
    assert main(["publish", f"--preset={SUPERSENSE}", f"--output={output}", "--exports=none"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert "needs TensorFlow, which is not installed: pip install tensorflow" in err[0]
    assert not output.exists()
