"""Task `predict` / `fit`: wrong features, mismatched pairs and bad labels fail clearly."""

import numpy as np
import pytest

import keras_albert
from tests.hardening.conftest import assert_names
from tests.hardening.conftest import tiny_backbone


@pytest.fixture(scope="module")
def feature_classifier():
    # No preprocessor: predict/fit take token features.
    return keras_albert.AlbertClassifier(tiny_backbone(), num_classes=3)


def features(**changes):
    x = {
        "token_ids": np.full((2, 16), 5, "int32"),
        "segment_ids": np.zeros((2, 16), "int32"),
        "padding_mask": np.ones((2, 16), "int32"),
    }
    x.update(changes)
    return x


BAD_FEATURES = [
    ("float_token_ids", features(token_ids=np.full((2, 16), 5.5, "float32")), ["x['token_ids']", "float32", "int32"]),
    ("three_dimensional", features(token_ids=np.zeros((2, 16, 1), "int32")), ["x['token_ids']", "(2, 16, 1)", "2-D"]),
    ("id_past_vocabulary", features(token_ids=np.full((2, 16), 9000, "int32")), ["x['token_ids']", "9000", "[0, 8000)"]),
    ("negative_id", features(token_ids=np.full((2, 16), -3, "int32")), ["x['token_ids']", "-3", "[0, 8000)"]),
    ("segment_id_2", features(segment_ids=np.full((2, 16), 2, "int32")), ["x['segment_ids']", "2", "[0, 2)"]),
    ("too_long", {name: np.zeros((2, 64), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}, ["64", "max_sequence_length=32"]),
    ("shapes_differ", features(segment_ids=np.zeros((3, 16), "int32")), ["share one", "(3, 16)", "(2, 16)"]),
    ("missing_key", {"token_ids": np.zeros((2, 16), "int32")}, ["padding_mask", "token_ids"]),
]


@pytest.mark.entry_point("task.predict")
@pytest.mark.parametrize("x, needles", [case[1:] for case in BAD_FEATURES], ids=[case[0] for case in BAD_FEATURES])
def test_predict_refuses_bad_features(feature_classifier, x, needles):
    with pytest.raises(ValueError) as error:
        feature_classifier.predict(x, verbose=0)
    assert_names(error, *needles)


PER_POSITION_TASKS = {
    "question_answerer": lambda: keras_albert.AlbertQuestionAnswerer(tiny_backbone()),
    "token_classifier": lambda: keras_albert.AlbertTokenClassifier(tiny_backbone(), num_classes=3),
}


@pytest.mark.entry_point("task.predict")
@pytest.mark.parametrize("task_name", sorted(PER_POSITION_TASKS))
@pytest.mark.parametrize("x, needles", [case[1:] for case in BAD_FEATURES[:4]], ids=[case[0] for case in BAD_FEATURES[:4]])
def test_per_position_tasks_refuse_bad_features(task_name, x, needles):
    task = PER_POSITION_TASKS[task_name]()
    with pytest.raises(ValueError) as error:
        task.predict(x, verbose=0)
    assert_names(error, *needles)


def test_predict_on_good_features_after_bad_ones(feature_classifier):
    # A refused call leaves nothing behind that breaks the next one.
    assert feature_classifier.predict(features(), verbose=0).shape == (2, 3)


BAD_TEXT_PREDICTIONS = [
    ("pair_batch_mismatch", (["a", "b"], ["c"]), ["Text pairs", "2 and 1"]),
    ("integers", [1, 2], ["`x[0]`", "int 1", "str or bytes"]),
    ("feature_dict_to_text_task", {"token_ids": np.zeros((1, 4), "int32")}, ["Missing data for input \"padding_mask\"", "Expected the following keys"]),
]


@pytest.mark.entry_point("task.predict")
@pytest.mark.parametrize("x, needles", [case[1:] for case in BAD_TEXT_PREDICTIONS], ids=[case[0] for case in BAD_TEXT_PREDICTIONS])
def test_text_predict_refuses_bad_input(classifier, x, needles):
    with pytest.raises(ValueError) as error:
        classifier.predict(x, verbose=0)
    assert_names(error, *needles)


@pytest.mark.entry_point("task.predict")
@pytest.mark.parametrize(
    "text", ["", "   ", "word " * 200_000, b"\xff\xfe abc", "Héllo мир 世界 🙂"],
    ids=["empty", "whitespace", "one_megabyte", "invalid_utf8", "mixed_script"],
)
def test_text_predict_takes_odd_text(classifier, text):
    logits = classifier.predict([text, "a normal text"], verbose=0)
    assert logits.shape == (2, 3) and np.isfinite(logits).all()


BAD_LABELS = [
    ("label_past_classes", [0, 7], ["`y`", "outside the label set", "7", "[0, 3)"]),
    ("negative_label", [0, -1], ["`y`", "-1", "[0, 3)"]),
    ("fractional_label", [0.5, 1.0], ["`y`", "0.5", "integer class ids"]),
    ("string_labels", ["pos", "neg"], ["`y`", "'pos'", "integer class ids"]),
    ("count_mismatch", [0, 1, 2], ["`x` holds 2", "`y` holds 3"]),
]


@pytest.mark.entry_point("task.fit")
@pytest.mark.parametrize("y, needles", [case[1:] for case in BAD_LABELS], ids=[case[0] for case in BAD_LABELS])
def test_fit_refuses_bad_labels(classifier, y, needles):
    weights = [w.numpy().copy() for w in classifier.weights]
    with pytest.raises(ValueError) as error:
        classifier.fit(["first text", "second text"], np.asarray(y), batch_size=2, verbose=0)
    assert_names(error, *needles)
    # Refused before any step: the weights are untouched.
    for before, after in zip(weights, classifier.weights):
        np.testing.assert_array_equal(before, after.numpy())


@pytest.mark.entry_point("task.fit")
def test_regression_refuses_nan_targets(tokenizer):
    regressor = keras_albert.AlbertClassifier(tiny_backbone(), num_classes=1)
    with pytest.raises(ValueError) as error:
        regressor.fit(features(), np.array([0.5, np.nan], "float32"), verbose=0)
    assert_names(error, "`y`", "NaN", "finite numbers")


@pytest.mark.entry_point("task.fit")
def test_fit_refuses_bad_features(feature_classifier):
    with pytest.raises(ValueError) as error:
        feature_classifier.fit(features(token_ids=np.full((2, 16), 8000, "int32")), np.array([0, 1]), verbose=0)
    assert_names(error, "x['token_ids']", "8000", "[0, 8000)")
