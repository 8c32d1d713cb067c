"""The pipelines' `jit_compile` default follows the backend: XLA on
TensorFlow and JAX, off on PyTorch, where True means `torch.compile` (the
`pretrain` CLI's 40-step tiny run on this CPU: 103 s with it, 8 s without)."""

import os
import pathlib
import subprocess
import sys

import pytest

from keras_albert.models.jit_default import default_pretraining_jit_compile
from keras_albert.models.jit_default import pretraining_jit_compile
from keras_albert.pipelines.distillation_settings import DistillationSettings
from keras_albert.pipelines.pretraining_settings import PretrainingSettings

ROOT = pathlib.Path(__file__).resolve().parents[2]
JIT_DEFAULT = "keras_albert/models/jit_default.py"


@pytest.mark.parametrize("setting, expected", [(True, True), (False, False), (1, True), (0, False)])
def test_an_explicit_setting_is_kept(setting, expected):
    assert pretraining_jit_compile(setting) is expected


def test_unset_reads_the_backends_default():
    assert PretrainingSettings(corpus=["c"], output="o").jit_compile is None
    assert DistillationSettings(teacher="t", student_config={}, corpus=["c"], output="o").jit_compile is None
    assert pretraining_jit_compile(None) is default_pretraining_jit_compile()


@pytest.mark.parametrize("backend, expected", [("tensorflow", True), ("jax", True), ("torch", False)])
def test_default_per_backend(backend, expected):
    # A fresh process per backend (Keras picks it once, at import). The
    # module is loaded from its file: it imports only Keras, and the package
    # import (keras_albert's API, keras-hub) would add seconds per process.
    code = ("import keras; from tests.scripts import load_script; "
            f"module = load_script({JIT_DEFAULT!r}); "
            "print(keras.config.backend(), module.pretraining_jit_compile(None))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env=dict(os.environ, KERAS_BACKEND=backend), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == f"{backend} {expected}"
