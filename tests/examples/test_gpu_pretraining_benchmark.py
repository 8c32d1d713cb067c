"""benchmarks/gpu_pretraining.py runs its three sides on the real input
pipeline and records what the README's rules ask (here on the CPU, tiny)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_records_every_side_device_and_versions(tmp_path):
    output = tmp_path / "gpu.json"
    result = subprocess.run(
        [sys.executable, "benchmarks/gpu_pretraining.py", "--shapes", "tiny", "--batch", "8",
         "--steps", "2", "--rounds", "1", "--instances", "32", "--output", str(output)],
        cwd=ROOT, env=dict(os.environ, KERAS_BACKEND="jax"), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(output.read_text())
    row = record["shapes"]["tiny"]
    for side in ("ours", "keras_hub", "hf"):
        assert row[side]["tokens_per_second"]["median"] > 0
    assert row["ours_over_keras_hub"] > 0 and row["ours_over_hf"] > 0
    assert row["hf"]["hf_setting"] == "eager"  # no CUDA here: no torch.compile
    assert record["device"]["platform"] == "cpu"
    assert record["versions"]["jax"] and record["versions"]["keras_hub"]
    assert record["command"].startswith("python benchmarks/gpu_pretraining.py --shapes tiny")
    assert str(ROOT) not in output.read_text()


def test_refuses_other_backends():
    result = subprocess.run(
        [sys.executable, "benchmarks/gpu_pretraining.py", "--steps", "1"],
        cwd=ROOT, env=dict(os.environ, KERAS_BACKEND="torch"), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 2
    assert "run with KERAS_BACKEND=jax (this process: torch)" in result.stderr
