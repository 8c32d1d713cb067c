"""Class names that travel with a classifier: config, presets and serving.

A task with `label_names` keeps them in its config (so `task.json` of a
Keras preset holds them) and serves the predicted name beside the
probabilities. Tasks saved before names existed load with
`label_names=None` and serve class ids only.
"""


def check_num_classes(num_classes, name="`num_classes`"):
    """`num_classes` must be an int >= 1: a config holding "26" would
    otherwise reach the label checks and read "26 names for num_classes=26"."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(
            f"{name} must be a positive int (a JSON number, not a string). "
            f"Received: num_classes={num_classes!r} ({type(num_classes).__name__})"
        )


def check_label_names(label_names, num_classes, name="label_names", regression=False):
    """`label_names` as a list (or None): one distinct, non-empty string
    per class, in class-id order; none at all for a `regression` task."""
    if label_names is None:
        return None
    check_num_classes(num_classes)
    if isinstance(label_names, (str, bytes)) or not hasattr(label_names, "__iter__"):
        raise ValueError(
            f"`{name}` must be a list of strings, one per class. Received: "
            f"{name}={label_names!r}"
        )
    names = list(label_names)
    if regression:
        raise ValueError(
            f"`{name}` names classes, and num_classes=1 is a regressor (one "
            f"unsquashed output). Pass {name}=None. Received: {name}={names!r}"
        )
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise ValueError(
            f"`{name}` must hold non-empty strings. Received: {name}={names!r} "
            f"(not accepted: {bad[:5]!r})"
        )
    if len(names) != num_classes:
        raise ValueError(
            f"`{name}` must hold one name per class: {num_classes} names for "
            f"num_classes={num_classes}. Received {len(names)}: {names!r}"
        )
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"`{name}` must be distinct. Repeated: {repeated!r} in {name}={names!r}")
    return names


class LabelNamesMixin:
    """`from_preset` for tasks with `label_names`.

    keras-hub builds a fresh head when `num_classes` is passed to
    `from_preset` (it skips the preset's task weights); the preset's names
    belonged to the old head, so they are dropped unless `label_names` is
    passed too.
    """

    @classmethod
    def from_preset(cls, preset, *args, **kwargs):
        if "num_classes" in kwargs:
            kwargs.setdefault("label_names", None)
        return super().from_preset(preset, *args, **kwargs)
