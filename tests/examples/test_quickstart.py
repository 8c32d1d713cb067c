"""`make demo`'s script at a small setting: every step runs and the report holds every row."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.large
def test_quickstart_small_run_reports_tfidf_beside_the_models(tmp_path):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--output", str(tmp_path),
         "--train_examples", "300", "--test_examples", "200", "--epochs", "1"],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["test_examples"] == 200 and report["train_examples"] == 300
    for name in ("accuracy_pretrained", "accuracy_from_scratch", "accuracy_tfidf_linear_svm"):
        assert 0 <= report[name] <= 1
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
def test_quickstart_help_is_fast_and_lists_the_flags():
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), "--help"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0
    for flag in ("--train_examples", "--test_examples", "--epochs", "--learning_rate"):
        assert flag in result.stdout
