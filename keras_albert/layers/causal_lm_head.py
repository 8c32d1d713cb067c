"""The causal LM's output layer, tied to the factorized word embeddings."""

import keras
from keras import ops

from keras_albert.layers.heads import check_tied_embedding
from keras_albert.layers.initializers import albert_kernel_initializer


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertCausalLMHead(keras.layers.Layer):
    """Next-token logits: H -> E, then the transposed V x E word embeddings.

    With ALBERT's factorized embedding the hidden width H differs from the
    embedding width E, so the hidden states are first mapped to E by a
    linear (no activation) H x E projection; the vocabulary matrix is the
    input embedding's, so the output layer adds only H x E + V weights.
    A GPT-2 checkpoint (E = H, no output bias) is this layer with an
    identity projection and zero biases.

    Args:
        token_embedding: the `keras.layers.Embedding` whose V x E matrix is
            tied (not serialized; the owning task passes it again).
        initializer_range: float.

    Example:
    >>> embedding = keras.layers.Embedding(50, 4)
    >>> embedding.build((None,))
    >>> head = AlbertCausalLMHead(embedding)
    >>> tuple(head(np.ones((2, 6, 8), "float32")).shape)
    (2, 6, 50)
    """

    def __init__(self, token_embedding, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        check_tied_embedding(token_embedding)
        self.token_embedding = token_embedding
        self.initializer_range = initializer_range
        self.vocabulary_size = token_embedding.input_dim
        self.embedding_dim = token_embedding.output_dim
        self.projection = keras.layers.Dense(
            self.embedding_dim,
            kernel_initializer=albert_kernel_initializer(initializer_range),
            dtype=self.dtype_policy,
            name="projection",
        )

    def build(self, hidden_states_shape):
        self.projection.build(hidden_states_shape)
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.vocabulary_size,), initializer="zeros"
        )
        self.built = True

    def call(self, hidden_states):
        x = self.projection(hidden_states)
        embeddings = ops.cast(self.token_embedding.embeddings, x.dtype)
        logits = ops.matmul(x, ops.transpose(embeddings))
        return logits + ops.cast(self.output_bias, x.dtype)

    def compute_output_shape(self, hidden_states_shape):
        return tuple(hidden_states_shape[:-1]) + (self.vocabulary_size,)

    def get_config(self):
        config = super().get_config()
        config.update({"initializer_range": self.initializer_range})
        return config
