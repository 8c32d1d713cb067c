"""Activations by name, including ALBERT's tanh-approximated GELU."""

import keras


@keras.saving.register_keras_serializable(package="keras_albert")
def gelu_approximate(x):
    """GELU with the tanh approximation, as Google's ALBERT (`gelu_new`)."""
    return keras.activations.gelu(x, approximate=True)


# Names users (and Hugging Face / TF1 configs) give for each activation.
_ACTIVATION_ALIASES = {
    "gelu_approximate": gelu_approximate,
    "gelu_new": gelu_approximate,
    "gelu_fast": gelu_approximate,
    "gelu_pytorch_tanh": gelu_approximate,
    "gelu": keras.activations.gelu,
    "gelu_exact": keras.activations.gelu,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "swish": keras.activations.silu,
    "silu": keras.activations.silu,
}


def get_activation(activation):
    """Returns a callable for a name in `_ACTIVATION_ALIASES` or a callable."""
    if callable(activation):
        return activation
    # A list or dict from a hostile config is unhashable: refuse it by type.
    if isinstance(activation, str) and activation in _ACTIVATION_ALIASES:
        return _ACTIVATION_ALIASES[activation]
    raise ValueError(
        "`activation` must be a callable or one of "
        f"{sorted(_ACTIVATION_ALIASES)}. Received: activation={activation!r}"
    )
