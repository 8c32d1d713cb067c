"""configure_precision: Keras' global dtype policy, on every backend.

TensorFlow not needed:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/training/test_precision.py
"""

import keras
import pytest

from keras_albert.training import PRECISION_POLICIES
from keras_albert.training import configure_precision


def test_configure_precision():
    try:
        policy = configure_precision("mixed_bfloat16")
        assert (policy.compute_dtype, policy.variable_dtype) == ("bfloat16", "float32")
        layer = keras.layers.Dense(2)
        layer.build((None, 3))
        assert layer.compute_dtype == "bfloat16"
        assert layer.kernel.dtype == "float32"
        assert configure_precision("mixed_float16").compute_dtype == "float16"
        with pytest.raises(ValueError) as info:
            configure_precision("bf16")
        assert "policy='bf16'" in str(info.value)
        for name in PRECISION_POLICIES:
            assert repr(name) in str(info.value)
    finally:
        configure_precision("float32")
    assert keras.mixed_precision.global_policy().name == "float32"
