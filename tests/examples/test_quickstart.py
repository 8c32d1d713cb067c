"""`make demo`'s script at a small setting: every step runs and the report holds every row."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_quickstart(output, *flags):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--output", str(output),
         "--test_examples", "200", "--epochs", "1", *flags],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result, json.loads((output / "report.json").read_text())


@pytest.mark.large
def test_quickstart_small_run_reports_tfidf_beside_the_model_on_the_test_split(tmp_path):
    result, report = run_quickstart(tmp_path, "--train_examples", "300")
    assert report["test_examples"] == 200 and report["train_examples"] == 300
    assert report["task"].endswith("test split")
    for name in ("accuracy_pretrained", "accuracy_tfidf_linear_svm", "accuracy_majority_class"):
        assert 0 <= report[name] <= 1
    # The main job leaves the from-scratch model to --full.
    assert report["accuracy_from_scratch"] is None and "from scratch" not in result.stdout
    assert "TF-IDF + linear SVM" in result.stdout
    assert len(report["predictions_from_saved_model"]) == 4
    # Names from the SavedModel's `labels` output: the classifier carries them.
    assert all(row["supersense"].startswith("noun.") for row in report["predictions_from_saved_model"])
    # Each new text carries the supersense a reader would give it, and the
    # report says whether the model agreed.
    for row in report["predictions_from_saved_model"]:
        assert row["expected"].startswith("noun.")
        assert row["correct"] == (row["supersense"] == row["expected"])
    assert "right):" in result.stdout


@pytest.mark.large
def test_quickstart_full_adds_the_from_scratch_model(tmp_path):
    result, report = run_quickstart(tmp_path, "--full", "--train_examples", "100")
    assert report["train_examples"] == 100
    assert 0 <= report["accuracy_from_scratch"] <= 1
    assert "same model from scratch" in result.stdout


@pytest.mark.large
def test_quickstart_help_is_fast_and_lists_the_flags():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--help"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0
    for flag in ("--full", "--train_examples", "--test_examples", "--epochs", "--learning_rate"):
        assert flag in result.stdout
