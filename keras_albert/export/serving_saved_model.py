"""A serving SavedModel that takes raw strings: tokenization in the graph.

`serving_default` takes, per task:
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

Classifiers, regressors and multiple choice run each example at the
smallest of the task's `length_buckets` that holds it (examples are
partitioned by bucket inside the graph, run, and stitched back in order),
so a batch of short texts stops paying for the padded length; outputs equal
the fixed-length ones. Per-position outputs (token classification, QA) keep
the fixed length. The export is written to a staging directory, loaded back in this process and
compared with the Keras model on `check_texts` before it is renamed into
place; a failed check leaves nothing behind and any earlier export intact.
Loading it needs `import tensorflow_text` first (the SentencePiece op).
"""


import keras
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece op)

from keras_albert.export.question_answering_serving import best_answers_over_windows
from keras_albert.export.question_answering_serving import windowed_qa_features
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import bucketed_graph_call
from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import unbucketed

PARITY_TOLERANCE = 1e-5


def _check_exportable(task, path, overwrite=False):
    if getattr(task, "preprocessor", None) is None:
        raise ValueError(
            "A serving SavedModel tokenizes raw strings, so the task needs a "
            "preprocessor. Received a task with preprocessor=None."
        )
    if not task.built:
        raise ValueError("The task is not built: call it, fit it or load it first.")
    return check_replaceable(path, "saved_model", overwrite, name="path")


def _outputs(task, logits):
    logits = tf.cast(logits, tf.float32)
    if getattr(task, "is_regression", False):
        return {"logits": logits}
    return {"logits": logits, "probabilities": tf.nn.softmax(logits, axis=-1)}


def _string_spec(name, rank=1):
    return tf.TensorSpec([None] * rank, tf.string, name=name)


def _logits(compute):
    return lambda: {"logits": np.asarray(compute(), "float32")}


def _question_answering_plan(task, texts, max_answer_length=30):
    preprocessor = task.preprocessor
    length, max_question = preprocessor.sequence_length, preprocessor.max_question_length

    def serve(question, context):
        features, byte_start, byte_end, start_allowed, example = windowed_qa_features(
            preprocessor.tokenizer, question, context, length, max_question, preprocessor.doc_stride
        )
        logits = task(features, training=False)
        return best_answers_over_windows(
            context,
            tf.cast(logits["start_logits"], tf.float32),
            tf.cast(logits["end_logits"], tf.float32),
            byte_start, byte_end, start_allowed, example, max_answer_length,
        )

    # Contexts of one and of several windows; Python's answer considers
    # every position (n_best = length), as the graph does.
    contexts = [" ".join(texts[i : i + 1 + i % 3]) for i in range(len(texts))]
    contexts = [c for c in contexts if c.strip()] or ["a"]
    questions = [" ".join(c.split()[:3]) for c in contexts]

    def expected():
        answers = task.answer(questions, contexts, n_best=length, max_answer_length=max_answer_length)
        return {
            name: np.array([a[key] for a in answers], "float32")
            for name, key in (("answer_score", "score"), ("null_score", "null_score"))
        }

    signature = [_string_spec("question"), _string_spec("context")]
    inputs = {"question": tf.constant(questions), "context": tf.constant(contexts)}
    return signature, serve, inputs, expected


def _pooled_logits(task, buckets):
    """features -> float32 logits [batch, width], in length buckets if any."""
    def call(features):
        return tf.cast(task(features, training=False), tf.float32)

    if not buckets:
        return call
    shapes = bucket_lengths(task.preprocessor.sequence_length, buckets)
    if hasattr(task, "choice_scores"):
        def empty(features):  # [0, num_choices]
            return tf.zeros(tf.stack([0, tf.shape(features["token_ids"])[1]]), tf.float32)
    else:
        def empty(features):
            return tf.zeros([0, task.num_classes], tf.float32)
    return lambda features: bucketed_graph_call(call, features, shapes, empty)


def _plan(task, pair, check_texts, buckets):
    """(input signature, serve function, check inputs, Keras logits on them)."""
    preprocessor = task.preprocessor
    texts = list(check_texts)
    if hasattr(preprocessor, "windows"):
        return _question_answering_plan(task, texts)
    logits_of = _pooled_logits(task, buckets)
    if hasattr(task, "choice_scores"):
        def serve(context, question, choices):
            x = {"context": context, "question": question, "choices": choices}
            return _outputs(task, logits_of(preprocessor(x)))

        x = {"context": texts, "question": texts, "choices": [[t, t[::-1]] for t in texts]}
        signature = [_string_spec("context"), _string_spec("question"), _string_spec("choices", 2)]
        return signature, serve, {k: tf.constant(v) for k, v in x.items()}, _logits(lambda: task.predict(x, verbose=0))
    if hasattr(task, "predict_word_labels"):
        def serve(text):
            logits = tf.cast(task(preprocessor(text), training=False), tf.float32)
            # word_ids maps each position to the word it starts (-1 elsewhere).
            return {"logits": logits, "predictions": tf.argmax(logits, -1, output_type=tf.int32),
                    "word_ids": preprocessor.word_ids(text)}

        features = preprocessor(texts)
        return [_string_spec("text")], serve, {"text": tf.constant(texts)}, _logits(lambda: task(features, training=False))
    if pair:
        def serve(text, text_pair):
            return _outputs(task, logits_of(preprocessor(x=(text, text_pair))))

        signature = [_string_spec("text"), _string_spec("text_pair")]
        inputs = {"text": tf.constant(texts), "text_pair": tf.constant(texts)}
        return signature, serve, inputs, _logits(lambda: task.predict((texts, texts), verbose=0))

    def serve(text):
        return _outputs(task, logits_of(preprocessor(text)))

    return [_string_spec("text")], serve, {"text": tf.constant(texts)}, _logits(lambda: task.predict(texts, verbose=0))


def _archive(task, signature, serve, check_inputs):
    # Tracking needs built layers; one eager call builds everything.
    serve(*check_inputs.values())
    if not task.preprocessor.built:
        # The QA path calls the tokenizer directly, not the preprocessor.
        task.preprocessor.build(None)
    archive = keras.export.ExportArchive()
    archive.track(task)
    archive.track(task.preprocessor)
    archive.add_endpoint("serving_default", serve, input_signature=signature)
    return archive


def _verify(directory, check_inputs, expected_logits):
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
    signature, serve, check_inputs, expected_logits = _plan(task, pair, check_texts, buckets)
    archive = _archive(task, signature, serve, check_inputs)
    with atomic_directory(path, "saved_model", overwrite) as staging:
        archive.write_out(str(staging), verbose=False)
        with unbucketed(task):
            difference = _verify(staging, check_inputs, expected_logits)
    return difference
