"""What each task serves from raw strings: its `ServingSignature`.

`serving_signature(task, check_texts, ...)` picks the task's function;
`keras_albert.export.export_serving_saved_model` writes what it returns.
TensorFlow-only: the signatures are TensorFlow graphs (tokenization
inside), traced from Keras models running on the TensorFlow backend.
"""

import numpy as np
import tensorflow as tf

from keras_albert.models.albert_causal_lm import AlbertCausalLM
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_multiple_choice import AlbertMultipleChoice
from keras_albert.models.albert_question_answerer import AlbertQuestionAnswerer
from keras_albert.models.albert_token_classifier import AlbertTokenClassifier
from keras_albert.serving.causal_lm_signature import causal_lm_signature
from keras_albert.serving.question_answering_serving import best_answers_over_windows
from keras_albert.serving.question_answering_serving import windowed_qa_features
from keras_albert.serving.serving_signature import ServingSignature
from keras_albert.serving.serving_signature import argmax_label_names
from keras_albert.serving.serving_signature import check_serving_preprocessor
from keras_albert.serving.serving_signature import float32_logits
from keras_albert.serving.serving_signature import logit_outputs
from keras_albert.serving.serving_signature import pooled_logits
from keras_albert.serving.serving_signature import string_spec


def serving_signature(task, check_texts, length_buckets=None, pair=False, **kwargs):
    """The `ServingSignature` of `task` (see each task's function below).

    Raises:
        ValueError: a task with no raw-string serving (the message names
            the tasks that have one).
    """
    for task_class, signature in _SIGNATURES:
        if isinstance(task, task_class):
            return signature(task, check_texts, length_buckets=length_buckets, pair=pair, **kwargs)
    raise ValueError(
        f"{type(task).__name__} has no raw-string serving signature; these tasks "
        f"have one: {[cls.__name__ for cls, _ in _SIGNATURES]}."
    )


def supports_serving(task):
    return any(isinstance(task, task_class) for task_class, _ in _SIGNATURES)


def classifier_signature(task, check_texts, length_buckets=None, pair=False):
    """Raw-string serving: `text` (and `text_pair` with `pair`) ->
    `logits` and, unless regressing, `probabilities`; with
    `label_names`, also `labels` (the name of the argmax class).

    Each example runs at the smallest of `length_buckets` that holds it
    (None: at the preprocessor's full length); `check_texts` make the
    example inputs. Returns a `ServingSignature`, which
    `keras_albert.export.export_serving_saved_model` writes out.
    """
    check_serving_preprocessor(task)
    preprocessor = task.preprocessor
    texts = list(check_texts)
    logits_of = pooled_logits(
        task, length_buckets, lambda features: tf.zeros([0, task.num_classes], tf.float32)
    )

    def outputs(features):
        served = logit_outputs(logits_of(features), task.is_regression)
        if task.label_names:
            served["labels"] = argmax_label_names(served["logits"], task.label_names)
        return served

    if pair:
        def serve_pairs(text, text_pair):
            return outputs(preprocessor(x=(text, text_pair)))

        return ServingSignature(
            [string_spec("text"), string_spec("text_pair")],
            serve_pairs,
            {"text": tf.constant(texts), "text_pair": tf.constant(texts)},
            float32_logits(lambda: task.predict((texts, texts), verbose=0)),
        )

    def serve(text):
        return outputs(preprocessor(text))

    return ServingSignature(
        [string_spec("text")],
        serve,
        {"text": tf.constant(texts)},
        float32_logits(lambda: task.predict(texts, verbose=0)),
    )


def multiple_choice_signature(task, check_texts, length_buckets=None, pair=False):
    """Raw-string serving: `context`, `question` [batch] and `choices`
    [batch, num_choices] -> `logits`, `probabilities` [batch, num_choices].

    Each example runs at the smallest of `length_buckets` that holds its
    longest choice (None: the full length); `check_texts` make the
    example inputs (each text as context, question and, with its
    reverse, the choices). `pair` is unused: the inputs are fixed.
    Returns a `ServingSignature`.
    """
    check_serving_preprocessor(task)
    preprocessor = task.preprocessor
    texts = list(check_texts)

    def empty(features):  # [0, num_choices]
        return tf.zeros(tf.stack([0, tf.shape(features["token_ids"])[1]]), tf.float32)

    logits_of = pooled_logits(task, length_buckets, empty)

    def serve(context, question, choices):
        x = {"context": context, "question": question, "choices": choices}
        return logit_outputs(logits_of(preprocessor(x)))

    x = {"context": texts, "question": texts, "choices": [[t, t[::-1]] for t in texts]}
    return ServingSignature(
        [string_spec("context"), string_spec("question"), string_spec("choices", 2)],
        serve,
        {name: tf.constant(value) for name, value in x.items()},
        float32_logits(lambda: task.predict(x, verbose=0)),
    )


def token_classifier_signature(task, check_texts, length_buckets=None, pair=False):
    """Raw-string serving: `text` (split on whitespace) -> per-position
    `logits`, `predictions` and `word_ids` (the word each position
    starts, -1 elsewhere), at the preprocessor's full length; with
    `label_names`, also `labels` (the predicted name at each word's
    first position, "" elsewhere).

    `check_texts` make the example inputs; `length_buckets` and `pair`
    are unused (outputs are per position, the input is one text).
    Returns a `ServingSignature`.
    """
    check_serving_preprocessor(task)
    preprocessor = task.preprocessor
    texts = list(check_texts)

    def serve(text):
        logits = tf.cast(task(preprocessor(text), training=False), tf.float32)
        word_ids = preprocessor.word_ids(text)
        served = {
            "logits": logits,
            "predictions": tf.argmax(logits, -1, output_type=tf.int32),
            "word_ids": word_ids,
        }
        if task.label_names:
            names = argmax_label_names(logits, task.label_names)
            served["labels"] = tf.where(word_ids >= 0, names, "")
        return served

    features = preprocessor(texts)
    return ServingSignature(
        [string_spec("text")],
        serve,
        {"text": tf.constant(texts)},
        float32_logits(lambda: task(features, training=False)),
    )


def question_answerer_signature(task, check_texts, length_buckets=None, pair=False, max_answer_length=30):
    """Raw-string serving: `question`, `context` -> the best `answer`
    over all windows of a long context (a byte-exact substring, with
    `answer_start_byte` / `answer_end_byte`), `answer_score`,
    `null_score` and the `start_logits` / `end_logits` of the window
    the answer came from: the answers of `answer`.

    `check_texts` make example contexts of one and of several windows
    (a few of their first words as the question); `length_buckets` and
    `pair` are unused (windows keep the full length). Returns a
    `ServingSignature` whose expected outputs are `answer`'s scores.
    """
    check_serving_preprocessor(task)
    preprocessor = task.preprocessor
    length = preprocessor.sequence_length

    def serve(question, context):
        features, byte_start, byte_end, start_allowed, example = windowed_qa_features(
            preprocessor.tokenizer, question, context, length,
            preprocessor.max_question_length, preprocessor.doc_stride,
        )
        logits = task(features, training=False)
        return best_answers_over_windows(
            context,
            tf.cast(logits["start_logits"], tf.float32),
            tf.cast(logits["end_logits"], tf.float32),
            byte_start, byte_end, start_allowed, example, max_answer_length,
        )

    texts = list(check_texts)
    contexts = [" ".join(texts[i : i + 1 + i % 3]) for i in range(len(texts))]
    contexts = [c for c in contexts if c.strip()] or ["a"]
    questions = [" ".join(c.split()[:3]) for c in contexts]

    def expected():
        # n_best = length: every position is considered, as in the graph.
        answers = task.answer(questions, contexts, n_best=length, max_answer_length=max_answer_length)
        return {
            name: np.array([a[key] for a in answers], "float32")
            for name, key in (("answer_score", "score"), ("null_score", "null_score"))
        }

    return ServingSignature(
        [string_spec("question"), string_spec("context")],
        serve,
        {"question": tf.constant(questions), "context": tf.constant(contexts)},
        expected,
    )


_SIGNATURES = (
    (AlbertClassifier, classifier_signature),
    (AlbertMultipleChoice, multiple_choice_signature),
    (AlbertTokenClassifier, token_classifier_signature),
    (AlbertQuestionAnswerer, question_answerer_signature),
    (AlbertCausalLM, causal_lm_signature),
)
