"""The two halves of a post-LN BERT block, kept apart so that ALBERT's
sharing strategies can share one half across layers and not the other.

`normalize_first=True` gives GPT-2's pre-LN layout instead:
`x + sublayer(LayerNorm(x))`."""

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
        causal: bool, each position attends only to itself and earlier ones.
        normalize_first: bool, pre-LN (GPT-2) instead of post-LN (BERT).
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
        causal=False,
        normalize_first=False,
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
        self.causal = causal
        self.normalize_first = normalize_first
        # Passed only when set, so bidirectional layers keep their configs.
        causal_kwargs = {"causal": True} if causal else {}
        self.attention_layer = make_attention(
            attention,
            num_heads=num_heads,
            hidden_dim=hidden_dim,
            attention_dropout=attention_dropout,
            initializer_range=initializer_range,
            dtype=self.dtype_policy,
            name="self_attention",
            **{**self.attention_kwargs, **causal_kwargs},
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
        attention_input = (
            self.layer_norm(hidden_states) if self.normalize_first else hidden_states
        )
        if not return_attention:
            attended = self.attention_layer(
                attention_input, padding_mask=padding_mask, training=training
            )
        elif isinstance(self.attention_layer, AlbertSelfAttention):
            attended, probabilities = self.attention_layer(
                attention_input, padding_mask=padding_mask, training=training,
                return_attention=True,
            )
        else:
            raise ValueError(
                "Attention probabilities need full attention (`attention='full'`). "
                f"Received: attention={self.attention!r}"
            )
        output = self._add_residual(hidden_states, attended, training)
        if return_attention:
            return output, probabilities
        return output

    def call_with_cache(self, hidden_states, cache, cache_update_index, padding_mask=None):
        """`call` for new positions against cached keys and values (see
        `AlbertSelfAttention.call_with_cache`); returns `(output, cache)`."""
        if not hasattr(self.attention_layer, "call_with_cache"):
            raise ValueError(
                "Decoding with a key/value cache needs full attention "
                f"(`attention='full'`). Received: attention={self.attention!r}"
            )
        attention_input = (
            self.layer_norm(hidden_states) if self.normalize_first else hidden_states
        )
        attended, cache = self.attention_layer.call_with_cache(
            attention_input, cache, cache_update_index, padding_mask=padding_mask
        )
        return self._add_residual(hidden_states, attended, False), cache

    def _add_residual(self, hidden_states, attended, training):
        attended = self.dropout_layer(attended, training=training)
        if self.normalize_first:
            return hidden_states + attended
        return self.layer_norm(hidden_states + attended)

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
                "causal": self.causal,
                "normalize_first": self.normalize_first,
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
        normalize_first: bool, pre-LN (GPT-2) instead of post-LN (BERT).
    """

    def __init__(
        self,
        hidden_dim,
        intermediate_dim,
        activation="gelu_approximate",
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        normalize_first=False,
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
        self.normalize_first = normalize_first
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
        if self.normalize_first:
            x = self.output_dense(self.intermediate_dense(self.layer_norm(hidden_states)))
            return hidden_states + self.dropout_layer(x, training=training)
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
                "normalize_first": self.normalize_first,
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
    causal=False,
    normalize_first=False,
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
            causal=causal,
            normalize_first=normalize_first,
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
            normalize_first=normalize_first,
            dtype=dtype,
            name=name,
        )

    return new_attention, new_feed_forward
