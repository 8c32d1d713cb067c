"""`evaluate_classifier`: metrics equal a hand computation on the model's
own predictions; the confusion matrix counts every example once.

Runs on every backend; the serving SavedModel's cases only where
TensorFlow is installed:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/pipelines/test_evaluating.py
"""

import json

import numpy as np
import pytest

import keras_albert
from keras_albert.pipelines.evaluating import confusion_matrix
from keras_albert.pipelines.evaluating import evaluate_classifier
from keras_albert.pipelines.evaluating import report_json
from keras_albert.pipelines.prediction_settings import EvaluateSettings
from tests.pipelines.tiny_classifier import LABELS
from tests.pipelines.tiny_classifier import animal_texts
from tests.pipelines.tiny_classifier import skip_unless_serving_runs
from tests.pipelines.tiny_classifier import tiny_classifier
from tests.pipelines.tiny_classifier import write_table


@pytest.fixture(scope="module")
def trained(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    return tiny_classifier(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)


@pytest.fixture(scope="module")
def dev_set(trained):
    """60 labelled texts and the preset's own predictions for them, made
    once for both sources' tests."""
    texts, labels = animal_texts(60, seed=11)
    model = keras_albert.AlbertClassifier.from_preset(str(trained / "preset"))
    predicted = [LABELS[i] for i in model.predict(texts, verbose=0).argmax(-1)]
    return texts, labels, predicted


@pytest.fixture(scope="module")
def regressor(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    from tests.pipelines.tiny_classifier import tiny_regressor

    return tiny_regressor(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)


@pytest.fixture(scope="module")
def scored_texts(regressor):
    """30 texts scored by their word counts, and the regressor's predictions
    for them, made once for both sources' tests."""
    texts, _ = animal_texts(30, seed=12)
    scores = [len(text.split()) for text in texts]
    predicted = np.asarray(keras_albert.AlbertClassifier.from_preset(str(regressor / "preset")).predict(
        texts, verbose=0))[:, 0]
    return texts, scores, predicted


def _hand_f1_macro(predicted, true):
    scores = []
    for c in sorted(set(predicted) | set(true)):
        tp = sum(p == c and t == c for p, t in zip(predicted, true))
        fp = sum(p == c and t != c for p, t in zip(predicted, true))
        fn = sum(p != c and t == c for p, t in zip(predicted, true))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(scores) / len(scores)


@pytest.mark.parametrize("source", ["preset", "saved_model"])
def test_metrics_equal_a_hand_computation(trained, dev_set, tmp_path, source):
    if source == "saved_model":
        skip_unless_serving_runs()
    texts, labels, predicted = dev_set
    write_table(tmp_path / "dev.tsv", texts, labels)
    output = tmp_path / "report.json"
    report = evaluate_classifier(EvaluateSettings(
        data=str(tmp_path / "dev.tsv"), output=str(output), batch_size=8,
        **{source: str(trained / ("preset" if source == "preset" else "serving"))}))
    assert json.loads(output.read_text(encoding="utf-8")) == report
    accuracy = sum(p == t for p, t in zip(predicted, labels)) / len(labels)
    assert report["examples"] == 60
    assert report["metrics"]["accuracy"] == pytest.approx(accuracy)
    assert report["metrics"]["f1_macro"] == pytest.approx(_hand_f1_macro(predicted, labels))
    assert accuracy > 0.5  # chance is 1/3: the tiny model learnt the animals
    matrix = report["confusion_matrix"]
    counts = np.asarray(matrix["counts"])
    assert matrix["labels"] == list(LABELS) and counts.sum() == 60
    assert np.trace(counts) == round(accuracy * 60)
    for i, true in enumerate(LABELS):
        for j, guess in enumerate(LABELS):
            assert counts[i, j] == sum(t == true and p == guess for p, t in zip(predicted, labels))
        scores = report["per_class"][true]
        assert scores["support"] == labels.count(true) == counts[i].sum()
        assert scores["recall"] == pytest.approx(counts[i, i] / counts[i].sum())


def test_confusion_matrix_by_hand():
    counts = confusion_matrix([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 0, 2], 3)
    assert counts.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]


def test_labels_the_classifier_does_not_know_are_named(trained, tmp_path):
    write_table(tmp_path / "dev.tsv", ["a cat", "a dog"], ["cat", "dog"])
    with pytest.raises(ValueError, match=r"holds labels the classifier does not know: \['dog'\]; "
                                         r"its classes: \['bird', 'cat', 'fish'\]"):
        evaluate_classifier(EvaluateSettings(data=str(tmp_path / "dev.tsv"), preset=str(trained / "preset"),
                                             output=str(tmp_path / "report.json")))
    assert not (tmp_path / "report.json").exists()


def test_report_json_keeps_rows_on_one_line():
    report = {"metrics": {"accuracy": 0.5}, "per_class": {"a\x00": {"f1": 1.0}, "b": {"f1": 0.0}},
              "confusion_matrix": {"labels": ["a\x00", "b"], "counts": [[1, 0], [1, 0]]}}
    text = report_json(report)
    assert json.loads(text) == report
    assert '      [1, 0],\n      [1, 0]\n' in text and '"b": {"f1": 0.0}' in text


@pytest.mark.parametrize("source", ["preset", "serving"])
def test_a_regressor_is_scored_by_correlation(tmp_path, regressor, scored_texts, source):
    from scipy import stats

    if source == "serving":
        skip_unless_serving_runs()
    texts, scores, predicted = scored_texts
    (tmp_path / "dev.csv").write_text("text,score\n" + "".join(f"{t},{s}\n" for t, s in zip(texts, scores)))
    flag = {"preset": "preset", "serving": "saved_model"}[source]
    report = evaluate_classifier(EvaluateSettings(
        data=str(tmp_path / "dev.csv"), label_column="score", output=str(tmp_path / f"{source}.json"),
        **{flag: str(regressor / source)}))
    assert report["examples"] == 30 and "confusion_matrix" not in report
    assert report["metrics"]["pearson"] == pytest.approx(stats.pearsonr(predicted, scores)[0], abs=1e-5)
    assert report["metrics"]["spearman"] == pytest.approx(stats.spearmanr(predicted, scores)[0], abs=1e-5)
    assert report["metrics"]["mean_squared_error"] == pytest.approx(
        np.mean((predicted - np.asarray(scores)) ** 2), rel=1e-5)
    (tmp_path / "words.csv").write_text("text,score\na cat,many\n")
    with pytest.raises(ValueError, match="column 'score' holds 'many': the classifier is a regressor"):
        evaluate_classifier(EvaluateSettings(data=str(tmp_path / "words.csv"), label_column="score",
                                             preset=str(regressor / "preset")))
