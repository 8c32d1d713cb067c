"""benchmarks/transfer.py at a small setting: every row, the comparison and the JSON
(with the mean-pooling head, which the run records)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.large
def test_transfer_benchmark_small_run(tmp_path):
    output = tmp_path / "transfer.json"
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "transfer.py"), "--train_sizes", "200",
         "--max_test", "100", "--epochs", "1", "--pooling", "mean", "--output", str(output)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(output.read_text())
    assert results["pooling"] == "mean"
    (size,) = results["sizes"]
    assert size["train_examples"] == 200 and size["test_examples"] == 100
    assert set(size["rows"]) == {"tfidf", "pretrained", "scratch"}
    for row in size["rows"].values():
        assert 0 <= row["accuracy"] <= 1 and 0 <= row["macro_f1"] <= 1
    tfidf, pretrained = size["rows"]["tfidf"], size["rows"]["pretrained"]
    assert size["comparison"]["pretrained_minus_tfidf_points"] == pytest.approx(
        100 * (pretrained["accuracy"] - tfidf["accuracy"]), abs=0.01)
    assert "pretrained - tfidf" in result.stdout
