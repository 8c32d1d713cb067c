"""Reformer-style LSH self-attention, a drop-in for `AlbertSelfAttention`."""

import math

import keras
import numpy as np
from keras import ops

from keras_albert.layers.initializers import albert_dense
from keras_albert.layers.lsh_hashing import INT32_LIMIT
from keras_albert.layers.lsh_hashing import gather_rows
from keras_albert.layers.lsh_hashing import hash_buckets
from keras_albert.layers.lsh_hashing import invert_permutation
from keras_albert.layers.lsh_hashing import look_around
from keras_albert.layers.lsh_hashing import neighbour_chunks
from keras_albert.layers.lsh_hashing import rotation_width
from keras_albert.layers.lsh_hashing import sort_by_bucket
from keras_albert.layers.lsh_hashing import total_buckets
from keras_albert.layers.self_attention import MASK_PENALTY
from keras_albert.utils.validation import check_divisible
from keras_albert.utils.validation import check_non_negative_int
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate

# Score given to a token's own key. With shared QK a token's key is its own
# query direction and would dominate; Reformer forbids it unless nothing else
# is available. Finite (unlike padding's MASK_PENALTY, far lower) so a token
# whose chunk holds nothing else still gets a defined output.
SELF_PENALTY = -1e5

# Keys are rescaled with rsqrt(mean(k^2) + eps), as Reformer does.
_KEY_NORM_EPSILON = 1e-6




def _check_bool(name, value):
    if not isinstance(value, bool):
        raise ValueError(
            f"`{name}` must be True or False. Received: {name}={value!r}"
        )


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertLSHSelfAttention(keras.layers.Layer):
    """Multi-head LSH self-attention (Reformer) with an output projection.

    Same interface as `AlbertSelfAttention`: `call(hidden_states,
    padding_mask=None, training=False)` maps [batch, seq, hidden] to
    [batch, seq, hidden]. Queries and keys share one projection (`query`,
    shaped like full attention's so it can be warm-started from it); keys
    are normalised to unit length, so a score is `q . k / |k|`.

    Each of `num_hashes` rounds hashes every head's vectors with a fixed
    random rotation `R` to `argmax([xR, -xR])`, sorts positions by the unique
    int32 key `bucket * length + position`, cuts the sorted sequence into
    chunks of `chunk_length` and lets every chunk attend to itself,
    `num_chunks_before` chunks back and `num_chunks_after` ahead (without
    wrapping around the ends, unlike Reformer). Rounds are combined with
    their log-sum-exp weights. A token attends to itself only
    when nothing else is available; padded keys are never attended to
    (padding is sorted behind every real token and the window does not
    wrap, so the outputs at real tokens do not depend on the padding, nor
    on how much of it there is); `causal=True` adds a mask on the
    original positions. The sequence is padded to a multiple of
    `chunk_length` inside the layer.

    Static shapes, int32 indices, no data-dependent Python control flow: the
    layer compiles with XLA and converts to TFLite built-in ops (the sort is
    a `top_k`).

    Args:
        num_heads: int.
        hidden_dim: int, divisible by `num_heads`.
        attention_dropout: float, dropout on the attention probabilities.
        initializer_range: float, stddev of the projection kernels.
        num_hashes: int, hashing rounds (more rounds: fewer misses, more
            compute).
        num_buckets: int, buckets per round: 1 (no hashing: plain chunked
            attention in position order) or even; or a list of even
            factors (Reformer's factorised buckets: `prod` buckets hashed
            with `sum / 2` rotation columns, cheaper for many buckets). About
            `2 * sequence_length / chunk_length` is the usual choice.
        chunk_length: int, tokens per chunk.
        num_chunks_before: int, chunks each chunk looks back (Reformer: 1).
        num_chunks_after: int, chunks each chunk looks ahead (0 for
            decoders; an encoder may use 1).
        causal: bool, forbid attending to later positions.
        seed: int or None, seed of the rotations; the same seed gives the
            same rotations and so the same outputs.
        redraw_rotations: bool, draw fresh rotations at every training call
            (inference always uses the fixed, saved ones).

    Example:
    >>> layer = AlbertLSHSelfAttention(num_heads=2, hidden_dim=8,
    ...                                num_buckets=4, chunk_length=4, seed=1)
    >>> tuple(layer(np.ones((1, 10, 8), "float32")).shape)
    (1, 10, 8)
    """

    def __init__(
        self,
        num_heads,
        hidden_dim,
        attention_dropout=0.0,
        initializer_range=0.02,
        num_hashes=1,
        num_buckets=32,
        chunk_length=64,
        num_chunks_before=1,
        num_chunks_after=0,
        causal=False,
        seed=None,
        redraw_rotations=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("hidden_dim", hidden_dim)
        check_divisible("hidden_dim", hidden_dim, "num_heads", num_heads)
        check_rate("attention_dropout", attention_dropout)
        check_positive_int("num_hashes", num_hashes)
        if isinstance(num_buckets, (list, tuple)):
            if not num_buckets or any(
                isinstance(f, bool) or not isinstance(f, int) or f < 2 or f % 2
                for f in num_buckets
            ):
                raise ValueError(
                    "`num_buckets` as a list holds even integers >= 2 (the "
                    "factors of the bucket count). Received: "
                    f"num_buckets={num_buckets!r}"
                )
            num_buckets = list(num_buckets)
        else:
            check_positive_int("num_buckets", num_buckets)
            if num_buckets != 1 and num_buckets % 2:
                raise ValueError(
                    "`num_buckets` must be 1 (no hashing) or an even integer >= 2. "
                    f"Received: num_buckets={num_buckets!r}"
                )
        check_positive_int("chunk_length", chunk_length)
        check_non_negative_int("num_chunks_before", num_chunks_before)
        check_non_negative_int("num_chunks_after", num_chunks_after)
        _check_bool("causal", causal)
        _check_bool("redraw_rotations", redraw_rotations)
        if isinstance(seed, bool) or not isinstance(seed, (int, type(None))):
            raise ValueError(
                f"`seed` must be an integer or None. Received: seed={seed!r}"
            )
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.head_dim = hidden_dim // num_heads
        self.attention_dropout = attention_dropout
        self.initializer_range = initializer_range
        self.num_hashes = num_hashes
        self.num_buckets = num_buckets
        self._total_buckets = total_buckets(num_buckets)
        self.chunk_length = chunk_length
        self.num_chunks_before = num_chunks_before
        self.num_chunks_after = num_chunks_after
        self.causal = causal
        self.seed = seed
        self.redraw_rotations = redraw_rotations

        def dense(name):
            return albert_dense(
                hidden_dim, initializer_range, self.dtype_policy, name
            )

        # Shared query/key projection: named `query` (no `key`) so full
        # attention's query weights can initialise it.
        self.query = dense("query")
        self.value = dense("value")
        self.output_dense = dense("output_dense")
        self.dropout_layer = keras.layers.Dropout(
            attention_dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.rotations = None
        self.rotation_seed_generator = None
        if redraw_rotations and self._total_buckets > 1:
            # Offset so the redrawn rotations differ from the saved ones.
            self.rotation_seed_generator = keras.random.SeedGenerator(
                None if seed is None else seed + 1, name="rotation_seed_generator"
            )

    @property
    def _rotations_shape(self):
        return (
            self.num_heads,
            self.head_dim,
            self.num_hashes * rotation_width(self.num_buckets),
        )

    def build(self, hidden_states_shape, padding_mask_shape=None):
        for layer in (self.query, self.value, self.output_dense):
            layer.build(hidden_states_shape)
        if self._total_buckets > 1:
            # A weight, not a constant: saved with the model, so a reloaded
            # or exported model hashes exactly as the trained one.
            self.rotations = self.add_weight(
                name="rotations",
                shape=self._rotations_shape,
                initializer=keras.initializers.RandomNormal(
                    stddev=1.0, seed=self.seed
                ),
                trainable=False,
            )
        self.built = True

    def _current_rotations(self, training):
        if self.rotations is None:
            return None
        if training and self.rotation_seed_generator is not None:
            return keras.random.normal(
                self._rotations_shape, seed=self.rotation_seed_generator
            )
        return ops.convert_to_tensor(self.rotations)

    def _project(self, hidden_states, batch, length):
        """Shared QK and V as one [batch, heads, length, 2 * head_dim]."""
        # One GEMM, with the two kernels interleaved per head so that the
        # product reshapes straight into heads: no split, no second copy.
        def per_head(weight):
            return ops.reshape(weight, (-1, self.num_heads, self.head_dim))

        kernel = ops.concatenate(
            [per_head(self.query.kernel), per_head(self.value.kernel)], axis=-1
        )
        bias = ops.concatenate(
            [per_head(self.query.bias), per_head(self.value.bias)], axis=-1
        )
        kernel = ops.reshape(kernel, (self.hidden_dim, 2 * self.hidden_dim))
        bias = ops.reshape(bias, (2 * self.hidden_dim,))
        projected = ops.matmul(hidden_states, ops.cast(kernel, self.compute_dtype))
        projected = projected + ops.cast(bias, self.compute_dtype)
        projected = ops.reshape(
            projected, (batch, length, self.num_heads, 2 * self.head_dim)
        )
        return ops.transpose(projected, (0, 2, 1, 3))

    def call(self, hidden_states, padding_mask=None, training=False):
        shape = ops.shape(hidden_states)
        batch, length = shape[0], shape[1]
        chunk = self.chunk_length
        hashes = self.num_hashes
        depth = self.head_dim

        # === Pad to a multiple of chunk_length; padding is invalid. ===
        valid = None
        if padding_mask is not None:
            valid = ops.cast(padding_mask, "int32")
        pad = (-length) % chunk
        if not (isinstance(pad, int) and pad == 0):
            if valid is None:
                valid = ops.ones((batch, length), "int32")
            hidden_states = ops.pad(hidden_states, ((0, 0), (0, pad), (0, 0)))
            valid = ops.pad(valid, ((0, 0), (0, pad)))
        padded = length + pad
        if isinstance(padded, int) and (self._total_buckets + 1) * padded > INT32_LIMIT:
            raise ValueError(
                "`num_buckets` is too large for the sequence length: sort keys "
                "`bucket * length + position` must fit in int32, i.e. "
                "(num_buckets + 1) * padded_length < 2**31. Received: "
                f"num_buckets={self.num_buckets}, sequence length {length} "
                f"(padded to {padded})"
            )
        num_chunks = padded // chunk

        # === Hash and sort, every (batch, head, round) independently. ===
        both = self._project(hidden_states, batch, padded)
        buckets = hash_buckets(
            ops.cast(both[..., :depth], "float32"),
            self._current_rotations(training),
            hashes,
            self.num_buckets,
        )
        if valid is not None:
            valid = ops.greater(valid, 0)[:, None, None, :]
        positions, sorted_valid = sort_by_bucket(buckets, valid, self._total_buckets)
        positions = ops.reshape(positions, (-1, hashes, padded))

        sorted_rows = ops.reshape(both, (-1, padded, 2 * depth))
        sorted_rows = gather_rows(sorted_rows, positions)
        # The shared QK serves as the queries as is and, unit-normalised, as
        # the keys.
        queries, values = ops.split(sorted_rows, 2, axis=-1)
        norm = ops.rsqrt(
            ops.mean(ops.square(ops.cast(queries, "float32")), -1, keepdims=True)
            + _KEY_NORM_EPSILON
        )
        keys = queries * ops.cast(norm / math.sqrt(depth), queries.dtype)

        # === Chunked attention: own chunk plus neighbours. ===
        context, log_normaliser = self._attend_in_chunks(
            queries, keys, values, positions, sorted_valid, num_chunks, training
        )

        # === Undo the sort and combine the rounds. ===
        inverse = ops.reshape(invert_permutation(positions), (-1, padded))
        context = ops.reshape(context, (-1, padded, depth))
        if hashes == 1:
            context = gather_rows(context, inverse)
        else:
            log_normaliser = ops.reshape(log_normaliser, (-1, padded, 1))
            # Gather context and log-normaliser together: one permutation.
            rows = ops.concatenate(
                [ops.cast(context, "float32"), log_normaliser], axis=-1
            )
            rows = gather_rows(rows, inverse)
            rows = ops.reshape(rows, (-1, hashes, padded, depth + 1))
            context, log_normaliser = rows[..., :depth], rows[..., depth:]
            weights = ops.softmax(log_normaliser, axis=1)
            context = ops.sum(context * weights, axis=1)
            context = ops.cast(context, self.compute_dtype)
        context = ops.reshape(context, (batch, self.num_heads, padded, depth))
        context = ops.transpose(context, (0, 2, 1, 3))
        context = ops.reshape(context, (batch, padded, self.hidden_dim))
        if not (isinstance(pad, int) and pad == 0):
            context = context[:, :length, :]
        return self.output_dense(context)

    def _attend_in_chunks(
        self, queries, keys, values, positions, sorted_valid, num_chunks, training
    ):
        """Attention of each sorted chunk to itself and its neighbours.

        Inputs are in sorted order: `queries`, `keys`, `values` shaped
        [..., length, head_dim], `positions` (original positions) and
        `sorted_valid` (None or real-token flags) shaped [..., length]. With
        the leading axes flattened into groups, returns the context,
        [groups, num_chunks, chunk_length, head_dim], and each query's
        log-sum-exp of scores, [groups, num_chunks, chunk_length, 1], which
        weighs the hash rounds against each other.
        """
        chunk, depth = self.chunk_length, self.head_dim
        chunked = (-1, num_chunks, chunk, depth)
        queries = ops.reshape(queries, chunked)
        keys = ops.reshape(keys, chunked)
        values = ops.reshape(values, chunked)
        neighbours, outside = neighbour_chunks(
            num_chunks, self.num_chunks_before, self.num_chunks_after
        )
        keys = look_around(keys, neighbours)
        values = look_around(values, neighbours)
        scores = ops.einsum("gkqd,gkjd->gkqj", queries, keys)
        scores = ops.cast(scores, "float32")

        # Each position sits once in its round's sorted order, so a query's
        # own key is always the diagonal of the own-chunk block, which comes
        # first in the window: a constant pattern, no comparison needed.
        window = int(neighbours.shape[1])
        own_key = np.zeros((chunk, window * chunk), dtype=bool)
        own_key[:, :chunk] = np.eye(chunk, dtype=bool)
        scores = ops.where(own_key, SELF_PENALTY, scores)

        # Padding and chunks past the ends depend on the key only: build the
        # penalty at [.., keys] and broadcast it over the queries.
        key_keep = None
        if sorted_valid is not None:
            key_valid = ops.reshape(sorted_valid, (-1, num_chunks, chunk))
            key_keep = look_around(key_valid, neighbours)
        if outside is not None:
            # Neighbours past either end (clipped indices) are masked.
            inside = ops.repeat(ops.logical_not(outside), chunk, axis=1)
            key_keep = (
                inside[None]
                if key_keep is None
                else ops.logical_and(key_keep, inside[None])
            )
        if key_keep is not None:
            key_penalty = ops.where(key_keep, 0.0, MASK_PENALTY)
            scores = scores + key_penalty[:, :, None, :]
        if self.causal:
            query_positions = ops.reshape(positions, (-1, num_chunks, chunk))
            key_positions = look_around(query_positions, neighbours)
            not_later = ops.less_equal(
                key_positions[:, :, None, :], query_positions[:, :, :, None]
            )
            scores = ops.where(not_later, scores, MASK_PENALTY)

        # Softmax that also yields its log-normaliser (one exp, not two).
        largest = ops.max(scores, axis=-1, keepdims=True)
        exponentials = ops.exp(scores - largest)
        total = ops.sum(exponentials, axis=-1, keepdims=True)
        probabilities = exponentials * (1.0 / total)
        probabilities = ops.cast(probabilities, self.compute_dtype)
        probabilities = self.dropout_layer(probabilities, training=training)
        context = ops.einsum("gkqj,gkjd->gkqd", probabilities, values)
        return context, largest + ops.log(total)

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
                "num_hashes": self.num_hashes,
                "num_buckets": self.num_buckets,
                "chunk_length": self.chunk_length,
                "num_chunks_before": self.num_chunks_before,
                "num_chunks_after": self.num_chunks_after,
                "causal": self.causal,
                "seed": self.seed,
                "redraw_rotations": self.redraw_rotations,
            }
        )
        return config
