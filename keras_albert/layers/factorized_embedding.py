"""ALBERT's factorized embedding: V x E lookups, then an E -> H projection."""

import keras
from keras import ops

from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.layers.normalization import check_normalization
from keras_albert.layers.normalization import make_normalization
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate
from keras_albert.utils.validation import check_sequence_fits


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertFactorizedEmbedding(keras.layers.Layer):
    """Token, position and segment embeddings at width E, projected to H.

    As in Google's release, the sum of the three embeddings is normalised
    (LayerNorm, epsilon 1e-12) and dropped out at width E, and only then
    mapped to the encoder width H (`embedding_hidden_mapping_in`). That keeps
    the vocabulary matrix at V x E instead of V x H.

    Args:
        vocabulary_size: int, V.
        embedding_dim: int, E.
        hidden_dim: int, H, the width of the projected output.
        max_sequence_length: int, number of learned positions.
        num_segments: int, number of segment (token type) ids.
        dropout: float, dropout rate on the normalised embeddings.
        layer_norm_epsilon: float.
        initializer_range: float, stddev of the truncated normal initializer.
        normalization: `"layer_norm"` (ALBERT) or `"no_norm"` (MobileBERT's
            element-wise scale and shift).
        normalize: bool, normalise the summed embeddings (True, ALBERT).
            GPT-2's pre-LN layout has no embedding LayerNorm: its first
            block normalises its input.

    Example:
    >>> layer = AlbertFactorizedEmbedding(100, 8, 16, max_sequence_length=10)
    >>> tuple(layer(np.ones((2, 5), "int32"), np.zeros((2, 5), "int32")).shape)
    (2, 5, 16)
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        hidden_dim,
        max_sequence_length=512,
        num_segments=2,
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        normalization="layer_norm",
        normalize=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_normalization(normalization)
        if not isinstance(normalize, bool):
            raise ValueError(
                f"`normalize` must be True or False. Received: normalize={normalize!r}"
            )
        for name, value in (
            ("vocabulary_size", vocabulary_size),
            ("embedding_dim", embedding_dim),
            ("hidden_dim", hidden_dim),
            ("max_sequence_length", max_sequence_length),
            ("num_segments", num_segments),
        ):
            check_positive_int(name, value)
        check_rate("dropout", dropout)
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.normalization = normalization
        self.normalize = normalize

        initializer = albert_kernel_initializer(initializer_range)
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            embedding_dim,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.segment_embedding = keras.layers.Embedding(
            num_segments,
            embedding_dim,
            embeddings_initializer=initializer,
            dtype=self.dtype_policy,
            name="segment_embedding",
        )
        # Named "layer_norm" either way: existing checkpoints map onto it.
        self.layer_norm = None
        if normalize:
            self.layer_norm = make_normalization(
                normalization, layer_norm_epsilon, self.dtype_policy, "layer_norm"
            )
        self.dropout_layer = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.projection = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="projection",
        )

    def build(self, token_ids_shape, segment_ids_shape=None):
        self.token_embedding.build(token_ids_shape)
        self.segment_embedding.build(token_ids_shape)
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_sequence_length, self.embedding_dim),
            initializer=albert_kernel_initializer(self.initializer_range),
        )
        embedded_shape = tuple(token_ids_shape) + (self.embedding_dim,)
        if self.layer_norm is not None:
            self.layer_norm.build(embedded_shape)
        self.projection.build(embedded_shape)
        self.built = True

    def call(self, token_ids, segment_ids, training=False, start_index=0):
        """`start_index`: position of the first token (a decoder's cached
        step embeds one token at its place in the sequence)."""
        check_sequence_fits(token_ids, self.max_sequence_length)
        length = ops.shape(token_ids)[-1]
        # The variable's value, not the variable: JAX refuses a variable as
        # an operand of `ops.slice`.
        table = ops.convert_to_tensor(self.position_embeddings)
        if keras.config.backend() == "torch" and not isinstance(start_index, int):
            # A decoder's step at a tensor index: a gather, which
            # torch.compile traces into one graph for every step, where a
            # slice would read the index back as a Python number (XLA's
            # dynamic slice is fine: the other backends keep it).
            rows = ops.arange(length, dtype="int32") + ops.cast(start_index, "int32")
            positions = ops.take(table, rows, axis=0)
        else:
            positions = ops.slice(table, (start_index, 0), (length, self.embedding_dim))
        x = self.token_embedding(token_ids)
        x = x + ops.cast(positions, x.dtype)[None, :, :]
        x = x + self.segment_embedding(segment_ids)
        if self.layer_norm is not None:
            x = self.layer_norm(x)
        x = self.dropout_layer(x, training=training)
        return self.projection(x)

    def compute_output_shape(self, token_ids_shape, segment_ids_shape=None):
        return tuple(token_ids_shape) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "hidden_dim": self.hidden_dim,
                "max_sequence_length": self.max_sequence_length,
                "num_segments": self.num_segments,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
                "normalization": self.normalization,
                "normalize": self.normalize,
            }
        )
        return config
