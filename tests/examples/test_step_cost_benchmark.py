"""benchmarks/step_cost.py compiles both sides' loss-and-gradients program
and records its cost (here on the CPU, tiny): the same model maths on
both sides, ours a little more for its SOP head."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*arguments, backend="jax"):
    return subprocess.run(
        [sys.executable, "benchmarks/step_cost.py", *arguments],
        cwd=ROOT, env=dict(os.environ, KERAS_BACKEND=backend), capture_output=True, text=True, timeout=900,
    )


def test_records_the_cost_of_both_sides(tmp_path):
    output = tmp_path / "cost.json"
    result = run("--shapes", "tiny", "--batch", "2", "--output", str(output))
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(output.read_text())
    row = record["shapes"]["tiny"]
    for side in ("ours", "keras_hub"):
        assert row[side]["gflops"] > 0 and row[side]["bytes_accessed_mb"] > 0 and row[side]["fusions"] > 0
    # Same encoder and MLM head; the SOP head adds a little.
    assert row["ours"]["parameters"] > row["keras_hub"]["parameters"]
    assert 1.0 <= row["ours_over_keras_hub"]["gflops"] < 1.02
    assert record["device"]["platform"] == "cpu" and record["batch"] == 2
    assert record["command"].startswith("python benchmarks/step_cost.py --shapes tiny")
    assert str(ROOT) not in output.read_text()


def test_refuses_bad_arguments_before_building_anything(tmp_path):
    # Both refusals in one process under another backend (a process start
    # is most of each check's cost): an unknown shape is named before the
    # backend is looked at, and then the backend is refused.
    runs = [["--shapes", "huge", "--output", str(tmp_path / "x.json")], ["--output", str(tmp_path / "x.json")]]
    code = ("import sys\n"
            "sys.path.insert(0, 'benchmarks')\n"
            "import step_cost\n"
            f"for argv in {runs!r}:\n"
            "    try:\n"
            "        step_cost.main(argv)\n"
            "    except SystemExit as exit:\n"
            "        print(f'=== exit status {exit.code}', file=sys.stderr, flush=True)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, KERAS_BACKEND="torch"),
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    shapes, backend, rest = result.stderr.split("=== exit status ")
    assert "--shapes: unknown ['huge']" in shapes and "run with KERAS_BACKEND" not in shapes
    assert backend.startswith("2\n") and "run with KERAS_BACKEND=jax (this process: torch)" in backend
    assert rest == "2\n"
    assert not (tmp_path / "x.json").exists()
