"""Normalization layers by name: LayerNorm (ALBERT) or NoNorm (MobileBERT)."""

import keras

from keras_albert.layers.no_norm import NoNorm
from keras_albert.utils.validation import check_choice

NORMALIZATIONS = ("layer_norm", "no_norm")


def check_normalization(normalization):
    check_choice("normalization", normalization, NORMALIZATIONS)


def make_normalization(normalization, epsilon, dtype, name):
    """A LayerNormalization (`"layer_norm"`) or a `NoNorm` (`"no_norm"`)."""
    check_normalization(normalization)
    if normalization == "no_norm":
        return NoNorm(dtype=dtype, name=name)
    return keras.layers.LayerNormalization(epsilon=epsilon, dtype=dtype, name=name)
