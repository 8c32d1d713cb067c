"""Weight initialisation shared by every ALBERT layer."""

import keras


def albert_kernel_initializer(stddev=0.02):
    """Truncated normal with ALBERT's `initializer_range` (0.02)."""
    return keras.initializers.TruncatedNormal(stddev=stddev)
