"""MobileBERT's NoNorm: an element-wise scale and shift, no statistics."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_albert")
class NoNorm(keras.layers.Layer):
    """`x * gamma + beta` over the last axis (MobileBERT's `NoNorm`).

    A drop-in for LayerNorm where latency matters: no mean, variance or
    square root, so it folds into the neighbouring matmuls on device. It
    has LayerNorm's weights (`gamma` ones, `beta` zeros, width of the last
    axis), so parameter counts are the same.

    Example:
    >>> tuple(NoNorm()(np.ones((2, 3, 4), "float32")).shape)
    (2, 3, 4)
    """

    def build(self, input_shape):
        width = input_shape[-1]
        self.gamma = self.add_weight(name="gamma", shape=(width,), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(width,), initializer="zeros")
        self.built = True

    def call(self, inputs):
        gamma = ops.cast(self.gamma, inputs.dtype)
        beta = ops.cast(self.beta, inputs.dtype)
        return inputs * gamma + beta

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)
