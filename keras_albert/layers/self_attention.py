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
    return softmax_over_kept(scores, ops.cast(padding_mask, "bool")[:, None, None, :])


def softmax_over_kept(scores, keep):
    """`masked_softmax` with any bool `keep` that broadcasts to `scores`
    (padding and causal masks together)."""
    floor = ops.min(scores, axis=-1, keepdims=True) - MASK_MARGIN
    probabilities = ops.softmax(ops.where(keep, scores, floor), axis=-1)
    return ops.where(keep, probabilities, ops.zeros_like(probabilities))


def causal_keep(query_length, key_length, start_index=0):
    """Bool [query, key]: the query at position `start_index + q` sees the
    keys at positions up to its own."""
    query_positions = ops.arange(query_length, dtype="int32") + ops.cast(
        start_index, "int32"
    )
    key_positions = ops.arange(key_length, dtype="int32")
    return key_positions[None, :] <= query_positions[:, None]


def cache_write(cache, new, index):
    """`cache` [batch, max_length, heads, head_dim] with `new` [batch, n,
    heads, head_dim] written at position `index`."""
    if keras.config.backend() == "torch" and not isinstance(index, int) and new.shape[1] == 1:
        # One decoded position at a tensor index: a select over the cache,
        # which torch.compile traces as one graph for every step (a slice
        # update reads the index back as a Python number). XLA updates in
        # place instead, so the other backends keep `slice_update`.
        at_index = ops.arange(ops.shape(cache)[1], dtype="int32") == ops.cast(index, "int32")
        return ops.where(at_index[None, :, None, None], new, cache)
    return ops.slice_update(cache, [0, index, 0, 0], new)


def attention_keep(padding_mask, causal, query_length, key_length, start_index=0):
    """Bool [batch or 1, 1, query, key] of the keys each query may see, or
    None when every key is visible."""
    keep = None
    if padding_mask is not None:
        keep = ops.cast(padding_mask, "bool")[:, None, None, :]
    if causal:
        causal_mask = causal_keep(query_length, key_length, start_index)[None, None]
        keep = causal_mask if keep is None else ops.logical_and(keep, causal_mask)
    return keep


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

    With `causal=True` a position sees only itself and earlier positions
    (GPT-2's decoder), and `call_with_cache` decodes a few new positions
    against cached keys and values of the earlier ones.

    Args:
        num_heads: int.
        hidden_dim: int, divisible by `num_heads`.
        attention_dropout: float, dropout on the attention probabilities.
        initializer_range: float.
        causal: bool, mask later positions (default False: bidirectional).

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
        causal=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(causal, bool):
            raise ValueError(
                f"`causal` must be True or False. Received: causal={causal!r}"
            )
        check_positive_int("num_heads", num_heads)
        check_positive_int("hidden_dim", hidden_dim)
        check_divisible("hidden_dim", hidden_dim, "num_heads", num_heads)
        check_rate("attention_dropout", attention_dropout)
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.head_dim = hidden_dim // num_heads
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range
        self.causal = causal

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
        length = ops.shape(hidden_states)[1]
        query, key, value = self._project(hidden_states)
        keep = attention_keep(padding_mask, self.causal, length, length)
        return self._attend(query, key, value, keep, training, return_attention)

    def call_with_cache(self, hidden_states, cache, cache_update_index, padding_mask=None):
        """Attends the new positions `hidden_states` [batch, new, hidden],
        which start at `cache_update_index`, to every cached position.

        `cache` [batch, 2, max_length, heads, head_dim] holds the keys and
        values of earlier positions; the new ones are written into it at
        `cache_update_index`. `padding_mask` [batch, max_length] (optional)
        masks cached keys. Returns `(output, cache)`. Positions after the
        new ones are masked when the layer is causal, so a cache seeded
        with a whole padded sequence is valid for every prefix of it.
        """
        query, key, value = self._project(hidden_states)
        key_cache = cache_write(cache[:, 0], ops.cast(key, cache.dtype), cache_update_index)
        value_cache = cache_write(cache[:, 1], ops.cast(value, cache.dtype), cache_update_index)
        keep = attention_keep(
            padding_mask,
            self.causal,
            ops.shape(hidden_states)[1],
            ops.shape(cache)[2],
            cache_update_index,
        )
        output = self._attend(query, key_cache, value_cache, keep, False, False)
        return output, ops.stack([key_cache, value_cache], axis=1)

    def _project(self, hidden_states):
        """Queries, keys and values [batch, seq, heads, head_dim]."""
        shape = ops.shape(hidden_states)
        heads_shape = (shape[0], shape[1], self.num_heads, self.head_dim)
        # Three GEMMs, not one over concatenated kernels: under XLA the
        # per-call concatenation and split cost more than they save
        # (benchmarks/suite.py row (c): 0.98x -> 1.04x keras-hub).
        return tuple(
            ops.reshape(projection(hidden_states), heads_shape)
            for projection in (self.query, self.key, self.value)
        )

    def _attend(self, query, key, value, keep, training, return_attention):
        """Attention of `query` over `key`/`value` where `keep` allows it,
        then the output projection."""
        shape = ops.shape(query)
        batch, length = shape[0], shape[1]
        if self._fused(training, return_attention):
            if keep is not None and keras.config.backend() == "jax":
                # cuDNN's fused attention (JAX on NVIDIA GPUs) refuses a mask
                # broadcast over queries ("Bias must have same seq length as
                # QKV, got 1 and 128", seen on an H200) and Keras then falls
                # back to XLA's kernel. PyTorch takes the broadcast mask, and
                # the full one costs memory quadratic in the length.
                keep = ops.broadcast_to(keep, (batch, 1, length, ops.shape(key)[1]))
            context = ops.dot_product_attention(
                query, key, value,
                mask=keep,
                scale=1.0 / math.sqrt(self.head_dim),
                # On PyTorch, None asks Keras to probe for flash attention
                # with an object torch.compile cannot trace (a graph break
                # per layer); False leaves the choice of kernel to PyTorch's
                # own dispatcher, which picks flash where it applies.
                flash_attention=False if keras.config.backend() == "torch" else None,
            )
            context = ops.reshape(context, (batch, length, self.hidden_dim))
            return self.output_dense(context)

        query = query * ops.cast(1.0 / math.sqrt(self.head_dim), query.dtype)
        scores = ops.einsum("bqnd,bknd->bnqk", query, key)
        # Softmax in float32 for stability under mixed precision.
        scores = ops.cast(scores, "float32")
        if keep is None:
            probabilities = ops.softmax(scores, axis=-1)
        else:
            probabilities = softmax_over_kept(scores, keep)
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
                "causal": self.causal,
            }
        )
        return config
