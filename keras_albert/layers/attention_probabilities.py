"""Attention probabilities, computed the way ALBERT's attention layers do.

Distillation compares teacher and student attention maps. Full attention
layers return only their output, so the probabilities are recomputed here
from the layer's own query and key projections: same scaling, float32
softmax and padding penalty as `AlbertSelfAttention`, so they are the ones
that layer used.
"""

import math

from keras import ops

from keras_albert.layers.self_attention import masked_softmax


def scaled_dot_product_probabilities(query, key, num_heads, padding_mask=None):
    """Softmax attention [batch, heads, query, key] in float32.

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


def self_attention_probabilities(attention_layer, hidden_states, padding_mask=None):
    """The probabilities an `AlbertSelfAttention` layer uses on `hidden_states`."""
    if not (hasattr(attention_layer, "query") and hasattr(attention_layer, "key")):
        raise ValueError(
            "Attention probabilities need full attention (`attention='full'`) "
            "with `query`/`key` projections. Received: "
            f"{type(attention_layer).__name__}"
        )
    return scaled_dot_product_probabilities(
        attention_layer.query(hidden_states),
        attention_layer.key(hidden_states),
        attention_layer.num_heads,
        padding_mask,
    )
