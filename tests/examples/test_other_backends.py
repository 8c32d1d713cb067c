"""examples/other_backends.py fine-tunes the bundled preset on JAX with
TensorFlow unimportable, and learns (beats the majority class)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN_WITHOUT_TENSORFLOW = (
    "import sys, runpy; sys.modules['tensorflow'] = None; sys.modules['tensorflow_text'] = None; "
    "sys.argv = ['other_backends.py', '--train_size', '256', '--eval_size', '200', '--epochs', '2']; "
    "runpy.run_path('examples/other_backends.py', run_name='__main__')"
)


def test_fine_tunes_on_jax_without_tensorflow():
    result = subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_TENSORFLOW], cwd=ROOT,
        env=dict(os.environ, KERAS_BACKEND="jax"), capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    line = re.search(r"backend=(\w+) tensorflow_imported=(\w+) accuracy=([\d.]+)", result.stdout)
    assert line, result.stdout[-2000:]
    assert line.group(1) == "jax" and line.group(2) == "False"
    # Majority class on the noun validation glosses: 14.9 %.
    assert float(line.group(3)) > 0.2
