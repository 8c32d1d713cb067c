"""A standalone MobileBERT-style bottleneck transformer block."""

import keras

from keras_albert.layers.bottleneck_sublayers import bottleneck_sublayer_factories


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertBottleneckTransformerBlock(keras.layers.Layer):
    """H -> B bottleneck, attention at B (Q, K from the bottleneck, V from
    the input), stacked FFN at B, B -> H with a residual to the input.

    `AlbertEncoder` composes the two halves itself (to share them across
    layers); this block is the unshared unit.

    Args:
        num_heads: int, divides `bottleneck_dim`.
        hidden_dim: int, H, input and output width.
        intermediate_dim: int, FFN width.
        bottleneck_dim: int, B (None: no bottleneck, everything at H).
        num_feedforward_stacks: int, FFN units in a row.
        activation: str (`"relu"`).
        normalization: `"no_norm"` or `"layer_norm"`.
        dropout, attention_dropout: floats.
        layer_norm_epsilon, initializer_range: floats.

    Example:
    >>> block = AlbertBottleneckTransformerBlock(num_heads=2, hidden_dim=16,
    ...     intermediate_dim=8, bottleneck_dim=8, num_feedforward_stacks=2)
    >>> tuple(block(np.ones((1, 4, 16), "float32")).shape)
    (1, 4, 16)
    """

    def __init__(self, num_heads, hidden_dim, intermediate_dim, bottleneck_dim=None,
                 num_feedforward_stacks=1, activation="relu", normalization="no_norm",
                 dropout=0.0, attention_dropout=0.0, layer_norm_epsilon=1e-12,
                 initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.bottleneck_dim = bottleneck_dim
        self.num_feedforward_stacks = num_feedforward_stacks
        self.activation = activation
        self.normalization = normalization
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        new_attention, new_feed_forward = bottleneck_sublayer_factories(
            num_heads=num_heads, hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            bottleneck_dim=bottleneck_dim, num_feedforward_stacks=num_feedforward_stacks,
            activation=activation, normalization=normalization, dropout=dropout,
            attention_dropout=attention_dropout, layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range, dtype=self.dtype_policy)
        self.attention_sublayer = new_attention("attention")
        self.feed_forward = new_feed_forward("feed_forward")

    def build(self, hidden_states_shape, padding_mask_shape=None):
        self.attention_sublayer.build(hidden_states_shape, padding_mask_shape)
        narrow = tuple(hidden_states_shape[:-1]) + (self.attention_sublayer.width,)
        self.feed_forward.build(narrow, hidden_states_shape)
        self.built = True

    def call(self, hidden_states, padding_mask=None, training=False, return_attention=False):
        x, probabilities = self.attention_sublayer(
            hidden_states, padding_mask=padding_mask, training=training,
            return_attention=True)
        output = self.feed_forward(x, hidden_states, training=training)
        if return_attention:
            return output, probabilities
        return output

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return tuple(hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "hidden_dim": self.hidden_dim,
            "intermediate_dim": self.intermediate_dim,
            "bottleneck_dim": self.bottleneck_dim,
            "num_feedforward_stacks": self.num_feedforward_stacks,
            "activation": self.activation,
            "normalization": self.normalization,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
        })
        return config
