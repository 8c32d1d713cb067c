"""The code base is clean under ruff (configured in pyproject.toml).

ruff is in the `test` extra: a missing ruff fails this test.
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PATHS = ["keras_albert", "tests", "benchmarks", "examples", "tools"]


def test_ruff_is_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *PATHS],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
