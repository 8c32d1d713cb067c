"""A standalone post-LN ALBERT/BERT transformer block."""

import keras

from keras_albert.layers.transformer_sublayers import sublayer_factories


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertTransformerBlock(keras.layers.Layer):
    """Attention sublayer then feed-forward sublayer, each post-LN.

    `AlbertEncoder` composes the two sublayers itself to share them across
    layers; this block is the unshared unit for users building their own
    stacks. `attention` selects the attention layer by name ("full" or
    "lsh"), so LSH attention drops in. `causal=True` masks later positions
    (a decoder block); `normalize_first=True` is GPT-2's pre-LN layout.

    Example:
    >>> block = AlbertTransformerBlock(num_heads=2, hidden_dim=8,
    ...                                intermediate_dim=16)
    >>> tuple(block(np.ones((1, 4, 8), "float32")).shape)
    (1, 4, 8)
    """

    def __init__(
        self,
        num_heads,
        hidden_dim,
        intermediate_dim,
        activation="gelu_approximate",
        dropout=0.0,
        attention_dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        attention="full",
        attention_kwargs=None,
        causal=False,
        normalize_first=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.activation = activation
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.attention = attention
        self.attention_kwargs = dict(attention_kwargs or {})
        self.causal = causal
        self.normalize_first = normalize_first
        new_attention, new_feed_forward = sublayer_factories(
            num_heads=num_heads,
            hidden_dim=hidden_dim,
            intermediate_dim=intermediate_dim,
            activation=activation,
            dropout=dropout,
            attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range,
            attention=attention,
            attention_kwargs=self.attention_kwargs,
            dtype=self.dtype_policy,
            causal=causal,
            normalize_first=normalize_first,
        )
        self.attention_sublayer = new_attention("attention")
        self.feed_forward = new_feed_forward("feed_forward")

    def build(self, hidden_states_shape, padding_mask_shape=None):
        self.attention_sublayer.build(hidden_states_shape, padding_mask_shape)
        self.feed_forward.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, padding_mask=None, training=False):
        x = self.attention_sublayer(
            hidden_states, padding_mask=padding_mask, training=training
        )
        return self.feed_forward(x, training=training)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return tuple(hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "activation": self.activation,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
                "attention": self.attention,
                "attention_kwargs": self.attention_kwargs,
                "causal": self.causal,
                "normalize_first": self.normalize_first,
            }
        )
        return config
