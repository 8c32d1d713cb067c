"""`python -m keras_albert predict`: rows on stdout or in a file, progress
apart from them, and bad input refused in one line with nothing written.

Runs on every backend; a serving SavedModel runs on KERAS_BACKEND=tensorflow
only (elsewhere `--saved_model` is refused in one line):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_predict_command.py
"""

import io
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_albert.cli.main import main
from keras_albert.pipelines.predicting import classify
from keras_albert.pipelines.predicting import load_classifier
from tests.pipelines.tiny_classifier import LABELS
from tests.pipelines.tiny_classifier import animal_texts
from tests.pipelines.tiny_classifier import tiny_classifier

ROOT = __file__.rsplit("/tests/", 1)[0]
ON_TENSORFLOW = keras.config.backend() == "tensorflow"


@pytest.fixture(scope="module")
def trained(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    return tiny_classifier(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)


@pytest.fixture
def texts_file(tmp_path):
    texts, _ = animal_texts(5, seed=3)
    (tmp_path / "texts.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    return tmp_path / "texts.txt"


def test_rows_on_stdout_progress_on_stderr(trained, texts_file, capsys):
    assert main(["predict", f"--preset={trained / 'preset'}", f"--texts={texts_file}"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    texts = texts_file.read_text(encoding="utf-8").split("\n")[:-1]
    assert [row["text"] for row in rows] == texts
    assert all(row["label"] in LABELS and set(row["probabilities"]) == set(LABELS) for row in rows)
    assert "Classifying 5 texts in batches of 32" in err


@pytest.mark.skipif(not ON_TENSORFLOW, reason="a serving SavedModel runs on KERAS_BACKEND=tensorflow")
def test_saved_model_from_standard_input_to_a_tsv_file(trained, tmp_path, monkeypatch, capsys):
    texts, _ = animal_texts(6, seed=4)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("\n".join(texts).encode("utf-8"))))
    output = tmp_path / "rows.tsv"
    assert main(["predict", f"--saved_model={trained / 'serving'}", "--texts=-", f"--output={output}"]) == 0
    lines = output.read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == ["text", "label", "probability"] + [f"p({name})" for name in LABELS]
    expected = classify(load_classifier(preset=str(trained / "preset")), texts)
    got = np.asarray([[float(v) for v in line.split("\t")[3:]] for line in lines[1:]])
    np.testing.assert_allclose(got, expected, atol=2e-6)  # 6 decimals written
    assert "Classifying 6 texts" in capsys.readouterr().out  # rows in a file: progress on stdout


def test_an_existing_output_is_replaced_only_with_overwrite(trained, texts_file, tmp_path, capsys):
    output = tmp_path / "rows.jsonl"
    output.write_text("mine\n")
    arguments = ["predict", f"--preset={trained / 'preset'}", f"--texts={texts_file}", f"--output={output}"]
    assert main(arguments) == 2
    assert capsys.readouterr().err == (
        f"error: `--output` {str(output)!r} exists; pass --overwrite to replace it.\n")
    assert output.read_text() == "mine\n"
    assert main(arguments + ["--overwrite"]) == 0
    assert len(output.read_text().splitlines()) == 5


def _bad_inputs(trained, tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "table.tsv").write_text("sentence\tlabel\na cat\tcat\n")
    preset, serving = f"--preset={trained / 'preset'}", f"--saved_model={trained / 'serving'}"
    texts = f"--texts={tmp_path / 'table.tsv'}"
    return [
        ([preset, f"--texts={tmp_path / 'missing.txt'}"], "`--texts` '{tmp}/missing.txt' does not exist."),
        ([preset, f"--texts={tmp_path / 'empty.txt'}"], "`--texts` '{tmp}/empty.txt' is empty"),
        ([preset, serving, texts], "Pass exactly one of `--preset`"),
        ([texts], "Pass exactly one of `--preset`"),
        ([preset, texts], "'{tmp}/table.tsv' line 1: missing columns ['text']; the header has ['sentence', 'label']."),
        (["--preset=albert_tiny_en", texts, "--text_columns=sentence"],
         "'albert_tiny_en' holds AlbertPretrainer (its task.json); predict and evaluate take the task presets"),
        ([f"--saved_model={tmp_path}", texts],
         "`--saved_model` '{tmp}' holds no saved_model.pb" if ON_TENSORFLOW else
         f"`--saved_model` runs with TensorFlow only (KERAS_BACKEND=tensorflow); this run is on "
         f"KERAS_BACKEND={keras.config.backend()}"),
        ([preset, texts, "--batch_size=0"], "`--batch_size` must be a positive integer. Received: 0"),
    ]


def test_bad_input_is_one_line_and_writes_nothing(trained, tmp_path, capsys):
    output = tmp_path / "out" / "rows.jsonl"
    for arguments, message in _bad_inputs(trained, tmp_path):
        assert main(["predict", *arguments, f"--output={output}"]) == 2, arguments
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert message.format(tmp=tmp_path) in err, (arguments, err)
        assert not output.parent.exists()


def _run(*arguments, backend="tensorflow", block_tensorflow=False):
    # Made unimportable, as on a machine without it.
    blocked = "sys.modules['tensorflow'] = sys.modules['tensorflow_text'] = None; " if block_tensorflow else ""
    code = f"import sys; {blocked}from keras_albert.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True, cwd=ROOT,
                          timeout=300, env=dict(os.environ, KERAS_BACKEND=backend))


@pytest.mark.large
def test_a_missing_file_is_refused_before_tensorflow_is_imported(tmp_path):
    result = _run("predict", "--preset=albert_tiny_en_student_supersense", f"--texts={tmp_path / 'no.txt'}")
    assert result.returncode == 2
    assert result.stderr == f"error: `--texts` {str(tmp_path / 'no.txt')!r} does not exist.\n"
    assert "Importing" not in result.stdout


@pytest.mark.large
def test_preset_on_jax_without_tensorflow_equals_tensorflow(trained, texts_file, tmp_path):
    result = _run("predict", f"--preset={trained / 'preset'}", f"--texts={texts_file}",
                  backend="jax", block_tensorflow=True)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    texts = [row["text"] for row in rows]
    expected = classify(load_classifier(preset=str(trained / "preset")), texts)
    got = np.asarray([[row["probabilities"][name] for name in LABELS] for row in rows])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    refused = _run("predict", f"--saved_model={trained / 'serving'}", f"--texts={texts_file}",
                   backend="jax", block_tensorflow=True)
    assert refused.returncode == 2 and refused.stderr.startswith(
        "error: `--saved_model` runs with TensorFlow only (KERAS_BACKEND=tensorflow); this run is on "
        "KERAS_BACKEND=jax: pass the classifier as `--preset` instead.")
    assert refused.stderr.count("\n") == 1
