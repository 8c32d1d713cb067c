"""Weight initialisation shared by every ALBERT layer."""

import keras


def albert_kernel_initializer(stddev=0.02):
    """Truncated normal with ALBERT's `initializer_range` (0.02)."""
    return keras.initializers.TruncatedNormal(stddev=stddev)


def albert_dense(units, initializer_range, dtype, name, **kwargs):
    """A Dense layer initialised as every ALBERT projection is."""
    return keras.layers.Dense(
        units,
        kernel_initializer=albert_kernel_initializer(initializer_range),
        dtype=dtype,
        name=name,
        **kwargs,
    )
