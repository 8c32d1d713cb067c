"""The two halves of a MobileBERT-style (bottleneck) block.

Kept apart, like `transformer_sublayers`, so ALBERT's sharing strategies
(`"all"`, `"attention"`, `"ffn"`, `"none"`) apply to students too. The
attention half maps the block input (width H) into the bottleneck (width
B) and attends there; the feed-forward half runs the stacked FFN at width
B and projects back to H, with the residual to the block input. With
`bottleneck_dim=None` both halves work at width H (a plain post-norm block
with the other MobileBERT options: NoNorm, ReLU, stacked FFN).
"""

import keras

from keras_albert.layers.bottleneck_attention import AlbertBottleneckAttention
from keras_albert.layers.initializers import albert_dense
from keras_albert.layers.normalization import make_normalization
from keras_albert.layers.stacked_feed_forward import AlbertStackedFeedForward
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate


def check_bottleneck_dim(bottleneck_dim):
    if bottleneck_dim is not None:
        check_positive_int("bottleneck_dim", bottleneck_dim)


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertBottleneckAttentionSublayer(keras.layers.Layer):
    """[bottleneck in], attention (Q, K from the bottleneck, V from the
    input), dropout, residual, norm.

    `call(hidden_states, padding_mask=None, training=False,
    return_attention=False)` returns [batch, seq, B] (and the attention
    probabilities [batch, heads, seq, seq] with `return_attention`).

    Example:
    >>> layer = AlbertBottleneckAttentionSublayer(num_heads=2, hidden_dim=8,
    ...                                           bottleneck_dim=4)
    >>> tuple(layer(np.ones((1, 3, 8), "float32")).shape)
    (1, 3, 4)
    """

    def __init__(self, num_heads, hidden_dim, bottleneck_dim=None,
                 normalization="no_norm", dropout=0.0, attention_dropout=0.0,
                 layer_norm_epsilon=1e-12, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        check_positive_int("hidden_dim", hidden_dim)
        check_bottleneck_dim(bottleneck_dim)
        check_rate("dropout", dropout)
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.bottleneck_dim = bottleneck_dim
        self.normalization = normalization
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.width = bottleneck_dim or hidden_dim

        def norm(name):
            return make_normalization(normalization, layer_norm_epsilon, self.dtype_policy, name)

        if bottleneck_dim:
            self.input_bottleneck = albert_dense(
                bottleneck_dim, initializer_range, self.dtype_policy, "input_bottleneck")
            self.input_bottleneck_norm = norm("input_bottleneck_norm")
            # MobileBERT's key_query_shared_bottleneck: one more narrow view
            # of the input, read by both queries and keys.
            self.query_key_bottleneck = albert_dense(
                bottleneck_dim, initializer_range, self.dtype_policy, "query_key_bottleneck")
            self.query_key_bottleneck_norm = norm("query_key_bottleneck_norm")
        self.attention_layer = AlbertBottleneckAttention(
            num_heads=num_heads, attention_dim=self.width,
            attention_dropout=attention_dropout, initializer_range=initializer_range,
            dtype=self.dtype_policy, name="self_attention")
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")
        self.norm = norm("norm")

    def build(self, hidden_states_shape, padding_mask_shape=None):
        narrow = tuple(hidden_states_shape[:-1]) + (self.width,)
        if self.bottleneck_dim:
            for dense, norm in ((self.input_bottleneck, self.input_bottleneck_norm),
                                (self.query_key_bottleneck, self.query_key_bottleneck_norm)):
                dense.build(hidden_states_shape)
                norm.build(narrow)
        self.attention_layer.build(narrow, hidden_states_shape)
        self.norm.build(narrow)
        self.built = True

    def call(self, hidden_states, padding_mask=None, training=False, return_attention=False):
        if self.bottleneck_dim:
            residual = self.input_bottleneck_norm(self.input_bottleneck(hidden_states))
            query_key = self.query_key_bottleneck_norm(self.query_key_bottleneck(hidden_states))
        else:
            residual = query_key = hidden_states
        attended, probabilities = self.attention_layer(
            query_key, hidden_states, padding_mask=padding_mask, training=training,
            return_attention=True)
        attended = self.dropout_layer(attended, training=training)
        output = self.norm(residual + attended)
        if return_attention:
            return output, probabilities
        return output

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None):
        return tuple(hidden_states_shape[:-1]) + (self.width,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "hidden_dim": self.hidden_dim,
            "bottleneck_dim": self.bottleneck_dim,
            "normalization": self.normalization,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
        })
        return config


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertBottleneckFeedForwardSublayer(keras.layers.Layer):
    """Stacked FFN at the bottleneck width, then [B -> H, dropout, residual
    to the block input, norm].

    `call(hidden_states, block_input, training=False)`: `hidden_states` is
    the attention half's output [batch, seq, B], `block_input` the block's
    input [batch, seq, H]; returns [batch, seq, H].

    Example:
    >>> layer = AlbertBottleneckFeedForwardSublayer(
    ...     hidden_dim=8, intermediate_dim=16, bottleneck_dim=4, num_feedforward_stacks=2)
    >>> tuple(layer(np.ones((1, 3, 4), "float32"), np.ones((1, 3, 8), "float32")).shape)
    (1, 3, 8)
    """

    def __init__(self, hidden_dim, intermediate_dim, bottleneck_dim=None,
                 num_feedforward_stacks=1, activation="relu", normalization="no_norm",
                 dropout=0.0, layer_norm_epsilon=1e-12, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        check_positive_int("hidden_dim", hidden_dim)
        check_bottleneck_dim(bottleneck_dim)
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.bottleneck_dim = bottleneck_dim
        self.num_feedforward_stacks = num_feedforward_stacks
        self.activation = activation
        self.normalization = normalization
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.width = bottleneck_dim or hidden_dim
        self.feed_forward = AlbertStackedFeedForward(
            width=self.width, intermediate_dim=intermediate_dim,
            num_stacks=num_feedforward_stacks, activation=activation,
            normalization=normalization,
            # With a bottleneck, dropout comes after the output projection.
            dropout=0.0 if bottleneck_dim else dropout,
            layer_norm_epsilon=layer_norm_epsilon, initializer_range=initializer_range,
            dtype=self.dtype_policy, name="stacked_feed_forward")
        if bottleneck_dim:
            self.output_bottleneck = albert_dense(
                hidden_dim, initializer_range, self.dtype_policy, "output_bottleneck")
            self.dropout_layer = keras.layers.Dropout(
                dropout, dtype=self.dtype_policy, name="dropout")
            self.output_norm = make_normalization(
                normalization, layer_norm_epsilon, self.dtype_policy, "output_norm")

    def build(self, hidden_states_shape, block_input_shape=None):
        narrow = tuple(hidden_states_shape[:-1]) + (self.width,)
        self.feed_forward.build(narrow)
        if self.bottleneck_dim:
            self.output_bottleneck.build(narrow)
            self.output_norm.build(tuple(hidden_states_shape[:-1]) + (self.hidden_dim,))
        self.built = True

    def call(self, hidden_states, block_input, training=False):
        x = self.feed_forward(hidden_states, training=training)
        if not self.bottleneck_dim:
            return x
        x = self.dropout_layer(self.output_bottleneck(x), training=training)
        return self.output_norm(block_input + x)

    def compute_output_shape(self, hidden_states_shape, block_input_shape=None):
        return tuple(hidden_states_shape[:-1]) + (self.hidden_dim,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "hidden_dim": self.hidden_dim,
            "intermediate_dim": self.intermediate_dim,
            "bottleneck_dim": self.bottleneck_dim,
            "num_feedforward_stacks": self.num_feedforward_stacks,
            "activation": self.activation,
            "normalization": self.normalization,
            "dropout": self.dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
        })
        return config


def bottleneck_sublayer_factories(
    num_heads, hidden_dim, intermediate_dim, bottleneck_dim, num_feedforward_stacks,
    activation, normalization, dropout, attention_dropout, layer_norm_epsilon,
    initializer_range, dtype,
):
    """`(new_attention(name), new_feed_forward(name))` for bottleneck blocks,
    the counterpart of `transformer_sublayers.sublayer_factories`."""

    def new_attention(name):
        return AlbertBottleneckAttentionSublayer(
            num_heads=num_heads, hidden_dim=hidden_dim, bottleneck_dim=bottleneck_dim,
            normalization=normalization, dropout=dropout,
            attention_dropout=attention_dropout, layer_norm_epsilon=layer_norm_epsilon,
            initializer_range=initializer_range, dtype=dtype, name=name)

    def new_feed_forward(name):
        return AlbertBottleneckFeedForwardSublayer(
            hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            bottleneck_dim=bottleneck_dim, num_feedforward_stacks=num_feedforward_stacks,
            activation=activation, normalization=normalization, dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon, initializer_range=initializer_range,
            dtype=dtype, name=name)

    return new_attention, new_feed_forward
