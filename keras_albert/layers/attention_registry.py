"""Maps attention names to layer classes, so `attention="lsh"` can replace
full attention anywhere a config names it."""

from keras_albert.layers.lsh_attention import AlbertLSHSelfAttention
from keras_albert.layers.self_attention import AlbertSelfAttention

_ATTENTION_LAYERS = {
    "full": AlbertSelfAttention,
    "lsh": AlbertLSHSelfAttention,
}


def available_attention():
    return tuple(sorted(_ATTENTION_LAYERS))


def make_attention(attention, **kwargs):
    """Builds the attention layer named `attention` with `kwargs`."""
    if not isinstance(attention, str) or attention not in _ATTENTION_LAYERS:
        raise ValueError(
            f"`attention` must be one of {available_attention()}. "
            f"Received: attention={attention!r}"
        )
    return _ATTENTION_LAYERS[attention](**kwargs)
