"""The tests of what a machine without TensorFlow answers, run with it blocked.

They skip in this venv (TensorFlow is installed), so `make test` runs them
here in a child pytest where `tests.tensorflow_blocked` hides TensorFlow.
"""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = ["tests/convert/test_tf1_checkpoint.py", "tests/cli/test_publish_command.py"]


@pytest.mark.large
def test_refusals_pass_with_tensorflow_blocked():
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.tensorflow_blocked",
         "-k", "without_tensorflow", *FILES],
        cwd=ROOT, env=dict(os.environ, KERAS_BACKEND="jax"), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout
