"""Keras's global dtype policy for training, on every backend."""

import keras

PRECISION_POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")


def configure_precision(policy="float32"):
    """Sets Keras's global dtype policy for what is built afterwards.

    `"mixed_bfloat16"` is the TPU choice (and works on CPU/GPU); variables
    stay float32 and computations run in bfloat16. `"mixed_float16"` is for
    GPUs; `model.compile` then wraps the optimizer in a
    `keras.optimizers.LossScaleOptimizer` itself. Call it before building
    the model.

    Args:
        policy: one of `PRECISION_POLICIES`.

    Returns:
        the global `keras.DTypePolicy` now in force.

    Example:
    >>> from keras_albert.training import configure_precision
    >>> configure_precision("mixed_bfloat16").compute_dtype
    'bfloat16'
    >>> configure_precision("float32").name
    'float32'
    """
    if policy not in PRECISION_POLICIES:
        raise ValueError(
            f"`policy` (--precision) must be one of {PRECISION_POLICIES}. "
            f"Received: policy={policy!r}"
        )
    keras.mixed_precision.set_global_policy(policy)
    return keras.mixed_precision.global_policy()
