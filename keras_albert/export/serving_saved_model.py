"""A serving SavedModel that takes raw strings: tokenization in the graph.

`serving_default` is the task's serving signature (`serving_signature(task, ...)`); per task:
- classifiers and regressors: `text` (and `text_pair` for pair tasks) ->
  `logits` and, for classifiers, `probabilities` (regressors' outputs are
  not squashed);
- multiple choice: `context`, `question` [batch] and `choices` [batch,
  num_choices] -> `logits`, `probabilities`;
- token classification: `text` (split on whitespace) -> per-position
  `logits` and `predictions`, and `word_ids` (the word each position
  starts, -1 elsewhere);
- span QA: `question`, `context` -> the best `answer` over all windows of
  a long context (a byte-exact substring of the context, with
  `answer_start_byte` / `answer_end_byte`), `answer_score`, `null_score`
  ([CLS]; SQuAD v2 callers compare the two), and the `start_logits` /
  `end_logits` of the window the answer came from. Windows, max-context
  rule and span choice are those of `model.answer`.
- causal LM: `prompt` -> `text` (greedy `generate` with the key/value
  cache, stopping at `[SEP]`), `token_ids`, `padding_mask`.

Classifiers, regressors and multiple choice run each example at the
smallest of the task's `length_buckets` that holds it (examples are
partitioned by bucket inside the graph, run, and stitched back in order),
so a batch of short texts stops paying for the padded length; outputs equal
the fixed-length ones. Per-position outputs (token classification, QA) keep
the fixed length. The export is written to a staging directory, loaded back in this process and
compared with the Keras model on `check_texts` before it is renamed into
place; a failed check leaves nothing behind and any earlier export intact.
A task with `label_names` gets labels.txt beside saved_model.pb (line i
names class id i), which `python -m keras_albert predict` reads.
Loading it needs `import tensorflow_text` first (the SentencePiece op).
"""

import logging

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece op)

from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import unbucketed
from keras_albert.serving.serving_signature import check_serving_preprocessor
from keras_albert.serving.task_signatures import serving_signature
from keras_albert.serving.task_signatures import supports_serving
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.label_file import write_label_file
from keras_albert.utils.native_notices import SAVED_MODEL_NOTICES
from keras_albert.utils.native_notices import notices_held_back
from keras_albert.utils.progress import logged_step

PARITY_TOLERANCE = 1e-5
_logger = logging.getLogger(__name__)


def _check_exportable(task, path, overwrite=False):
    # The signature traces the Keras model into a TensorFlow graph: on JAX
    # jax2tf fails deep inside with an unrelated dtype error.
    require_tensorflow("A serving SavedModel", backend_too=True)
    check_serving_preprocessor(task)
    if not supports_serving(task):
        raise ValueError(
            "A serving SavedModel serves what the task's serving signature "
            "(keras_albert.serving.task_signatures) defines (AlbertClassifier, AlbertMultipleChoice, "
            "AlbertTokenClassifier, AlbertQuestionAnswerer, AlbertCausalLM). Received: "
            f"{type(task).__name__}"
        )
    if not task.built:
        raise ValueError("The task is not built: call it, fit it or load it first.")
    return check_replaceable(path, "saved_model", overwrite, name="path")


def _archive(task, signature):
    # Tracking needs built layers; one eager call builds everything.
    signature.serve(**signature.example_inputs)
    if not task.preprocessor.built:
        # The QA path calls the tokenizer directly, not the preprocessor.
        task.preprocessor.build(None)
    archive = keras.export.ExportArchive()
    archive.track(task)
    archive.track(task.preprocessor)
    archive.add_endpoint("serving_default", signature.serve, input_signature=signature.input_specs)
    return archive


def _verify(directory, check_inputs, expected_logits):
    with notices_held_back(SAVED_MODEL_NOTICES):
        loaded = tf.saved_model.load(str(directory))
        served = loaded.signatures["serving_default"](**check_inputs)
    expected = expected_logits()  # at the full length: the reference
    difference = max(
        float(np.abs(served[name].numpy() - value).max()) for name, value in expected.items()
    )
    # float32 rounding grows with the logits: 1e-5 for logits up to 1.
    scale = max(1.0, max(float(np.abs(value).max()) for value in expected.values()))
    if not difference <= PARITY_TOLERANCE * scale:
        raise ValueError(
            f"The exported SavedModel disagrees with the Keras model by "
            f"{difference:.2e} (max abs logit; allowed {PARITY_TOLERANCE * scale:.1e}). "
            "Nothing was written."
        )
    return difference


def export_serving_saved_model(
    task, path, pair=False, check_texts=None, length_buckets="auto", overwrite=False
):
    """Exports `task` (with its preprocessor) for serving raw strings.

    Args:
        task: a task model with a preprocessor, e.g. `AlbertClassifier`.
        path: the directory to write; replaced only after the new export
            passed its check.
        pair: True for sentence-pair tasks (`text` and `text_pair` inputs).
        check_texts: strings to compare the export with the Keras model on.
        length_buckets: padded lengths the served examples are run at
            (classifiers, regressors, multiple choice); "auto" takes the
            task's `length_buckets`, None pads everything to the full length.
        overwrite: replace `path` even if it is not a SavedModel.

    Returns the max abs logit difference measured on `check_texts`.
    """
    path = _check_exportable(task, path, overwrite)
    check_texts = list(check_texts or ["A short check sentence.", "Another, longer one!"])
    if length_buckets == "auto":
        length_buckets = getattr(task, "length_buckets", None)
    buckets = check_buckets(length_buckets)
    with logged_step(_logger, "Tracing the serving signature"):
        signature = serving_signature(task, check_texts, length_buckets=buckets, pair=pair)
        archive = _archive(task, signature)
    with atomic_directory(path, "saved_model", overwrite) as staging:
        with logged_step(_logger, f"Writing the SavedModel for {str(path)!r}"):
            archive.write_out(str(staging), verbose=False)
        if getattr(task, "label_names", None):
            # Every class's name, line i naming class id i: the served
            # `labels` names only the predicted class.
            write_label_file(staging, task.label_names)
        with logged_step(_logger, f"Checking the SavedModel against Keras on {len(check_texts)} texts"):
            with unbucketed(task):
                difference = _verify(staging, signature.example_inputs, signature.expected_outputs)
    return difference
