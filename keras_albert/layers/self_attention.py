"""Full multi-head self-attention, the default ALBERT attention layer."""

import math

import keras
from keras import ops

from keras_albert.layers.initializers import albert_dense
from keras_albert.utils.validation import check_divisible
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate

# Added to the scores of padded keys. Scores are always float32 here (see
# `call`), so this large value is safe even when the model runs in float16 or
# bfloat16, where -1e9 would overflow.
MASK_PENALTY = -1e9
# Padded keys score this far below the lowest score of their row: a softmax
# weight under e^-20 of any real key's (below float32 resolution), while the
# scores' range stays narrow. A -1e9 penalty stretches the range that full
# int8 TFLite calibrates on so far that every real score rounds to the same
# value (17 % argmax agreement on a trained classifier).
MASK_MARGIN = 20.0


def masked_softmax(scores, padding_mask):
    """Softmax of float32 scores [batch, heads, query, key] over real keys.

    Padded keys are pushed `MASK_MARGIN` below each row's minimum, then
    their (already negligible) weight is set to exactly zero.
    """
    if padding_mask is None:
        return ops.softmax(scores, axis=-1)
    keep = ops.cast(padding_mask, "bool")[:, None, None, :]
    floor = ops.min(scores, axis=-1, keepdims=True) - MASK_MARGIN
    probabilities = ops.softmax(ops.where(keep, scores, floor), axis=-1)
    return ops.where(keep, probabilities, ops.zeros_like(probabilities))


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertSelfAttention(keras.layers.Layer):
    """Multi-head scaled dot-product self-attention with an output projection.

    The interface every ALBERT attention layer shares (so LSH attention drops
    in): `call(hidden_states, padding_mask=None, training=False)` with
    `hidden_states` [batch, seq, hidden] and `padding_mask` [batch, seq]
    (1/True for real tokens) returns [batch, seq, hidden]. With
    `return_attention=True` (this layer only) it also returns the attention
    probabilities [batch, heads, seq, seq] (float32, before dropout). The output
    projection (`attention_1/output/dense` in Google's checkpoints) is part of
    the layer; dropout, residual and LayerNorm belong to the caller.

    Args:
        num_heads: int.
        hidden_dim: int, divisible by `num_heads`.
        attention_dropout: float, dropout on the attention probabilities.
        initializer_range: float.

    Example:
    >>> layer = AlbertSelfAttention(num_heads=2, hidden_dim=8)
    >>> tuple(layer(np.ones((1, 4, 8), "float32")).shape)
    (1, 4, 8)
    """

    def __init__(
        self,
        num_heads,
        hidden_dim,
        attention_dropout=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("hidden_dim", hidden_dim)
        check_divisible("hidden_dim", hidden_dim, "num_heads", num_heads)
        check_rate("attention_dropout", attention_dropout)
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.head_dim = hidden_dim // num_heads
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range

        def dense(name):
            return albert_dense(
                hidden_dim, initializer_range, self.dtype_policy, name
            )

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output_dense")
        self.dropout_layer = keras.layers.Dropout(
            attention_dropout, dtype=self.dtype_policy, name="dropout"
        )

    def build(self, hidden_states_shape, padding_mask_shape=None):
        for layer in (self.query, self.key, self.value, self.output_dense):
            layer.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, padding_mask=None, training=False, return_attention=False):
        shape = ops.shape(hidden_states)
        batch, length = shape[0], shape[1]
        heads_shape = (batch, length, self.num_heads, self.head_dim)
        # Three GEMMs, not one over concatenated kernels: under XLA the
        # per-call concatenation and split cost more than they save
        # (benchmarks/suite.py row (c): 0.98x -> 1.04x keras-hub).
        query, key, value = (
            ops.reshape(projection(hidden_states), heads_shape)
            for projection in (self.query, self.key, self.value)
        )

        if self._fused(training, return_attention):
            context = ops.dot_product_attention(
                query, key, value,
                mask=None if padding_mask is None else ops.cast(padding_mask, "bool")[:, None, None, :],
                scale=1.0 / math.sqrt(self.head_dim),
            )
            context = ops.reshape(context, (batch, length, self.hidden_dim))
            return self.output_dense(context)

        query = query * ops.cast(1.0 / math.sqrt(self.head_dim), query.dtype)
        scores = ops.einsum("bqnd,bknd->bnqk", query, key)
        # Softmax in float32 for stability under mixed precision.
        scores = ops.cast(scores, "float32")
        probabilities = masked_softmax(scores, padding_mask)
        dropped = self.dropout_layer(
            ops.cast(probabilities, self.compute_dtype), training=training
        )

        context = ops.einsum("bnqk,bknd->bqnd", dropped, value)
        context = ops.reshape(context, (batch, length, self.hidden_dim))
        output = self.output_dense(context)
        if return_attention:
            # Before dropout and in float32: what distillation compares.
            return output, probabilities
        return output

    def _fused(self, training, return_attention):
        """Whether `ops.dot_product_attention` computes this call.

        On JAX and PyTorch it does whenever no probabilities are asked for
        and no attention dropout applies (it has none): cuDNN's flash
        attention on GPUs, XLA's or PyTorch's fused kernels elsewhere, the
        same outputs (tests/backends). TensorFlow keeps the explicit softmax:
        exports are made there, and full int8 TFLite needs `masked_softmax`'s
        narrow score range, where the fused op's large negative mask value
        would swamp the calibration.
        """
        if return_attention or keras.config.backend() == "tensorflow":
            return False
        return not (training and self.attention_dropout)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return tuple(hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "attention_dropout": self.attention_dropout,
                "initializer_range": self.initializer_range,
            }
        )
        return config
