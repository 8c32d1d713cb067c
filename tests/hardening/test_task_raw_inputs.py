"""Task inputs a user gets wrong fail before tracing, with an error that
names the argument, what was received and what is accepted.

Runs on every backend, TensorFlow installed or not: datasets are tf.data
pipelines where TensorFlow is installed, grain datasets where it is not
(`tests.harness._batched`), and their labels are checked either way:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_task_raw_inputs.py
"""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.models.albert_token_classifier_preprocessor import word_label_dataset
from keras_albert.utils.backend import is_tf_dataset
from tests.hardening.conftest import assert_names
from tests.hardening.conftest import tiny_backbone
from tests.harness import _batched

TEXT_ACCEPTED = "a list (or NumPy array, or 1-D string tensor) of texts"

BAD_TEXTS = [
    ("empty_list", [], ["`x` is empty", "at least one example", TEXT_ACCEPTED]),
    ("none", None, ["`x` is None", TEXT_ACCEPTED]),
    ("integer", [42], ["`x[0]`", "int 42", "str or bytes", TEXT_ACCEPTED]),
    ("dict_of_texts", {"text": ["a"]}, ["`x`", "a dict with keys ['text']", TEXT_ACCEPTED]),
    ("three_segments", (["a"], ["b"], ["c"]), ["`x`", "tuple of 3", "at most 2", "num_segments"]),
    ("lone_surrogate", ["fine", "a\ud800b"], ["`x[1]`", "lone surrogate", "'\\ud800'", "character 1", "UTF-8"]),
    ("surrogate_in_pair", (["a"], ["\udfff"]), ["`x[1][0]`", "lone surrogate"]),
    ("single_string", "one text", ["`x`", "not a single text", "[text]"]),
    ("integer_array", np.array([1, 2]), ["`x`", "dtype int64", "must hold strings"]),
]


@pytest.mark.entry_point("task.predict")
@pytest.mark.parametrize("x, needles", [c[1:] for c in BAD_TEXTS], ids=[c[0] for c in BAD_TEXTS])
def test_classifier_predict_names_what_to_pass(classifier, x, needles):
    with pytest.raises(ValueError) as error:
        classifier.predict(x, verbose=0)
    assert_names(error, *needles)


@pytest.mark.entry_point("task.fit")
@pytest.mark.parametrize("x, needles", [c[1:] for c in BAD_TEXTS[:3]], ids=[c[0] for c in BAD_TEXTS[:3]])
def test_classifier_fit_and_evaluate_name_what_to_pass(classifier, x, needles):
    for method in (classifier.fit, classifier.evaluate):
        with pytest.raises(ValueError) as error:
            method(x, [0], verbose=0)
        assert_names(error, *needles)


@pytest.mark.large
def test_three_segments_pass_when_the_model_has_three(tokenizer):
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=8000, num_layers=1, num_heads=2, embedding_dim=8, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32, num_segments=3,
    )
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    model = keras_albert.AlbertClassifier(backbone, num_classes=2, preprocessor=pre)
    assert model.predict((["a", "b"], ["c", "d"], ["e", "f"]), verbose=0).shape == (2, 2)


@pytest.mark.entry_point("task.fit")
def test_one_hot_labels_are_refused_for_class_ids(classifier):
    y = np.eye(3, dtype="float32")[[0, 2]]
    with pytest.raises(ValueError) as error:
        classifier.fit(["first", "second"], y, verbose=0)
    assert_names(error, "`y`", "(2, 3)", "one-hot", "integer class ids in [0, 3)", "y.argmax(-1)")
    dataset = _batched((["first", "second"], y), 2)
    with pytest.raises(ValueError) as error:
        classifier.fit(dataset, verbose=0)
    # tf.data refuses them from its spec, grain at the first batch.
    shape, fix = ("(None, 3)", "tf.argmax(y, -1)") if is_tf_dataset(dataset) else ("(2, 3)", "batch[1].argmax(-1)")
    assert_names(error, "`y` in the dataset", shape, "one-hot", fix)


@pytest.mark.large
@pytest.mark.entry_point("task.fit")
def test_one_hot_labels_train_with_a_categorical_loss(tokenizer):
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    model = keras_albert.AlbertClassifier(tiny_backbone(), num_classes=3, preprocessor=pre)
    model.compile(loss=keras.losses.CategoricalCrossentropy(from_logits=True), metrics=[])
    history = model.fit(["first", "second"], np.eye(3, dtype="float32")[[0, 2]], verbose=0)
    assert np.isfinite(history.history["loss"][-1])


BAD_DATASET_LABELS = [
    ("past_classes", [0, 7], "int32", ["`y` in the dataset", "outside the label set [0, 3)", "[0 7]", "0..2"]),
    ("negative", [-1, 1], "int32", ["`y` in the dataset", "[-1 1]"]),
    ("fractional", [0.5, 1.0], "float32", ["`y` in the dataset", "integer class ids"]),
]


@pytest.mark.large
@pytest.mark.entry_point("task.fit")
@pytest.mark.parametrize(
    "labels, dtype, needles", [c[1:] for c in BAD_DATASET_LABELS], ids=[c[0] for c in BAD_DATASET_LABELS]
)
def test_dataset_labels_are_checked_as_batches_arrive(classifier, labels, dtype, needles):
    dataset = _batched((["first", "second"], np.array(labels, dtype)), 2)
    for method in (classifier.fit, classifier.evaluate):
        with pytest.raises(ValueError) as error:
            method(dataset, verbose=0)
        assert_names(error, *needles)
        assert "Graph execution" not in str(error.value)


def test_good_dataset_labels_still_train(classifier):
    dataset = _batched((["first", "second"], np.array([0, 2])), 2)
    history = classifier.fit(dataset, verbose=0)
    assert np.isfinite(history.history["loss"][-1])


@pytest.mark.entry_point("task.fit")
def test_validation_split_takes_python_lists(tokenizer):
    # keras-hub splits arrays only: lists of texts were refused with one
    # "<class 'str'>" per text. Keras holds out the last fraction.
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    task = keras_albert.AlbertClassifier(tiny_backbone(), num_classes=3, preprocessor=preprocessor)
    task.compile(optimizer="sgd")
    texts, labels = [f"text number {i}" for i in range(8)], [i % 3 for i in range(8)]
    history = task.fit(texts, labels, validation_split=0.25, batch_size=4, epochs=1, verbose=0)
    held_out = task.evaluate(texts[6:], labels[6:], verbose=0, return_dict=True)
    np.testing.assert_allclose(history.history["val_loss"][0], held_out["loss"], rtol=1e-5)

    tagger = _token_classifier(tokenizer)
    tagger.compile(optimizer="sgd")
    words, tags = [["a", "word"], ["b"], ["c", "d", "e"], ["f"]], [[0, 1], [2], [1, 1, 0], [2]]
    history = tagger.fit(words, tags, validation_split=0.5, batch_size=2, epochs=1, verbose=0)
    held_out = tagger.evaluate(words[2:], tags[2:], verbose=0, return_dict=True)
    np.testing.assert_allclose(history.history["val_loss"][0], held_out["loss"], rtol=1e-5)


WORDS_ACCEPTED = "a list of word lists (lists of str)"
CHOICES_ACCEPTED = "a dict with 'context' [batch] and 'choices' [batch, num_choices] strings"
WINDOWS_ACCEPTED = "preprocessor.windows(questions, contexts).features"


def _token_classifier(tokenizer):
    pre = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=16)
    return keras_albert.AlbertTokenClassifier(tiny_backbone(), num_classes=3, preprocessor=pre)


def _multiple_choice(tokenizer):
    pre = keras_albert.AlbertMultipleChoicePreprocessor(tokenizer, sequence_length=16)
    return keras_albert.AlbertMultipleChoice(tiny_backbone(), preprocessor=pre)


def _question_answerer(tokenizer):
    pre = keras_albert.AlbertQuestionAnswererPreprocessor(tokenizer, sequence_length=16)
    return keras_albert.AlbertQuestionAnswerer(tiny_backbone(), preprocessor=pre)


OTHER_TASKS = [
    ("token_classifier_empty", _token_classifier, [], ["`x` is empty", WORDS_ACCEPTED]),
    ("token_classifier_none", _token_classifier, None, ["`x` is None", WORDS_ACCEPTED]),
    ("token_classifier_integer", _token_classifier, [[42]], ["`x[0][0]`", "int 42", WORDS_ACCEPTED]),
    ("token_classifier_dict", _token_classifier, {"words": [["a"]]}, ["`x`", "keys ['words']", WORDS_ACCEPTED]),
    ("token_classifier_surrogate", _token_classifier, [["a", "\ud800"]], ["`x[0][1]`", "lone surrogate"]),
    ("multiple_choice_list", _multiple_choice, ["a"], ["`x`", CHOICES_ACCEPTED]),
    ("multiple_choice_none", _multiple_choice, None, ["`x` is None", CHOICES_ACCEPTED]),
    ("multiple_choice_unknown_key", _multiple_choice,
     {"context": ["c"], "choices": [["a", "b"]], "answer": [0]}, ["`x`", "['answer']", "'question' (optional)"]),
    ("multiple_choice_ragged_choices", _multiple_choice,
     {"context": ["c", "d"], "choices": [["a", "b"], ["a"]]}, ["`x['choices']`", "same number of choices", "[1, 2]"]),
    ("multiple_choice_integer_choice", _multiple_choice,
     {"context": ["c"], "choices": [["a", 3]]}, ["`x['choices'][0][1]`", "int 3"]),
    ("multiple_choice_surrogate", _multiple_choice,
     {"context": ["\ud800"], "choices": [["a", "b"]]}, ["`x['context'][0]`", "lone surrogate"]),
    ("multiple_choice_empty_context", _multiple_choice,
     {"context": [], "choices": []}, ["`x['context']` is empty"]),
    ("question_answerer_texts", _question_answerer, ["who?"], ["`x`", WINDOWS_ACCEPTED, "answer(questions, contexts)"]),
    ("question_answerer_none", _question_answerer, None, ["`x` is None", WINDOWS_ACCEPTED]),
    ("question_answerer_tuple", _question_answerer, (["q"], ["c"], ["d"]), ["`x`", "a tuple of 3 items"]),
]


@pytest.mark.large
@pytest.mark.entry_point("task.predict")
@pytest.mark.parametrize("make, x, needles", [c[1:] for c in OTHER_TASKS], ids=[c[0] for c in OTHER_TASKS])
def test_other_tasks_name_what_to_pass(tokenizer, make, x, needles):
    task = make(tokenizer)
    with pytest.raises(ValueError) as error:
        task.predict(x, verbose=0)
    assert_names(error, *needles)


@pytest.mark.large
def test_other_tasks_still_take_good_inputs(tokenizer):
    assert _token_classifier(tokenizer).predict([["a", "word"], ["b", "c"]], verbose=0).shape == (2, 16, 3)
    x = {"context": ["c", "d"], "question": ["q _", "r"], "choices": [["a", "b"], ["c", "d"]]}
    assert _multiple_choice(tokenizer).predict(x, verbose=0).shape == (2, 2)
    qa = _question_answerer(tokenizer)
    features = qa.preprocessor.windows(["who?"], ["Anne walked."]).features
    assert qa.predict(features, verbose=0)["start_logits"].shape[0] >= 1


@pytest.mark.entry_point("task.fit")
def test_multiple_choice_labels_are_choice_indices(tokenizer):
    task = _multiple_choice(tokenizer)
    x = {"context": ["c", "d"], "choices": [["a", "b"], ["c", "d"]]}
    weights = [w.numpy().copy() for w in task.weights]
    with pytest.raises(ValueError) as error:
        task.fit(x, np.array([0, 2]), verbose=0)
    assert_names(error, "`y`", "2", "[0, 2)")
    with pytest.raises(ValueError) as error:
        task.fit(x, np.array([0, 1, 1]), verbose=0)
    assert_names(error, "`x` holds 2", "`y` holds 3")
    for before, after in zip(weights, task.weights):
        np.testing.assert_array_equal(before, after.numpy())


@pytest.mark.entry_point("task.fit")
def test_token_classifier_takes_word_lists_of_different_lengths(tokenizer):
    # Sentences differ in length: `fit(words, tags)` once asked for
    # `word_label_dataset`; it now batches them as that does.
    task = _token_classifier(tokenizer)
    task.compile(optimizer="sgd")
    words, tags = [["a", "word"], ["b"], ["c", "d", "e"]], [[0, 1], [2], [1, 1, 0]]
    dataset = word_label_dataset(words, tags, batch_size=2)
    np.testing.assert_allclose(
        task.predict(words, batch_size=2, verbose=0),
        task.predict(word_label_dataset(words, batch_size=2), verbose=0), atol=1e-6)
    np.testing.assert_allclose(
        task.evaluate(words, tags, batch_size=2, verbose=0), task.evaluate(dataset, verbose=0), atol=1e-6)
    history = task.fit(words, tags, batch_size=2, epochs=1, validation_data=(words, tags), verbose=0)
    assert set(history.history) >= {"loss", "val_loss"}
    with pytest.raises(ValueError) as error:
        task.fit(words, [[0, 1], [2], [1, 1]], verbose=0)
    assert_names(error, "`y[2]` holds 2 labels", "3 words of `x[2]`")


BAD_WORD_LABELS = [
    ("label_past_classes", [[0, 5], [1, 1]], ["`y`", "5", "[0, 3)"]),
    ("labels_per_word", [[0], [1, 1]], ["`y[0]` holds 1 labels", "2 words of `x[0]`"]),
]


@pytest.mark.entry_point("task.fit")
@pytest.mark.parametrize("y, needles", [c[1:] for c in BAD_WORD_LABELS], ids=[c[0] for c in BAD_WORD_LABELS])
def test_token_classifier_word_labels_are_checked(tokenizer, y, needles):
    with pytest.raises(ValueError) as error:
        _token_classifier(tokenizer).fit([["a", "word"], ["b", "c"]], y, verbose=0)
    assert_names(error, *needles)
