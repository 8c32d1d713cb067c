"""Multi-head attention whose queries/keys and values come from two inputs."""

import math

import keras
from keras import ops

from keras_albert.layers.initializers import albert_dense
from keras_albert.layers.self_attention import masked_softmax
from keras_albert.utils.validation import check_divisible
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate


def _probabilities(query, key, num_heads, padding_mask):
    """Softmax attention [batch, heads, query, key] in float32, with the
    scaling and padding rule of `AlbertSelfAttention`.

    `query` and `key` are [batch, seq, heads * head_dim].
    """
    shape = ops.shape(query)
    batch, length = shape[0], shape[1]
    head_dim = query.shape[-1] // num_heads
    query = ops.reshape(query, (batch, length, num_heads, head_dim))
    key = ops.reshape(key, (batch, ops.shape(key)[1], num_heads, head_dim))
    query = query * ops.cast(1.0 / math.sqrt(head_dim), query.dtype)
    scores = ops.cast(ops.einsum("bqnd,bknd->bnqk", query, key), "float32")
    return masked_softmax(scores, padding_mask)


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertBottleneckAttention(keras.layers.Layer):
    """MobileBERT's attention: Q and K from one tensor, V from another.

    In a bottleneck block the queries and keys read the narrow (bottleneck)
    view of the block input while the values read the full-width input, as
    MobileBERT does; every projection maps to `attention_dim`, the
    bottleneck width, so the attention itself runs narrow.

    Args:
        num_heads: int, divides `attention_dim`.
        attention_dim: int, width of queries, keys, values and the output.
        attention_dropout: float, dropout on the probabilities.
        initializer_range: float.

    Example:
    >>> layer = AlbertBottleneckAttention(num_heads=2, attention_dim=4)
    >>> tuple(layer(np.ones((1, 3, 4), "float32"), np.ones((1, 3, 8), "float32")).shape)
    (1, 3, 4)
    """

    def __init__(self, num_heads, attention_dim, attention_dropout=0.0,
                 initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("attention_dim", attention_dim)
        check_divisible("attention_dim", attention_dim, "num_heads", num_heads)
        check_rate("attention_dropout", attention_dropout)
        self.num_heads = num_heads
        self.attention_dim = attention_dim
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range

        def dense(name):
            return albert_dense(attention_dim, initializer_range, self.dtype_policy, name)

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output_dense")
        self.dropout_layer = keras.layers.Dropout(
            attention_dropout, dtype=self.dtype_policy, name="dropout"
        )

    def build(self, query_key_input_shape, value_input_shape, padding_mask_shape=None):
        self.query.build(query_key_input_shape)
        self.key.build(query_key_input_shape)
        self.value.build(value_input_shape)
        self.output_dense.build(tuple(query_key_input_shape[:-1]) + (self.attention_dim,))
        self.built = True

    def call(self, query_key_input, value_input, padding_mask=None, training=False,
             return_attention=False):
        probabilities = _probabilities(
            self.query(query_key_input),
            self.key(query_key_input),
            self.num_heads,
            padding_mask,
        )
        dropped = self.dropout_layer(
            ops.cast(probabilities, self.compute_dtype), training=training
        )
        shape = ops.shape(value_input)
        head_dim = self.attention_dim // self.num_heads
        value = ops.reshape(
            self.value(value_input), (shape[0], shape[1], self.num_heads, head_dim)
        )
        context = ops.einsum("bnqk,bknd->bqnd", dropped, value)
        context = ops.reshape(context, (shape[0], shape[1], self.attention_dim))
        output = self.output_dense(context)
        if return_attention:
            return output, probabilities
        return output

    def compute_output_shape(self, query_key_input_shape, value_input_shape,
                             padding_mask_shape=None):
        return tuple(query_key_input_shape[:-1]) + (self.attention_dim,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "attention_dim": self.attention_dim,
            "attention_dropout": self.attention_dropout,
            "initializer_range": self.initializer_range,
        })
        return config
