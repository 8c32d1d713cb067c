"""Input handling shared by ALBERT preprocessors."""

import contextlib

import numpy as np
from keras import ops

from keras_albert.utils.backend import optional_tensorflow

# tf.data and serving hand TF tensors; without TensorFlow there are none.
tf = optional_tensorflow()[0]

TRUNCATE_MODES = ("round_robin", "waterfall")


def is_text(value):
    """True for strings, string arrays and string tensors."""
    if isinstance(value, (str, bytes)):
        return True
    if tf is not None and isinstance(value, (tf.Tensor, tf.RaggedTensor)):
        return value.dtype == tf.string
    if isinstance(value, np.ndarray):
        return value.dtype.kind in ("U", "S", "O") and value.size > 0 and isinstance(
            value.flat[0], (str, bytes)
        )
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, (str, bytes)) for item in value)
    return False


def text_pair_as_segments(x, y, sample_weight):
    """Reads `pre(a, b)` / `pre((a, b))` as a text pair, not text + label.

    Keras unpacks a tuple argument (and tf.data unpacks dataset elements)
    into `x, y, sample_weight`, so keras-hub silently takes the second text
    for a label. Labels are never strings for ALBERT's tasks, so a string
    `y` can only be the second segment: the rest shifts one place left.
    """
    if not isinstance(x, tuple) and y is not None and is_text(y):
        return (x, y), sample_weight, None
    return x, y, sample_weight


def is_empty_list_batch(x):
    """True for `[]` or a pair of them: keras-hub would pack those into one
    unbatched row instead of zero rows."""
    values = x if isinstance(x, tuple) else (x,)
    return all(isinstance(value, list) and not value for value in values)


def empty_packed_batch(sequence_length):
    """Zero rows of classifier inputs."""
    if tf is None:
        empty = np.zeros([0, sequence_length], np.int32)
    else:
        empty = tf.zeros([0, sequence_length], tf.int32)
    return {"token_ids": empty, "segment_ids": empty, "padding_mask": empty}


def int32_padding_mask(inputs):
    """keras-hub emits a bool mask; exported models and TFLite want int32.

    The cast keeps the kind of array keras-hub handed back: NumPy inside a
    Grain pipeline (its workers pickle NumPy, not tensors), a TF tensor in
    tf.data (whatever the Keras backend) and a backend tensor otherwise.
    """
    inputs = dict(inputs)
    mask = inputs["padding_mask"]
    if isinstance(mask, np.ndarray):
        mask = mask.astype(np.int32)
    elif tf is not None and isinstance(mask, tf.Tensor):
        mask = tf.cast(mask, tf.int32)
    else:
        mask = ops.cast(mask, "int32")
    inputs["padding_mask"] = mask
    return inputs




def check_truncate(truncate):
    if truncate not in TRUNCATE_MODES:
        raise ValueError(
            f"`truncate` must be one of {TRUNCATE_MODES}. "
            f"Received: truncate={truncate!r}"
        )


def with_static_batch_size(outputs, inputs):
    """Gives graph outputs the static batch size of the (first) input.

    Tokenizing goes through ragged tensors, which drops the batch dimension
    of `ds.batch(n, drop_remainder=True).map(preprocessor)`; TPUs and XLA
    want it back.
    """
    first = inputs[0] if isinstance(inputs, tuple) else inputs
    if tf is None or not isinstance(first, tf.Tensor) or first.shape.rank != 1:
        return outputs
    batch_size = first.shape[0]

    def restore(tensor):
        if isinstance(tensor, tf.Tensor) and tensor.shape.rank:
            tensor.set_shape([batch_size] + [None] * (tensor.shape.rank - 1))
        return tensor

    return tf.nest.map_structure(restore, outputs)


class BackboneSequenceLengthMixin:
    """A preprocessor made for a preset that has none pads to what the
    backbone accepts: `min(512, max_sequence_length)`, not a fixed 512 that
    a small model's position table cannot hold."""

    @classmethod
    def _add_missing_kwargs(cls, loader, kwargs):
        kwargs = super()._add_missing_kwargs(loader, kwargs)
        maximum = loader.config.get("config", {}).get("max_sequence_length")
        if "sequence_length" not in kwargs and maximum:
            kwargs["sequence_length"] = min(512, maximum)
        return kwargs


@contextlib.contextmanager
def padded_to(preprocessor, sequence_length):
    """Temporarily pads `preprocessor` (and its packer) to `sequence_length`."""
    packer = getattr(preprocessor, "packer", None)
    saved = preprocessor.sequence_length
    preprocessor.sequence_length = sequence_length
    if packer is not None:
        packer.sequence_length = sequence_length
    try:
        yield preprocessor
    finally:
        preprocessor.sequence_length = saved
        if packer is not None:
            packer.sequence_length = saved


def check_text_segments(x, preprocessor_name):
    """Raw text in, with pairs of equal batch size; never a feature dict."""
    if isinstance(x, dict):
        raise ValueError(
            f"`{preprocessor_name}` takes raw strings (or a pair of string "
            f"batches); received a dict with keys {sorted(x)}. To feed token "
            "features directly, set `task.preprocessor = None`."
        )
    if not isinstance(x, tuple) or len(x) < 2:
        return
    sizes = []
    for segment in x:
        if isinstance(segment, (list, np.ndarray)):
            sizes.append(len(segment))
        elif tf is not None and isinstance(segment, tf.Tensor) and segment.shape.rank:
            sizes.append(segment.shape[0])
        else:
            sizes.append(None)
    known = {size for size in sizes if size is not None}
    if len(known) > 1:
        raise ValueError(
            "Text pairs need as many second texts as first texts; received "
            f"segments of batch sizes {sizes} in `x`."
        )
