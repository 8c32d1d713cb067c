"""Weights carried from a backbone to a rebuild of it, matched by variable path.

A backbone rebuilt from an edited config (longer positions, LSH attention,
more weight groups) names its variables as the original does wherever the
two share a layer, so the weights carry over path by path.
"""


def copy_weights_by_path(source, target, skip=None, transform=None, source_name="original"):
    """Assigns every weight of `target` the weight of `source` at the same path.

    Args:
        source: the model the weights come from.
        target: the rebuilt model; changed in place.
        skip: optional `path -> bool`; true leaves that weight of `target`
            as it is (it has no counterpart, or is set elsewhere).
        transform: optional `(path, value) -> value`, to reshape a weight
            on the way (e.g. tile a position table).
        source_name: how errors name `source`.

    Raises:
        ValueError: a weight of `target` (not skipped) has no counterpart.
    """
    weights = {variable.path: variable for variable in source.weights}
    for variable in target.weights:
        if skip is not None and skip(variable.path):
            continue
        if variable.path not in weights:
            raise ValueError(f"No {source_name} weight for {variable.path!r}.")
        value = weights[variable.path].numpy()
        variable.assign(transform(variable.path, value) if transform else value)
