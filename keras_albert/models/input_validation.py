"""Checks on what users pass to tasks: token features and labels.

Keras and XLA see only tensors, so a float id is silently truncated, an id
past the vocabulary reads another row, and a label outside the classes
gives a NaN loss (or a message naming an internal op). These checks run on
in-memory arrays before Keras does and say which argument is wrong, the
bad value and what is accepted. Datasets and symbolic tensors pass through.
"""

import numpy as np
import tensorflow as tf

FEATURE_NAMES = ("token_ids", "segment_ids", "padding_mask")


def _as_array(value):
    """A NumPy array for in-memory data, None for what we cannot inspect."""
    if isinstance(value, tf.Tensor):
        return value.numpy() if tf.executing_eagerly() and hasattr(value, "numpy") else None
    if isinstance(value, (tf.data.Dataset, tf.RaggedTensor)) or value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray, int, float, np.generic)):
        try:
            return np.asarray(value)
        except ValueError:  # ragged nested lists
            return None
    return None


def _first_bad(array, bad):
    values = np.unique(array[bad])
    shown = ", ".join(str(v) for v in values[:5])
    return shown + (", ..." if len(values) > 5 else "")


def check_token_features(x, backbone):
    """Validates a dict of `token_ids` / `segment_ids` / `padding_mask`."""
    arrays = {name: _as_array(x[name]) for name in FEATURE_NAMES if name in x}
    shapes = {}
    for name, array in arrays.items():
        if array is None:
            continue
        if array.dtype.kind not in "iub":
            raise ValueError(
                f"`x[{name!r}]` must hold integers (int32 ids); received dtype "
                f"{array.dtype}. Tokenize with the task's preprocessor, or cast "
                "exact integer ids with `.astype('int32')`."
            )
        if array.ndim != 2:
            raise ValueError(
                f"`x[{name!r}]` must be 2-D [batch, sequence]; received shape "
                f"{array.shape}."
            )
        shapes[name] = array.shape
    if len(set(shapes.values())) > 1:
        raise ValueError(
            f"`x`'s features must share one [batch, sequence] shape; received {shapes}."
        )
    limits = {
        "token_ids": backbone.vocabulary_size,
        "segment_ids": backbone.num_segments,
        "padding_mask": 2,
    }
    for name, array in arrays.items():
        if array is None:
            continue
        if array.shape[1] > backbone.max_sequence_length:
            raise ValueError(
                f"`x[{name!r}]` has sequence length {array.shape[1]}; this model "
                f"accepts at most max_sequence_length={backbone.max_sequence_length}."
            )
        bad = (array < 0) | (array >= limits[name])
        if bad.any():
            raise ValueError(
                f"`x[{name!r}]` holds values outside [0, {limits[name]}): "
                f"{_first_bad(array, bad)}."
            )


def check_class_labels(y, num_classes, name="y"):
    """Labels must be integer class ids in [0, num_classes)."""
    array = _as_array(y)
    if array is None:
        if isinstance(y, (str, bytes)) or (
            isinstance(y, (list, tuple)) and y and isinstance(y[0], (str, bytes))
        ):
            array = np.asarray(y)
        else:
            return
    if array.dtype.kind in "USO":
        raise ValueError(
            f"`{name}` must hold integer class ids in [0, {num_classes}); received "
            f"strings such as {array.flat[0]!r}. Map each label to its index first."
        )
    if array.dtype.kind == "f":
        fractional = array[~(array == np.round(array))]  # NaN counts too
        if fractional.size:
            raise ValueError(
                f"`{name}` must hold integer class ids in [0, {num_classes}); "
                f"received non-integer values such as {fractional.flat[0]}."
            )
    elif array.dtype.kind not in "iub":
        raise ValueError(
            f"`{name}` must hold integer class ids in [0, {num_classes}); received "
            f"dtype {array.dtype}."
        )
    bad = (array < 0) | (array >= num_classes)
    if bad.any():
        raise ValueError(
            f"`{name}` holds labels outside the label set [0, {num_classes}): "
            f"{_first_bad(array, bad)}. Labels must be class ids 0..{num_classes - 1}."
        )


def check_regression_targets(y, name="y"):
    array = _as_array(y)
    if array is None:
        return
    if array.dtype.kind not in "iuf" or not np.all(np.isfinite(array)):
        raise ValueError(
            f"`{name}` must hold finite numbers for regression; received dtype "
            f"{array.dtype}" + ("" if array.dtype.kind not in "iuf" else " with NaN or inf") + "."
        )


def example_count(x):
    """Number of examples in in-memory `x`, or None."""
    if isinstance(x, dict):
        x = next(iter(x.values()), None)
    if isinstance(x, tuple) and x:
        x = x[0]
    if isinstance(x, (list, np.ndarray)):
        return len(x)
    if isinstance(x, tf.Tensor) and x.shape.rank and x.shape[0] is not None:
        return int(x.shape[0])
    return None


def check_same_count(x, y):
    count_x, count_y = example_count(x), example_count(y)
    if count_x is not None and count_y is not None and count_x != count_y:
        raise ValueError(
            f"`x` holds {count_x} examples but `y` holds {count_y} labels; "
            "they must match one to one."
        )


class TokenFeatureChecksMixin:
    """Checks in-memory token features before `fit` / `predict`.

    The embedding lookup would otherwise accept ids past the vocabulary
    (and float ids) without a word: a task taking packed features gets a
    clear error first.
    """

    def _check_token_features(self, x):
        if isinstance(x, dict) and "token_ids" in x:
            check_token_features(x, self.backbone)

    def fit(self, x=None, *args, **kwargs):
        self._check_token_features(x)
        return super().fit(x, *args, **kwargs)

    def predict(self, x=None, *args, **kwargs):
        self._check_token_features(x)
        return super().predict(x, *args, **kwargs)
