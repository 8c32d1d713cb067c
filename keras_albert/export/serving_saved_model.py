"""A serving SavedModel that takes raw strings: tokenization in the graph.

`serving_default` takes `text` (and `text_pair` for pair tasks) as a string
vector and returns `logits` and, for classifiers, `probabilities`
(regressors return `logits` only: their outputs are not squashed). The
export is written to a staging directory, loaded back in this process and
compared with the Keras model on `check_texts` before it is renamed into
place; a failed check leaves nothing behind and any earlier export intact.
Loading it needs `import tensorflow_text` first (the SentencePiece op).
"""

import pathlib

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece op)

from keras_albert.models.atomic_directory import atomic_directory

PARITY_TOLERANCE = 1e-5


def _check_exportable(task, path):
    if getattr(task, "preprocessor", None) is None:
        raise ValueError(
            "A serving SavedModel tokenizes raw strings, so the task needs a "
            "preprocessor. Received a task with preprocessor=None."
        )
    if not task.built:
        raise ValueError("The task is not built: call it, fit it or load it first.")
    path = pathlib.Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"`path` {str(path)!r} exists and is a file, not a directory.")
    return path


def _outputs(task, logits):
    logits = tf.cast(logits, tf.float32)
    if getattr(task, "is_regression", False):
        return {"logits": logits}
    return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1)}


def _archive(task, pair):
    preprocessor = task.preprocessor
    if not preprocessor.built:
        # Tracking needs a built layer; one call builds it.
        sample = tf.constant(["x"])
        preprocessor(x=(sample, sample)) if pair else preprocessor(sample)
    archive = keras.export.ExportArchive()
    archive.track(task)
    archive.track(preprocessor)
    text = tf.TensorSpec([None], tf.string, name="text")
    if pair:
        def serve(text, text_pair):
            features = preprocessor(x=(text, text_pair))
            return _outputs(task, task(features, training=False))

        signature = [text, tf.TensorSpec([None], tf.string, name="text_pair")]
    else:
        def serve(text):
            return _outputs(task, task(preprocessor(text), training=False))

        signature = [text]
    archive.add_endpoint("serving_default", serve, input_signature=signature)
    return archive


def _verify(task, directory, check_texts, pair):
    loaded = tf.saved_model.load(str(directory))
    serve = loaded.signatures["serving_default"]
    texts = tf.constant(list(check_texts))
    if pair:
        served = serve(text=texts, text_pair=texts)["logits"].numpy()
        expected = task.predict((list(check_texts), list(check_texts)), verbose=0)
    else:
        served = serve(text=texts)["logits"].numpy()
        expected = task.predict(list(check_texts), verbose=0)
    difference = float(np.abs(served - np.asarray(expected, "float32")).max())
    if not difference <= PARITY_TOLERANCE:
        raise ValueError(
            f"The exported SavedModel disagrees with the Keras model by "
            f"{difference:.2e} (max abs logit; allowed {PARITY_TOLERANCE}). "
            "Nothing was written."
        )
    return difference


def export_serving_saved_model(task, path, pair=False, check_texts=None):
    """Exports `task` (with its preprocessor) for serving raw strings.

    Args:
        task: a task model with a preprocessor, e.g. `AlbertClassifier`.
        path: the directory to write; replaced only after the new export
            passed its check.
        pair: True for sentence-pair tasks (`text` and `text_pair` inputs).
        check_texts: strings to compare the export with the Keras model on.

    Returns the max abs logit difference measured on `check_texts`.
    """
    path = _check_exportable(task, path)
    check_texts = list(check_texts or ["A short check sentence.", "Another, longer one!"])
    archive = _archive(task, pair)
    with atomic_directory(path) as staging:
        archive.write_out(str(staging), verbose=False)
        difference = _verify(task, staging, check_texts, pair)
    return difference
