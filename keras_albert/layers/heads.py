"""Output heads: pooler, masked-LM and sentence-order (or NSP)."""

import keras
from keras import ops

from keras_albert.layers.activations import get_activation
from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.utils.validation import check_positive_int


def check_tied_embedding(token_embedding):
    """An output head ties its vocabulary projection to this embedding."""
    if not isinstance(token_embedding, keras.layers.Embedding):
        raise ValueError(
            "`token_embedding` must be the `keras.layers.Embedding` to tie "
            f"to. Received: token_embedding={token_embedding!r}"
        )


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertPooler(keras.layers.Layer):
    """Dense(H, tanh) on the first ([CLS]) token, Google's `bert/pooler`.

    Example:
    >>> tuple(AlbertPooler(8)(np.ones((2, 5, 8), "float32")).shape)
    (2, 8)
    """

    def __init__(self, hidden_dim, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        check_positive_int("hidden_dim", hidden_dim)
        self.hidden_dim = hidden_dim
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            hidden_dim,
            activation="tanh",
            kernel_initializer=albert_kernel_initializer(initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )

    def build(self, sequence_shape):
        self.dense.build((sequence_shape[0], sequence_shape[-1]))
        self.built = True

    def call(self, sequence_output):
        return self.dense(sequence_output[:, 0, :])

    def compute_output_shape(self, sequence_shape):
        return (sequence_shape[0], self.hidden_dim)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_dim": self.hidden_dim,
                "initializer_range": self.initializer_range,
            }
        )
        return config


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertMaskedLMHead(keras.layers.Layer):
    """Masked-LM head tied to the word embeddings, as `cls/predictions`.

    Gathers the hidden states at `mask_positions`, maps them H -> E with an
    activation, normalises (LayerNorm at width E) and scores them against
    the transposed V x E word embeddings plus an output bias [V].

    Args:
        token_embedding: the `keras.layers.Embedding` whose V x E matrix is
            tied (not serialized; the owning task passes it again).
        activation: str, the transform's activation.
        layer_norm_epsilon: float.
        initializer_range: float.

    Example:
    >>> embedding = keras.layers.Embedding(50, 4)
    >>> embedding.build((None,))
    >>> head = AlbertMaskedLMHead(embedding)
    >>> tuple(head(np.ones((2, 6, 8), "float32"), np.array([[1, 2], [0, 3]])).shape)
    (2, 2, 50)
    """

    def __init__(
        self,
        token_embedding,
        activation="gelu_approximate",
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_tied_embedding(token_embedding)
        self.token_embedding = token_embedding
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.vocabulary_size = token_embedding.input_dim
        self.embedding_dim = token_embedding.output_dim
        self.transform = keras.layers.Dense(
            self.embedding_dim,
            activation=get_activation(activation),
            kernel_initializer=albert_kernel_initializer(initializer_range),
            dtype=self.dtype_policy,
            name="transform",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )

    def build(self, sequence_output_shape, mask_positions_shape=None):
        gathered_shape = (sequence_output_shape[0], None, sequence_output_shape[-1])
        self.transform.build(gathered_shape)
        self.layer_norm.build(gathered_shape[:-1] + (self.embedding_dim,))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.vocabulary_size,), initializer="zeros"
        )
        self.built = True

    def call(self, sequence_output, mask_positions):
        mask_positions = ops.cast(mask_positions, "int32")
        gathered = ops.take_along_axis(
            sequence_output, mask_positions[:, :, None], axis=1
        )
        x = self.layer_norm(self.transform(gathered))
        embeddings = ops.cast(self.token_embedding.embeddings, x.dtype)
        logits = ops.matmul(x, ops.transpose(embeddings))
        return logits + ops.cast(self.output_bias, x.dtype)

    def compute_output_shape(self, sequence_output_shape, mask_positions_shape):
        return tuple(mask_positions_shape) + (self.vocabulary_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "activation": self.activation,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
            }
        )
        return config


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertSentenceOrderHead(keras.layers.Layer):
    """Two-way classifier on the pooled output (`cls/seq_relationship`).

    Label 0 means the segments are in their original order (or, for NSP,
    B follows A); label 1 means swapped (or random).

    Example:
    >>> tuple(AlbertSentenceOrderHead()(np.ones((3, 8), "float32")).shape)
    (3, 2)
    """

    def __init__(self, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            2,
            kernel_initializer=albert_kernel_initializer(initializer_range),
            dtype=self.dtype_policy,
            name="dense",
        )

    def build(self, pooled_shape):
        self.dense.build(pooled_shape)
        self.built = True

    def call(self, pooled_output):
        return self.dense(pooled_output)

    def compute_output_shape(self, pooled_shape):
        return (pooled_shape[0], 2)

    def get_config(self):
        config = super().get_config()
        config.update({"initializer_range": self.initializer_range})
        return config
