"""Longer inputs for any backbone: position embeddings extended by tiling.

A preset learns 128 or 512 positions. Longformer showed that copying the
learned rows over and over (row `i` of the longer table is learned row
`i mod old_length`) starts a long model far better than random rows: local
position differences, which attention relies on most, look as they did in
pretraining everywhere except at the seams. Every other weight is copied
unchanged, so inputs that fit in the old length give the same outputs.
"""

from keras_albert.editing.weight_copy import copy_weights_by_path
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.utils.validation import check_positive_int

POSITION_WEIGHT = "position_embeddings"


def tiled_positions(table, max_sequence_length):
    """Rows of `table` ([old_length, width]) repeated to `max_sequence_length`.

    Example:
    >>> tiled_positions(np.arange(6).reshape(3, 2), 5)[:, 0]
    array([0, 2, 4, 0, 2])
    """
    old_length = table.shape[0]
    repeats = -(-max_sequence_length // old_length)
    return table[None].repeat(repeats, axis=0).reshape(-1, table.shape[1])[
        :max_sequence_length
    ]


def extend_positions(backbone, max_sequence_length):
    """A copy of `backbone` that accepts `max_sequence_length` positions.

    The new position table tiles the learned one (Longformer's copy
    initialisation); all other weights are copied as they are. The returned
    backbone's config carries the new `max_sequence_length`, so
    `save_to_preset` / `from_preset` keep it. Pair it with a preprocessor
    whose `sequence_length` is the new length.

    Args:
        backbone: an `AlbertBackbone` (e.g. from a preset), any attention,
            factorized or trigram embedding.
        max_sequence_length: int, at least the backbone's current one.

    Returns:
        A new `AlbertBackbone`; `backbone` is left untouched.

    Example:
    >>> short = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    >>> long = keras_albert.extend_positions(short, max_sequence_length=4096)
    >>> long.save_to_preset("albert_tiny_en_4096")
    """
    if not isinstance(backbone, AlbertBackbone):
        raise ValueError(
            "`backbone` must be a keras_albert.AlbertBackbone. Received: "
            f"backbone={type(backbone).__name__}"
        )
    check_positive_int("max_sequence_length", max_sequence_length)
    if max_sequence_length < backbone.max_sequence_length:
        raise ValueError(
            "`max_sequence_length` must be at least the backbone's "
            f"({backbone.max_sequence_length}); extending cannot drop learned "
            f"positions. Received: max_sequence_length={max_sequence_length}"
        )
    config = backbone.get_config()
    config["max_sequence_length"] = max_sequence_length
    extended = AlbertBackbone.from_config(config)
    if len(backbone.weights) != len(extended.weights):
        raise ValueError(
            f"The rebuilt backbone has {len(extended.weights)} weights, the "
            f"original {len(backbone.weights)}; cannot copy them one to one."
        )

    def tile_positions(path, value):
        if path.endswith(POSITION_WEIGHT):
            return tiled_positions(value, max_sequence_length)
        return value

    copy_weights_by_path(backbone, extended, transform=tile_positions)
    return extended
