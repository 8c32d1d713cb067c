"""Several feed-forward units in a row, MobileBERT's stacked FFN."""

import keras

from keras_albert.layers.activations import get_activation
from keras_albert.layers.initializers import albert_dense
from keras_albert.layers.normalization import make_normalization
from keras_albert.utils.validation import check_positive_int
from keras_albert.utils.validation import check_rate


@keras.saving.register_keras_serializable(package="keras_albert")
class AlbertStackedFeedForward(keras.layers.Layer):
    """`num_stacks` x [Dense(W -> I, activation), Dense(I -> W), residual, norm].

    MobileBERT narrows the block to a bottleneck, which leaves attention
    with most of the block's compute; stacking feed-forward units restores
    the usual attention/FFN parameter ratio at little latency cost.

    Args:
        width: int, W, input and output width.
        intermediate_dim: int, I.
        num_stacks: int >= 1.
        activation: str (`"relu"` in MobileBERT).
        normalization: `"layer_norm"` or `"no_norm"`.
        dropout: float, before each residual.
        layer_norm_epsilon: float.
        initializer_range: float.

    Example:
    >>> layer = AlbertStackedFeedForward(width=8, intermediate_dim=16, num_stacks=3)
    >>> tuple(layer(np.ones((1, 4, 8), "float32")).shape)
    (1, 4, 8)
    """

    def __init__(self, width, intermediate_dim, num_stacks=1, activation="relu",
                 normalization="layer_norm", dropout=0.0, layer_norm_epsilon=1e-12,
                 initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        check_positive_int("width", width)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_positive_int("num_stacks", num_stacks)
        check_rate("dropout", dropout)
        get_activation(activation)
        self.width = width
        self.intermediate_dim = intermediate_dim
        self.num_stacks = num_stacks
        self.activation = activation
        self.normalization = normalization
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        self.units = []
        for index in range(num_stacks):
            self.units.append((
                albert_dense(intermediate_dim, initializer_range, self.dtype_policy,
                             f"intermediate_dense_{index}",
                             activation=get_activation(activation)),
                albert_dense(width, initializer_range, self.dtype_policy,
                             f"output_dense_{index}"),
                make_normalization(normalization, layer_norm_epsilon,
                                   self.dtype_policy, f"norm_{index}"),
            ))
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")

    def build(self, hidden_states_shape):
        intermediate_shape = tuple(hidden_states_shape[:-1]) + (self.intermediate_dim,)
        for intermediate, output, norm in self.units:
            intermediate.build(hidden_states_shape)
            output.build(intermediate_shape)
            norm.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, training=False):
        x = hidden_states
        for intermediate, output, norm in self.units:
            y = self.dropout_layer(output(intermediate(x)), training=training)
            x = norm(x + y)
        return x

    def compute_output_shape(self, hidden_states_shape):
        return tuple(hidden_states_shape)

    def get_config(self):
        config = super().get_config()
        config.update({
            "width": self.width,
            "intermediate_dim": self.intermediate_dim,
            "num_stacks": self.num_stacks,
            "activation": self.activation,
            "normalization": self.normalization,
            "dropout": self.dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "initializer_range": self.initializer_range,
        })
        return config
