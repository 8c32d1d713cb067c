"""The tokenizer's check on its text without TensorFlow.

With TensorFlow, `tf.convert_to_tensor` and `albert_normalize_text` refuse
what is not a string or a rectangular batch of strings; the Python path
raises the same ValueErrors here, so a wrong input reads the same on every
backend (`tests/hardening/test_text_inputs.py`).
"""

import keras
import numpy as np

INT32 = np.iinfo(np.int32)


def not_text_error(inputs):
    return ValueError(f"The tokenizer takes a string or a list/array/tensor of strings. Received: {inputs!r:.200}")


def _tensorflow_dtype_name(inputs, array):
    # The dtype tf.convert_to_tensor gives Python numbers: int32 where they
    # fit, float32. NumPy's own arrays keep theirs.
    if isinstance(inputs, np.ndarray):
        return array.dtype.name
    if array.dtype == np.int64 and INT32.min <= array.min() and array.max() <= INT32.max:
        return "int32"
    if array.dtype == np.float64:
        return "float32"
    return array.dtype.name


def _only_text(inputs):
    """A rectangular batch whose items are all str or bytes."""
    try:
        items = np.asarray(inputs, dtype=object)
    except ValueError:  # ragged
        return False
    return all(isinstance(item, (str, bytes)) for item in items.flat)


def check_tokenizer_text(inputs):
    """Raises the TensorFlow path's ValueError unless `inputs` is a string
    or a list/array/tensor of strings (rank is keras-hub's to check)."""
    if isinstance(inputs, (str, bytes)):
        return
    if keras.ops.is_tensor(inputs):
        inputs = keras.ops.convert_to_numpy(inputs)
    if not isinstance(inputs, (list, tuple, np.ndarray)):
        raise not_text_error(inputs)
    try:
        array = np.asarray(inputs)
    except ValueError as error:
        # Ragged, which TensorFlow cannot convert either; or bytes that are
        # not ASCII beside str, which NumPy cannot join and TensorFlow takes.
        if _only_text(inputs):
            return
        raise not_text_error(inputs) from error
    if array.size == 0 or (array.dtype.kind in "US" and isinstance(inputs, np.ndarray)):
        return
    if array.dtype.kind in "USO":
        # NumPy turns [1, "a"] into strings; TensorFlow refuses the mix.
        if _only_text(inputs):
            return
        raise not_text_error(inputs)
    raise ValueError(
        f"`text` must be a string tensor. Received: text with dtype={_tensorflow_dtype_name(inputs, array)}"
    )
