"""A resumed `resumable_fit` equals an uninterrupted one on JAX and PyTorch
too, TensorFlow blocked: tests/training/test_resumable_fit.py run there.

On PyTorch, Keras's dropout without a seed draws from torch's own random
state, and starting `fit` draws from it as well (its data loader's seed):
the NumPy checkpoints keep that state and set it at the first resumed step.
Without that, the resumed weights differed by up to 0.04 (measured)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.large
@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_resumable_fit_tests_pass_on(backend):
    env = dict(os.environ, KERAS_BACKEND=backend)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.tensorflow_blocked",
         "tests/training/test_resumable_fit.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "6 passed" in result.stdout
