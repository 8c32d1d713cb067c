"""`make demo`'s script at a small setting: every step runs and the report holds every row."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tests.scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def quickstart():
    return load_script("examples/quickstart.py")


def run_quickstart(quickstart, monkeypatch, capsys, *flags):
    """The script's main() in this process (what the report says does not
    depend on the process: the TensorFlow import is all a subprocess adds)."""
    monkeypatch.setattr(sys, "argv", ["quickstart.py", *flags])
    quickstart.main()
    return capsys.readouterr().out


def run_quickstart_as_make_demo_does(*flags):
    """`python examples/quickstart.py FLAGS` in a fresh process, as `make
    demo` runs it; its stdout."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py"), *flags],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


# 100 glosses: 90 fit after the tenth carved out, so a batch of 128 makes each
# epoch (and the head warm start's dropout pass) one step of one traced shape.
SMALL = ("--train_examples", "100", "--test_examples", "40", "--epochs", "1", "--batch_size", "128")


@pytest.mark.large
def test_quickstart_small_run_reports_tfidf_beside_the_model_on_the_test_split(tmp_path):
    # The main job, in its own process as a user runs it.
    stdout = run_quickstart_as_make_demo_does("--output", str(tmp_path), *SMALL)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["test_examples"] == 40 and report["train_examples"] == 100
    assert report["task"].endswith("test split")
    for name in ("accuracy_pretrained", "accuracy_tfidf_linear_svm", "accuracy_majority_class"):
        assert 0 <= report[name] <= 1
    # The main job leaves the from-scratch model to --full.
    assert report["accuracy_from_scratch"] is None and "from scratch" not in stdout
    assert "TF-IDF + linear SVM" in stdout
    assert len(report["predictions_from_saved_model"]) == 4
    # Names from the SavedModel's `labels` output: the classifier carries them.
    assert all(row["supersense"].startswith("noun.") for row in report["predictions_from_saved_model"])
    # Each new text carries the supersense a reader would give it, and the
    # report says whether the model agreed.
    for row in report["predictions_from_saved_model"]:
        assert row["expected"].startswith("noun.")
        assert row["correct"] == (row["supersense"] == row["expected"])
    assert "right):" in stdout


@pytest.mark.large
def test_quickstart_full_adds_the_from_scratch_model(tmp_path, quickstart, monkeypatch, capsys):
    stdout = run_quickstart(quickstart, monkeypatch, capsys, "--output", str(tmp_path), *SMALL, "--full")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["train_examples"] == 100
    assert 0 <= report["accuracy_from_scratch"] <= 1
    assert "same model from scratch" in stdout


@pytest.mark.large
def test_quickstart_help_is_fast_and_lists_the_flags(quickstart, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["quickstart.py", "--help"])
    with pytest.raises(SystemExit) as exited:
        quickstart.main()
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--full", "--train_examples", "--test_examples", "--epochs", "--learning_rate"):
        assert flag in out
