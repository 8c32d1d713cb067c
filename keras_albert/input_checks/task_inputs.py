"""Checks on what users pass to tasks: raw inputs, token features, labels.

Keras and XLA see only tensors, so a float id is silently truncated, an id
past the vocabulary reads another row, and a label outside the classes
gives a NaN loss (or a message naming an internal op). These checks run on
in-memory arrays before Keras does and say which argument is wrong, the
bad value and what is accepted. Datasets and symbolic tensors pass through;
a dataset's class labels are asserted as its batches arrive.
"""

import contextlib
import functools
import re

import keras
import numpy as np

from keras_albert.utils.backend import is_batch_stream
from keras_albert.utils.backend import is_tf_dataset
from keras_albert.utils.backend import is_tf_tensor
from keras_albert.utils.backend import optional_tensorflow

# Datasets and tensors of TensorFlow's are checked where TensorFlow exists.
tf = optional_tensorflow()[0]

FEATURE_NAMES = ("token_ids", "segment_ids", "padding_mask")


def _as_array(value):
    """A NumPy array for in-memory data, None for what we cannot inspect."""
    if is_tf_tensor(value) and isinstance(value, tf.Tensor):
        return value.numpy() if tf.executing_eagerly() and hasattr(value, "numpy") else None
    if is_batch_stream(value) or is_tf_tensor(value) or value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray, int, float, np.generic)):
        try:
            return np.asarray(value)
        except ValueError:  # ragged nested lists
            return None
    return None


def array_shape(value):
    """Shape of in-memory `value`, () when it cannot be inspected."""
    array = _as_array(value)
    return () if array is None else array.shape


def _first_bad(array, bad):
    values = np.unique(array[bad])
    shown = ", ".join(str(v) for v in values[:5])
    return shown + (", ..." if len(values) > 5 else "")


def check_feature_keys(x, backbone):
    """Every input the backbone takes is in `x`: Keras's own message for a
    missing one names the keys on TensorFlow, but not on JAX ("Output ...
    is not connected to `inputs`")."""
    expected = sorted(backbone.input)  # a functional model's dict of named inputs
    missing = [name for name in expected if name not in x]
    if missing:
        raise ValueError(
            f"`x` lacks the features {missing}: this model takes a dict with "
            f"the keys {expected}; received {describe(x)}."
        )


def check_token_features(x, backbone, rank=2):
    """Validates a dict of `token_ids` / `segment_ids` / `padding_mask`
    ([batch, sequence], or [batch, num_choices, sequence] with rank=3)."""
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
        if array.ndim != rank:
            layout = "[batch, sequence]" if rank == 2 else "[batch, num_choices, sequence]"
            raise ValueError(
                f"`x[{name!r}]` must be {rank}-D {layout}; received shape "
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
        if array.shape[-1] > backbone.max_sequence_length:
            raise ValueError(
                f"`x[{name!r}]` has sequence length {array.shape[-1]}; this model "
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
    if is_tf_tensor(x) and isinstance(x, tf.Tensor) and x.shape.rank and x.shape[0] is not None:
        return int(x.shape[0])
    return None


def choice_count(x):
    """Choices per example of in-memory multiple-choice `x`, or None."""
    if not isinstance(x, dict):
        return None
    if "token_ids" in x:
        shape = array_shape(x["token_ids"])
        return shape[1] if len(shape) == 3 else None
    choices = x.get("choices")
    if isinstance(choices, (list, tuple, np.ndarray)) and len(choices) and hasattr(choices[0], "__len__"):
        return len(choices[0])
    return None


def check_word_labels(x, y, num_classes):
    """In-memory word labels: one class id in [0, num_classes) per word."""
    if not (isinstance(x, (list, tuple)) and isinstance(y, (list, tuple, np.ndarray))):
        return
    check_same_count(x, y)
    rows = []
    for index, (words, labels) in enumerate(zip(x, y)):
        words = words.split() if isinstance(words, str) else list(words)
        labels = list(np.asarray(labels).reshape(-1))
        if len(labels) != len(words):
            raise ValueError(
                f"`y[{index}]` holds {len(labels)} labels for the {len(words)} words of "
                f"`x[{index}]`; pass one label per word."
            )
        rows.extend(labels)
    check_class_labels(np.asarray(rows), num_classes)


def check_same_count(x, y):
    count_x, count_y = example_count(x), example_count(y)
    if count_x is not None and count_y is not None and count_x != count_y:
        raise ValueError(
            f"`x` holds {count_x} examples but `y` holds {count_y} labels; "
            "they must match one to one."
        )


class TokenFeatureChecksMixin:
    """Checks in-memory inputs before `fit` / `predict` / `evaluate`.

    Raw inputs are checked against what the task's preprocessor packs
    (`raw_input_kind`: "texts", "word_lists", "choices", "windows" or
    "packed"; see `ACCEPTED_INPUTS`), token
    features against the backbone: the embedding lookup would otherwise
    accept ids past the vocabulary (and float ids) without a word.
    """

    raw_input_kind = "packed"
    feature_rank = 2

    def _check_x(self, x):
        kind = self.raw_input_kind if self.preprocessor is not None else "packed"
        check_raw_inputs(x, kind, num_segments=self.backbone.num_segments)
        if isinstance(x, dict) and "token_ids" in x:
            if self.preprocessor is None:
                check_feature_keys(x, self.backbone)
            check_token_features(x, self.backbone, rank=self.feature_rank)

    def _check_labels(self, x, y):
        """Task-specific checks of in-memory labels (none by default)."""

    def _with_label_checks(self, x):
        """`x`, a dataset, with its labels checked as it runs (not by default)."""
        return x

    def fit(self, x=None, y=None, *args, **kwargs):
        self._check_x(x)
        self._check_labels(x, y)
        if kwargs.get("validation_split"):
            # keras-hub splits arrays only, and refused Python lists of texts
            # with one "<class 'str'>" per text.
            x, y = _as_arrays(x), _as_arrays(y)
        if not args:
            # keras-hub feeds in-memory inputs as a dataset in their given
            # order and a dataset as is, so Keras' default `shuffle=True`
            # does nothing but warn on every call. Shuffle a dataset (or the
            # arrays) before `fit`; an explicit `shuffle=True` still warns.
            kwargs.setdefault("shuffle", False)
        with label_check_errors():
            return super().fit(self._with_label_checks(x), y, *args, **kwargs)

    def predict(self, x=None, *args, **kwargs):
        self._check_x(x)
        return super().predict(x, *args, **kwargs)

    def evaluate(self, x=None, y=None, *args, **kwargs):
        if kwargs.get("_use_cached_eval_dataset"):  # fit's per-epoch validation
            return super().evaluate(x, y, *args, **kwargs)
        self._check_x(x)
        self._check_labels(x, y)
        with label_check_errors():
            return super().evaluate(self._with_label_checks(x), y, *args, **kwargs)

def _as_arrays(data):
    """Python lists (alone, or in a tuple or dict) as NumPy arrays."""
    if isinstance(data, list):
        return np.asarray(data)
    if isinstance(data, tuple):
        return tuple(_as_arrays(part) for part in data)
    if isinstance(data, dict):
        return {name: _as_arrays(value) for name, value in data.items()}
    return data


# === Raw inputs of the task models, checked before Keras traces them ===
# keras-hub hands whatever `x` is to a tf.data map, so a wrong input fails
# deep inside autograph (or as a TensorFlow error at the embedding) with a
# message that names neither `x` nor what to pass. These look at in-memory
# inputs only; datasets and packed feature dicts pass through.

_PACKED = "packed features (a dict with 'token_ids', 'segment_ids', 'padding_mask')"
ACCEPTED_INPUTS = {
    "texts": (
        "a list (or NumPy array, or 1-D string tensor) of texts; a tuple of "
        "such lists of equal length, one per segment (at most {num_segments}: "
        "text pairs); " + _PACKED + "; or a tf.data.Dataset"
    ),
    "word_lists": (
        "a list of word lists (lists of str), a list of texts (split on "
        "whitespace) or a ragged string tensor; " + _PACKED + "; or a tf.data.Dataset"
    ),
    "choices": (
        "a dict with 'context' [batch] and 'choices' [batch, num_choices] "
        "strings (and optional 'question' [batch]); " + _PACKED + "; or a tf.data.Dataset"
    ),
    "packed": _PACKED + ", or a tf.data.Dataset of them",
    "windows": (
        "a `(questions, contexts)` pair of lists of strings (windowed for you), "
        + _PACKED + " as `preprocessor.windows(questions, contexts).features` "
        "gives them, or a tf.data.Dataset of them; for answers to raw "
        "questions and contexts call `answer(questions, contexts)`"
    ),
}


def _shown(value, limit=80):
    text = repr(value)
    return text[:limit] + ("..." if len(text) > limit else "")


def describe(value):
    """A short description of what was received, for error messages."""
    if value is None:
        return "None"
    if isinstance(value, dict):
        return f"a dict with keys {sorted(map(str, value))}"
    if isinstance(value, (list, tuple)):
        kind = type(value).__name__
        if not value:
            return f"an empty {kind}"
        return f"a {kind} of {len(value)} items: {_shown(value)}"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of dtype {value.dtype} and shape {value.shape}"
    if is_tf_tensor(value):
        return f"a {type(value).__name__} of dtype {value.dtype.name} and shape {value.shape}"
    return f"{type(value).__name__} {_shown(value)}"


def _check_text(item, name, accepted):
    """One text: str or bytes, and str must be encodable as UTF-8."""
    if isinstance(item, bytes):
        return
    if not isinstance(item, str):
        raise ValueError(
            f"`{name}` must be a text (str or bytes); received {describe(item)}. "
            f"Accepted: {accepted}."
        )
    try:
        item.encode("utf-8")
    except UnicodeEncodeError as error:
        # A lone surrogate (as a mis-decoded file or json.loads can give).
        start = error.start
        raise ValueError(
            f"`{name}` is not valid Unicode: it holds a lone surrogate "
            f"{item[start]!r} at character {start} (in "
            f"{item[max(0, start - 20):start + 20]!r}), which UTF-8 cannot encode. "
            "Pass valid text, e.g. `text.encode('utf-8', 'replace').decode()`, "
            "or UTF-8 bytes."
        ) from None


def _as_items(value, name, accepted):
    """The items of a batch (list, tuple or array), or None for a string tensor."""
    if is_tf_tensor(value):
        if value.dtype != tf.string:
            raise ValueError(f"`{name}` must hold strings; received {describe(value)}. Accepted: {accepted}.")
        return None
    if isinstance(value, (str, bytes)):
        raise ValueError(
            f"`{name}` must be a batch, not a single text; received "
            f"{describe(value)}. Wrap it in a list: `[text]`."
        )
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "USO" or value.ndim == 0:
            raise ValueError(f"`{name}` must hold strings; received {describe(value)}. Accepted: {accepted}.")
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"`{name}` must be {accepted}; received {describe(value)}.")
    if not value:
        raise ValueError(
            f"`{name}` is empty; pass at least one example. Accepted: {accepted}."
        )
    return list(value)


def _check_texts(value, name, accepted):
    items = _as_items(value, name, accepted)
    for index, item in enumerate(items or ()):
        _check_text(item, f"{name}[{index}]", accepted)
    return None if items is None else len(items)


def _is_packed(x):
    return isinstance(x, dict) and "token_ids" in x


def check_raw_inputs(x, kind, num_segments=2, name="x"):
    """Checks `x` for a task that packs `kind` inputs ("texts",
    "word_lists", "choices"; "packed" for a task without a preprocessor).

    Raises ValueError naming the argument, what was received and what is
    accepted. Datasets, symbolic inputs and packed feature dicts pass.
    """
    accepted = ACCEPTED_INPUTS[kind].format(num_segments=num_segments)
    if is_batch_stream(x) or _is_packed(x) or keras_tensor_like(x):
        return
    if x is None:
        raise ValueError(f"`{name}` is None. Pass {accepted}.")
    if kind in ("packed", "windows"):
        raise ValueError(f"`{name}` must be {accepted}; received {describe(x)}.")
    if kind == "texts":
        segments = x if isinstance(x, tuple) else (x,)
        if isinstance(x, tuple) and not 1 <= len(x) <= num_segments:
            raise ValueError(
                f"`{name}` as a tuple holds one batch of texts per segment, at "
                f"most {num_segments} (this model's `num_segments`); received "
                f"a tuple of {len(x)}. Accepted: {accepted}."
            )
        if isinstance(x, dict):
            raise ValueError(f"`{name}` must be {accepted}; received {describe(x)}.")
        for index, segment in enumerate(segments):
            _check_texts(segment, f"{name}[{index}]" if isinstance(x, tuple) else name, accepted)
        return
    if kind == "word_lists":
        items = _as_items(x, name, accepted)
        for index, item in enumerate(items or ()):
            if isinstance(item, (list, tuple, np.ndarray)):
                for position, word in enumerate(list(item)):
                    _check_text(word, f"{name}[{index}][{position}]", accepted)
            else:
                _check_text(item, f"{name}[{index}]", accepted)
        return
    # Multiple choice.
    if not isinstance(x, dict) or "context" not in x or "choices" not in x:
        raise ValueError(f"`{name}` must be {accepted}; received {describe(x)}.")
    unknown = sorted(set(x) - {"context", "question", "choices"})
    if unknown:
        raise ValueError(
            f"`{name}` has keys {unknown} that are not used; accepted keys are "
            "'context', 'question' (optional) and 'choices'."
        )
    count = _check_texts(x["context"], f"{name}['context']", accepted)
    if x.get("question") is not None:
        questions = _check_texts(x["question"], f"{name}['question']", accepted)
        if None not in (count, questions) and questions != count:
            raise ValueError(
                f"`{name}['question']` holds {questions} questions for {count} contexts; "
                "pass one question per context."
            )
    choices = x["choices"]
    if is_tf_tensor(choices):
        return
    rows = _as_items(choices, f"{name}['choices']", accepted)
    widths = set()
    for index, row in enumerate(rows):
        row = _as_items(row, f"{name}['choices'][{index}]", accepted)
        for position, choice in enumerate(row or ()):
            _check_text(choice, f"{name}['choices'][{index}][{position}]", accepted)
        widths.add(None if row is None else len(row))
    if len(widths) > 1:
        raise ValueError(
            f"`{name}['choices']` must give every example the same number of "
            f"choices; received rows of {sorted(w for w in widths if w is not None)} choices."
        )
    if count is not None and len(rows) != count:
        raise ValueError(
            f"`{name}['choices']` holds {len(rows)} rows for {count} contexts; "
            "pass one row of choices per context."
        )


def keras_tensor_like(x):
    """True for symbolic inputs (Keras tensors), which carry no values."""
    leaves = x if isinstance(x, (list, tuple)) else [x]
    return any(type(leaf).__name__ == "KerasTensor" for leaf in leaves)


# === Labels in a dataset (tf.data or grain): checked as batches arrive ===
# A dataset's values are unknown until it runs, so the check rides in a
# dataset map: a tf.data assert, whose message is raised again as a
# ValueError, or a NumPy check on grain's batches, which raises it directly.

LABEL_CHECK_TAG = "[keras_albert label check]"


def uses_sparse_labels(model):
    """True when the compiled loss takes class ids (not one-hot or soft targets)."""
    loss = getattr(model, "loss", None)
    if isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        return True
    return loss in ("sparse_categorical_crossentropy", keras.losses.sparse_categorical_crossentropy)


_ARGMAX_FIXES = {
    False: "`y.argmax(-1)`",
    "tf.data": "`dataset.map(lambda x, y: (x, tf.argmax(y, -1)))`",
    "grain": "`dataset.map(lambda batch: (batch[0], batch[1].argmax(-1), *batch[2:]))`",
}


def check_not_one_hot(shape, num_classes, in_dataset=False):
    """Class-id labels are [batch] (or [batch, 1]); [batch, num_classes] is one-hot.

    `in_dataset`: False for in-memory labels, else the kind of dataset they
    come in ("tf.data" or "grain"; True means "tf.data"), which words the fix.
    """
    if len(shape) >= 2 and shape[-1] not in (None, 1):
        in_dataset = "tf.data" if in_dataset is True else in_dataset
        where = "`y` in the dataset" if in_dataset else "`y`"
        fix = _ARGMAX_FIXES[in_dataset]
        raise ValueError(
            f"{where} has shape {tuple(shape)}: one-hot or per-class targets, but "
            f"this classifier's loss takes integer class ids in [0, {num_classes}), "
            f"shape [batch]. Pass class ids ({fix}), or compile with "
            "`loss=keras.losses.CategoricalCrossentropy(from_logits=True)`."
        )


def _strings_message(num_classes, name):
    return (
        f"`{name}` in the dataset holds strings; this classifier takes integer "
        f"class ids in [0, {num_classes}). Map each label to its index first."
    )


def _outside_message(num_classes, name):
    return (
        f"`{name}` in the dataset holds labels outside the label set "
        f"[0, {num_classes}); labels must be integer class ids 0..{num_classes - 1}."
    )


def with_label_checks(dataset, num_classes, name="y"):
    """`dataset` (tf.data or grain) with each batch's class-id labels
    checked in [0, num_classes).

    Elements must be (x, y) or (x, y, sample_weight) with y a tensor (an
    array in a grain dataset); other structures pass unchanged. One-hot
    labels are refused at once in tf.data (the spec shows them), at the
    first batch in grain.
    """
    if not is_tf_dataset(dataset):
        return dataset.map(functools.partial(_checked_batch, num_classes=num_classes, name=name))
    spec = dataset.element_spec
    if not isinstance(spec, tuple) or len(spec) < 2 or not isinstance(spec[1], tf.TensorSpec):
        return dataset
    y_spec = spec[1]
    if y_spec.dtype == tf.string:
        raise ValueError(_strings_message(num_classes, name))
    if y_spec.shape.rank is not None:
        check_not_one_hot(y_spec.shape.as_list(), num_classes, in_dataset="tf.data")
    message = f"{LABEL_CHECK_TAG} {_outside_message(num_classes, name)}"

    def check(x, y, *rest):
        checks = [
            tf.debugging.assert_greater_equal(y, tf.zeros([], y.dtype), message=message),
            tf.debugging.assert_less(y, tf.cast(num_classes, y.dtype), message=message),
        ]
        if y.dtype.is_floating:
            checks.append(tf.debugging.assert_equal(y, tf.round(y), message=message))
        with tf.control_dependencies(checks):
            return (x, tf.identity(y), *rest)

    return dataset.map(check)


def _shown_labels(y, limit=20):
    # As TensorFlow's assert shows them: "[-1 1]", not NumPy's aligned "[-1  1]".
    values = y.reshape(-1).tolist()
    return "[" + " ".join(map(str, values[:limit])) + (" ..." if len(values) > limit else "") + "]"


def _checked_batch(batch, num_classes, name):
    """A grain batch (NumPy arrays) whose labels are class ids, else a
    ValueError worded as the tf.data check's."""
    if not isinstance(batch, tuple) or len(batch) < 2 or not isinstance(batch[1], np.ndarray):
        return batch
    y = batch[1]
    if y.dtype.kind in "USO":
        raise ValueError(_strings_message(num_classes, name))
    check_not_one_hot(y.shape, num_classes, in_dataset="grain")
    bad = (y < 0) | (y >= num_classes)
    if y.dtype.kind == "f":
        bad |= y != np.round(y)  # NaN counts too
    if bad.any():
        raise ValueError(
            f"{_outside_message(num_classes, name)} Received a batch with labels {_shown_labels(y)}."
            " Batches before the bad one may already have updated the weights."
        )
    return batch


@contextlib.contextmanager
def label_check_errors():
    """Turns a failed `with_label_checks` assert into a ValueError that
    keeps its message and the offending values, without the graph dump."""
    try:
        yield
    except _invalid_argument_errors() as error:
        text = error.message
        if LABEL_CHECK_TAG not in text:
            raise
        # The assert's text: "<message>] [Condition ...] [x (...) = ] [0 7] [y ...".
        start = text.index(LABEL_CHECK_TAG) + len(LABEL_CHECK_TAG)
        parts = [part.strip() for part in re.split(r"\]\s*\[", text[start:])]
        received = ""
        for index, part in enumerate(parts[:-1]):
            if part.startswith("x ("):
                received = f" Received a batch with labels [{parts[index + 1].rstrip(']')}]."
                break
        raise ValueError(
            parts[0] + received
            + " Batches before the bad one may already have updated the weights."
        ) from None


def _invalid_argument_errors():
    return (tf.errors.InvalidArgumentError,) if tf is not None else ()
