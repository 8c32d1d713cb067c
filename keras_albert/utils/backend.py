"""Which Keras backend runs, and TensorFlow for the features that need it.

The training core (layers, models, pretraining, fine-tuning) runs on the
tensorflow, jax and torch backends. Export (SavedModel, TF-Hub, TFLite),
tf.distribute and TFRecords are TensorFlow's own: they import it when used,
through `require_tensorflow`, which says in one line what is missing.
"""

import importlib
import importlib.util
import os
import sys

SUPPORTED_BACKENDS = ("tensorflow", "jax", "torch")
# The module each backend needs, and what to install for it.
_BACKEND_PACKAGES = {
    "tensorflow": ("tensorflow", "pip install tensorflow"),
    "jax": ("jax", "pip install jax"),
    "torch": ("torch", "pip install torch"),
}


class BackendError(ImportError):
    """The Keras backend asked for is unknown to us or not installed."""


class TensorFlowRequiredError(ImportError):
    """A TensorFlow-only feature was used without TensorFlow (or on
    another Keras backend)."""


def requested_backend():
    """The backend Keras runs (or will run) on, without importing Keras
    when it is not imported yet."""
    keras = sys.modules.get("keras")
    if keras is not None and hasattr(keras, "config"):
        return keras.config.backend()
    return os.environ.get("KERAS_BACKEND", "tensorflow")


def check_backend():
    """Raises `BackendError` (one line) unless the backend is one we run on
    and its library is installed; returns its name."""
    name = requested_backend()
    if name not in SUPPORTED_BACKENDS:
        raise BackendError(
            f"keras_albert runs on KERAS_BACKEND={'|'.join(SUPPORTED_BACKENDS)}. "
            f"Received: KERAS_BACKEND={name!r}"
        )
    module, install = _BACKEND_PACKAGES[name]
    if not _installed(module):
        raise BackendError(
            f"KERAS_BACKEND={name} needs the {module!r} package, which is not "
            f"installed: {install} (or choose another KERAS_BACKEND)."
        )
    return name


def _installed(module):
    if module in sys.modules:  # None there: made unimportable
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # a half-removed package
        return False


def tensorflow_available():
    """True if TensorFlow can be imported (without importing it)."""
    return _installed("tensorflow")


def require_tensorflow(feature, backend_too=True):
    """Imports and returns TensorFlow for `feature`, or raises a one-line
    `TensorFlowRequiredError`.

    With `backend_too`, Keras must also run on TensorFlow: the feature
    traces the Keras model into a TensorFlow graph (export, tf.distribute).
    """
    if not tensorflow_available():
        raise TensorFlowRequiredError(
            f"{feature} needs TensorFlow, which is not installed: pip install "
            "tensorflow tensorflow-text (training and presets work without it)."
        )
    backend = requested_backend()
    if backend_too and backend != "tensorflow":
        raise TensorFlowRequiredError(
            f"{feature} needs KERAS_BACKEND=tensorflow; this process runs "
            f"KERAS_BACKEND={backend}. Presets saved here load there unchanged."
        )
    # Imported already, it is taken from sys.modules: callers run inside
    # tf.function traces, where AutoGraph warned that it could not convert
    # importlib's `_gcd_import` (three lines on stderr in `export --format=tfhub`).
    return sys.modules.get("tensorflow") or importlib.import_module("tensorflow")


def is_tf_dataset(value):
    """True for a `tf.data.Dataset`, without importing TensorFlow."""
    tensorflow = sys.modules.get("tensorflow")
    return tensorflow is not None and isinstance(value, tensorflow.data.Dataset)


def optional_tensorflow():
    """`(tensorflow, tensorflow_text)`, each None where not installed.

    For modules whose TensorFlow paths (tf.data maps, serving graphs) sit
    beside Python ones: keras-hub imports TensorFlow the same way whenever
    it is installed, whatever the backend.
    """
    if not tensorflow_available():
        return None, None
    tensorflow = importlib.import_module("tensorflow")
    try:
        tensorflow_text = importlib.import_module("tensorflow_text")
    except ImportError:
        tensorflow_text = None
    return tensorflow, tensorflow_text


def is_tf_tensor(value):
    """True for a dense or ragged TensorFlow tensor, without importing
    TensorFlow (there are none where it is not imported)."""
    tensorflow = sys.modules.get("tensorflow")
    return tensorflow is not None and isinstance(
        value, (tensorflow.Tensor, tensorflow.RaggedTensor)
    )


def is_batch_stream(value):
    """True for what yields ready batches: a `tf.data.Dataset`, a Keras
    `PyDataset` or a grain dataset (what keras-hub's tasks take without
    TensorFlow), without importing TensorFlow or grain."""
    if is_tf_dataset(value):
        return True
    keras = sys.modules.get("keras")
    if keras is not None and isinstance(value, keras.utils.PyDataset):
        return True
    return is_grain_dataset(value)


def is_grain_dataset(value):
    """True for a grain `MapDataset` or `IterDataset`, without importing grain."""
    grain = sys.modules.get("grain")  # not imported: `value` cannot be one
    datasets = tuple(getattr(grain, name, None) for name in ("MapDataset", "IterDataset"))
    return grain is not None and None not in datasets and isinstance(value, datasets)
