"""MobileBERT's trigram embedding: narrow token vectors, neighbours
concatenated, projected to the encoder width."""

import keras
from keras import ops

from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.layers.normalization import make_normalization
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate
from keras_albert.utils.validation import check_sequence_fits


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertTrigramEmbedding(keras.layers.Layer):
    """Token vectors at width E; [next, self, previous] concatenated (3E)
    and projected to H; positions and segments added at H; norm, dropout.

    Like ALBERT's factorized embedding it keeps the V x E matrix narrow,
    but the projection sees each token's neighbours, which recovers some
    of what the narrow vectors lose (MobileBERT uses E=128 for H=512).
    The first token sees zeros as its previous neighbour. The token after
    the last real one is always `<pad>` (id 0), whether the batch holds a
    padded position there or ends: outputs do not depend on how far a batch
    is padded (length buckets give the unbucketed results).

    Args:
        vocabulary_size: int, V.
        embedding_dim: int, E.
        hidden_dim: int, H.
        max_sequence_length: int, number of learned positions.
        num_segments: int.
        dropout: float.
        normalization: `"layer_norm"` or `"no_norm"`.
        layer_norm_epsilon: float.
        initializer_range: float.

    Call arguments:
        token_ids: int [batch, sequence].
        segment_ids: int [batch, sequence].
        padding_mask: optional [batch, sequence], 1 for real tokens; a
            padded next neighbour is read as `<pad>` whatever id it holds.
        training: bool.

    Example:
    >>> layer = AlbertTrigramEmbedding(100, 4, 16, max_sequence_length=10)
    >>> tuple(layer(np.ones((2, 5), "int32"), np.zeros((2, 5), "int32")).shape)
    (2, 5, 16)
    """

    def __init__(self, vocabulary_size, embedding_dim, hidden_dim, max_sequence_length=512,
                 num_segments=2, dropout=0.0, normalization="layer_norm",
                 layer_norm_epsilon=1e-12, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
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
        self.normalization = normalization
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        initializer = albert_kernel_initializer(initializer_range)
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, embeddings_initializer=initializer,
            dtype=self.dtype_policy, name="token_embedding")
        self.projection = keras.layers.Dense(
            hidden_dim, kernel_initializer=initializer, dtype=self.dtype_policy,
            name="projection")
        self.segment_embedding = keras.layers.Embedding(
            num_segments, hidden_dim, embeddings_initializer=initializer,
            dtype=self.dtype_policy, name="segment_embedding")
        self.norm = make_normalization(
            normalization, layer_norm_epsilon, self.dtype_policy, "norm")
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")

    def build(self, token_ids_shape, segment_ids_shape=None, padding_mask_shape=None):
        self.token_embedding.build(token_ids_shape)
        self.segment_embedding.build(token_ids_shape)
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_sequence_length, self.hidden_dim),
            initializer=albert_kernel_initializer(self.initializer_range),
        )
        self.projection.build(tuple(token_ids_shape) + (3 * self.embedding_dim,))
        self.norm.build(tuple(token_ids_shape) + (self.hidden_dim,))
        self.built = True

    def call(self, token_ids, segment_ids, padding_mask=None, training=False):
        check_sequence_fits(token_ids, self.max_sequence_length)
        x = self.token_embedding(token_ids)
        # The next token's id, <pad> (0) past the end and under padding: a
        # text that fills its batch exactly reads what one followed by
        # padding reads, as most training texts did (zeros for padding
        # instead would move the bundled student's outputs on most texts).
        following_ids = ops.pad(token_ids[:, 1:], ((0, 0), (0, 1)))
        if padding_mask is not None:
            following_mask = ops.pad(padding_mask[:, 1:], ((0, 0), (0, 1)))
            following_ids = following_ids * ops.cast(following_mask, following_ids.dtype)
        following = self.token_embedding(following_ids)
        preceding = ops.pad(x[:, :-1], ((0, 0), (1, 0), (0, 0)))
        x = self.projection(ops.concatenate([following, x, preceding], axis=-1))
        length = ops.shape(token_ids)[-1]
        # The value, not the variable: JAX refuses a variable in `ops.slice`.
        positions = ops.slice(
            ops.convert_to_tensor(self.position_embeddings), (0, 0), (length, self.hidden_dim)
        )
        x = x + ops.cast(positions, x.dtype)[None, :, :]
        x = x + self.segment_embedding(segment_ids)
        x = self.norm(x)
        return self.dropout_layer(x, training=training)

    def compute_output_shape(self, token_ids_shape, segment_ids_shape=None, padding_mask_shape=None):
        return tuple(token_ids_shape) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "vocabulary_size": self.vocabulary_size,
            "embedding_dim": self.embedding_dim,
            "hidden_dim": self.hidden_dim,
            "max_sequence_length": self.max_sequence_length,
            "num_segments": self.num_segments,
            "dropout": self.dropout,
            "normalization": self.normalization,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
        })
        return config
