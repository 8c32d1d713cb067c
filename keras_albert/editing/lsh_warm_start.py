"""An LSH-attention backbone started from a full-attention one.

LSH attention shares one projection for queries and keys. Starting it from
the full model's *query* weights (its keys are dropped) keeps every other
weight as pretrained; what changes is that keys equal queries and a token
no longer attends to itself, which costs some quality until the model is
fine-tuned (or pretrained a little) with LSH. Measured on the bundled
supersense task by `tools/lsh_quality.py`; see README.
"""

from keras_albert.editing.weight_copy import copy_weights_by_path
from keras_albert.models.albert_backbone import AlbertBackbone


def lsh_backbone_from(backbone, **lsh_arguments):
    """A copy of `backbone` with `attention="lsh"` and its weights.

    Args:
        backbone: a full-attention `AlbertBackbone` (e.g. from a preset).
        **lsh_arguments: `lsh_num_hashes`, `lsh_num_buckets`,
            `lsh_chunk_length`, `lsh_num_chunks_after`, `lsh_seed`.

    Example:
    >>> full = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    >>> lsh = lsh_backbone_from(full, lsh_num_hashes=4, lsh_chunk_length=16)
    """
    config = backbone.get_config()
    if config.get("attention") != "full":
        raise ValueError(
            f"`backbone` must use full attention. Received attention={config.get('attention')!r}."
        )
    config.update(attention="lsh", attention_kwargs={}, **lsh_arguments)
    lsh = AlbertBackbone.from_config(config)
    copy_weights_by_path(
        backbone, lsh,
        skip=lambda path: path.endswith("rotations"),  # LSH's own random rotations
        source_name="full-attention",
    )
    return lsh
