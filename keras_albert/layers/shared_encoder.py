"""ALBERT's encoder: a stack of post-LN blocks with cross-layer sharing."""

import keras

from keras_albert.layers.sharing import sharing_plan
from keras_albert.layers.transformer_sublayers import sublayer_factories
from keras_albert.layers.validation import check_divisible
from keras_albert.layers.validation import check_positive_int
from keras_albert.layers.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertEncoder(keras.layers.Layer):
    """`num_layers` virtual layers over shared attention/feed-forward weights.

    Layer `l` uses group `int(l / num_layers * num_groups)` (no divisibility
    requirement, as Google's release); each group runs
    `num_inner_repetitions` blocks in order. `sharing` picks what a group
    shares: `"all"` (ALBERT), `"attention"`, `"ffn"`, or `"none"` (BERT:
    every layer owns its weights, groups are ignored).

    `call` returns the list of every virtual layer's output; the last one is
    the sequence output.

    Example:
    >>> encoder = AlbertEncoder(num_layers=4, num_heads=2, hidden_dim=8,
    ...                         intermediate_dim=16, num_groups=2)
    >>> outputs = encoder(np.ones((1, 3, 8), "float32"))
    >>> len(outputs), outputs[-1].shape
    (4, (1, 3, 8))
    """

    def __init__(
        self,
        num_layers,
        num_heads,
        hidden_dim,
        intermediate_dim,
        num_groups=1,
        num_inner_repetitions=1,
        sharing="all",
        activation="gelu_approximate",
        dropout=0.0,
        attention_dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        attention="full",
        attention_kwargs=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("hidden_dim", hidden_dim)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_divisible("hidden_dim", hidden_dim, "num_heads", num_heads)
        check_rate("dropout", dropout)
        check_rate("attention_dropout", attention_dropout)
        self.plan = sharing_plan(
            num_layers, num_groups, num_inner_repetitions, sharing
        )
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.num_groups = num_groups
        self.num_inner_repetitions = num_inner_repetitions
        self.sharing = sharing
        self.activation = activation
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.attention = attention
        self.attention_kwargs = dict(attention_kwargs or {})

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
        )
        # One sublayer per distinct owner, created in first-use order so that
        # weight order is stable across runs.
        self.attention_sublayers = {}
        self.feed_forward_sublayers = {}
        for inner_plan in self.plan:
            for attention_owner, feed_forward_owner in inner_plan:
                if attention_owner not in self.attention_sublayers:
                    self.attention_sublayers[attention_owner] = new_attention(
                        f"{attention_owner}_attention"
                    )
                if feed_forward_owner not in self.feed_forward_sublayers:
                    self.feed_forward_sublayers[feed_forward_owner] = (
                        new_feed_forward(f"{feed_forward_owner}_feed_forward")
                    )

    def build(self, hidden_states_shape, padding_mask_shape=None):
        for sublayer in self.attention_sublayers.values():
            sublayer.build(hidden_states_shape, padding_mask_shape)
        for sublayer in self.feed_forward_sublayers.values():
            sublayer.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, padding_mask=None, training=False):
        outputs = []
        x = hidden_states
        for inner_plan in self.plan:
            for attention_owner, feed_forward_owner in inner_plan:
                x = self.attention_sublayers[attention_owner](
                    x, padding_mask=padding_mask, training=training
                )
                x = self.feed_forward_sublayers[feed_forward_owner](
                    x, training=training
                )
            outputs.append(x)
        return outputs

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return [tuple(hidden_states_shape)] * self.num_layers

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_layers": self.num_layers,
                "num_heads": self.num_heads,
                "hidden_dim": self.hidden_dim,
                "intermediate_dim": self.intermediate_dim,
                "num_groups": self.num_groups,
                "num_inner_repetitions": self.num_inner_repetitions,
                "sharing": self.sharing,
                "activation": self.activation,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "initializer_range": self.initializer_range,
                "attention": self.attention,
                "attention_kwargs": self.attention_kwargs,
            }
        )
        return config
