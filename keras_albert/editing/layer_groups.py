"""More weight groups for a trained backbone, each started from the shared weights.

ALBERT's encoder shares one set of weights across its layers; `num_groups`
gives it several (Google's `num_hidden_groups`). Raising it adds parameters
at no extra compute per step. Training the larger model from scratch throws
the shared weights away, so here every new group starts as a copy of the
weights its layers used before: the returned backbone computes exactly what
the original did, and training moves the copies apart from there.
"""

from keras_albert.editing.weight_copy import copy_weights_by_path
from keras_albert.layers.sharing import sharing_plan
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.utils.validation import check_positive_int


def group_sources(config, num_groups):
    """Maps each weight owner under `num_groups` to the owner it copies.

    `config` is a backbone config (`get_config()` or a preset's). Owners are
    the names of `sharing_plan`. A new owner must take its weights from a
    single old owner: merging two old groups into one would drop learned
    weights, so that is refused here, before any weights are built.
    """
    check_positive_int("num_groups", num_groups)
    layers = config["num_layers"]
    repetitions = config.get("num_inner_repetitions", 1)
    sharing = config.get("sharing", "all")
    old_plan = sharing_plan(layers, config.get("num_groups", 1), repetitions, sharing)
    new_plan = sharing_plan(layers, num_groups, repetitions, sharing)
    sources = {}
    for old_layer, new_layer in zip(old_plan, new_plan):
        for old_owners, new_owners in zip(old_layer, new_layer):
            for old_owner, new_owner in zip(old_owners, new_owners):
                if sources.setdefault(new_owner, old_owner) != old_owner:
                    raise ValueError(
                        f"`num_groups={num_groups}` would merge the weights of "
                        f"{sources[new_owner]!r} and {old_owner!r} into one group. "
                        "Pick a number of groups whose every group lies inside one "
                        "of the backbone's groups (a multiple of its num_groups "
                        "that divides num_layers always does)."
                    )
    return sources


def with_layer_groups(backbone, num_groups):
    """A copy of `backbone` whose encoder has `num_groups` weight groups.

    Each new group starts with the weights of the group its layers used, so
    outputs are unchanged until training; the config carries the new
    `num_groups`, so `save_to_preset` / `from_preset` keep it.

    Args:
        backbone: an `AlbertBackbone` (e.g. from a preset).
        num_groups: int, from the backbone's own `num_groups` up to
            `num_layers` (every layer its own weights).

    Returns:
        A new `AlbertBackbone`; `backbone` is left untouched.

    Example:
    >>> shared = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    >>> unshared = keras_albert.with_layer_groups(shared, num_groups=4)
    >>> unshared.count_params() > shared.count_params()
    True
    """
    if not isinstance(backbone, AlbertBackbone):
        raise ValueError(
            "`backbone` must be a keras_albert.AlbertBackbone. Received: "
            f"backbone={type(backbone).__name__}"
        )
    config = backbone.get_config()
    sources = group_sources(config, num_groups)
    if num_groups == backbone.num_groups:
        return backbone
    regrouped = AlbertBackbone.from_config({**config, "num_groups": num_groups})

    # Embeddings and pooler keep their paths; the encoder's sublayers are
    # named by owner, so they are copied owner by owner below.
    encoder_paths = {variable.path for variable in regrouped.encoder.weights}
    copy_weights_by_path(backbone, regrouped, skip=encoder_paths.__contains__)
    old, new = backbone.encoder, regrouped.encoder
    for owner, old_owner in sources.items():
        for sublayers, old_sublayers in (
            (new.attention_sublayers, old.attention_sublayers),
            (new.feed_forward_sublayers, old.feed_forward_sublayers),
        ):
            if owner in sublayers:
                sublayers[owner].set_weights(old_sublayers[old_owner].get_weights())
    return regrouped
