"""The two halves of a post-LN BERT block, kept apart so that ALBERT's
sharing strategies can share one half across layers and not the other."""

import keras

from keras_albert.layers.activations import get_activation
from keras_albert.layers.initializers import albert_kernel_initializer
from keras_albert.layers.self_attention import AlbertSelfAttention
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertAttentionSublayer(keras.layers.Layer):
    """Self-attention, dropout, residual, LayerNorm (post-LN).

    `call(..., return_attention=True)` also returns the attention
    probabilities [batch, heads, seq, seq] (full attention only).

    Args:
        num_heads: int.
        hidden_dim: int.
        attention: str, an attention name from
            `keras_albert.layers.attention_registry` (`"full"` or `"lsh"`).
        dropout: float, dropout after the output projection.
        attention_dropout: float, dropout on attention probabilities.
        layer_norm_epsilon: float.
        initializer_range: float.
        attention_kwargs: dict of extra arguments for the attention layer.
    """

    def __init__(
        self,
        num_heads,
        hidden_dim,
        attention="full",
        dropout=0.0,
        attention_dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        attention_kwargs=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_rate("dropout", dropout)
        from keras_albert.layers.attention_registry import make_attention

        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.attention = attention
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.attention_kwargs = dict(attention_kwargs or {})
        self.attention_layer = make_attention(
            attention,
            num_heads=num_heads,
            hidden_dim=hidden_dim,
            attention_dropout=attention_dropout,
            initializer_range=initializer_range,
            dtype=self.dtype_policy,
            name="self_attention",
            **self.attention_kwargs,
        )
        self.dropout_layer = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )

    def build(self, hidden_states_shape, padding_mask_shape=None):
        self.attention_layer.build(hidden_states_shape, padding_mask_shape)
        self.layer_norm.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, padding_mask=None, training=False, return_attention=False):
        if not return_attention:
            attended = self.attention_layer(
                hidden_states, padding_mask=padding_mask, training=training
            )
        elif isinstance(self.attention_layer, AlbertSelfAttention):
            attended, probabilities = self.attention_layer(
                hidden_states, padding_mask=padding_mask, training=training,
                return_attention=True,
            )
        else:
            raise ValueError(
                "Attention probabilities need full attention (`attention='full'`). "
                f"Received: attention={self.attention!r}"
            )
        attended = self.dropout_layer(attended, training=training)
        output = self.layer_norm(hidden_states + attended)
        if return_attention:
            return output, probabilities
        return output

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return tuple(hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "attention": self.attention,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
                "attention_kwargs": self.attention_kwargs,
            }
        )
        return config


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertFeedForwardSublayer(keras.layers.Layer):
    """Dense(H -> I, activation), Dense(I -> H), dropout, residual, LayerNorm.

    Args:
        hidden_dim: int, H.
        intermediate_dim: int, I.
        activation: str, an activation name (default ALBERT's tanh GELU).
        dropout: float.
        layer_norm_epsilon: float.
        initializer_range: float.
    """

    def __init__(
        self,
        hidden_dim,
        intermediate_dim,
        activation="gelu_approximate",
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("hidden_dim", hidden_dim)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_rate("dropout", dropout)
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.activation = activation
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        initializer = albert_kernel_initializer(initializer_range)
        self.intermediate_dense = keras.layers.Dense(
            intermediate_dim,
            activation=get_activation(activation),
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="intermediate_dense",
        )
        self.output_dense = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=initializer,
            dtype=self.dtype_policy,
            name="output_dense",
        )
        self.dropout_layer = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="dropout"
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )

    def build(self, hidden_states_shape):
        self.intermediate_dense.build(hidden_states_shape)
        self.output_dense.build(
            tuple(hidden_states_shape[:-1]) + (self.intermediate_dim,)
        )
        self.layer_norm.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, training=False):
        x = self.output_dense(self.intermediate_dense(hidden_states))
        x = self.dropout_layer(x, training=training)
        return self.layer_norm(hidden_states + x)

    def compute_output_shape(self, hidden_states_shape):
        return tuple(hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "activation": self.activation,
                "dropout": self.dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
            }
        )
        return config


def sublayer_factories(
    num_heads,
    hidden_dim,
    intermediate_dim,
    activation,
    dropout,
    attention_dropout,
    layer_norm_epsilon,
    initializer_range,
    attention,
    attention_kwargs,
    dtype,
):
    """Returns `(new_attention(name), new_feed_forward(name))` that build
    the two halves of a block with one set of hyperparameters, so blocks
    and shared encoders cannot drift apart."""

    def new_attention(name):
        return AlbertAttentionSublayer(
            num_heads=num_heads,
            hidden_dim=hidden_dim,
            attention=attention,
            dropout=dropout,
            attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            attention_kwargs=attention_kwargs,
            dtype=dtype,
            name=name,
        )

    def new_feed_forward(name):
        return AlbertFeedForwardSublayer(
            hidden_dim=hidden_dim,
            intermediate_dim=intermediate_dim,
            activation=activation,
            dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            dtype=dtype,
            name=name,
        )

    return new_attention, new_feed_forward
