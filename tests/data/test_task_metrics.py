"""Task metrics against hand-computed values."""

import numpy as np
import pytest

from keras_albert.data import task_metrics as m


def test_classification_metrics():
    predictions, labels = [1, 0, 1, 1, 0, 0], [1, 0, 0, 1, 1, 0]
    assert m.accuracy(predictions, labels) == pytest.approx(4 / 6)
    # tp=2, fp=1, fn=1 -> precision = recall = 2/3
    assert m.f1_binary(predictions, labels) == pytest.approx(2 / 3)
    # tn=2: (2*2 - 1*1) / sqrt(3*3*3*3)
    assert m.matthews_correlation(predictions, labels) == pytest.approx(3 / 9)
    assert m.matthews_correlation([1, 1], [1, 1]) == 0.0  # undefined -> 0
    assert m.f1_macro([0, 1, 2], [0, 1, 1]) == pytest.approx(np.mean([1.0, 2 / 3, 0.0]))


def test_correlations():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    assert m.pearson(x, 2 * x + 1) == pytest.approx(1.0)
    assert m.spearman(x, x ** 3) == pytest.approx(1.0)
    assert m.pearson(x, x ** 3) < 1.0
    assert m.spearman([1, 2, 2, 3], [1, 2, 2, 3]) == pytest.approx(1.0)  # ties


def test_squad_scores_follow_the_official_normalisation():
    assert m.squad_exact_match("The Cat!", ["cat"]) == 1.0
    assert m.squad_f1("the black cat", ["a cat"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert m.squad_exact_match("", []) == 1.0  # SQuAD v2: no answer, predicted none
    scores = m.squad_scores(["cat", "dog"], [["cat"], ["a horse"]])
    assert scores == {"exact_match": 50.0, "f1": 50.0}
