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


@pytest.mark.parametrize("tags, spans", [
    # IOB2 (BIO): B- opens; I- continues the same type.
    (["B-PER", "I-PER", "O", "B-LOC"], {(0, 2, "PER"), (3, 4, "LOC")}),
    # B- after I- of the same type opens a second entity.
    (["B-PER", "I-PER", "B-PER"], {(0, 2, "PER"), (2, 3, "PER")}),
    # IOB1 (CoNLL-2003's own files): I- after O or another type opens one.
    (["I-PER", "I-PER", "I-LOC", "O", "I-ORG"], {(0, 2, "PER"), (2, 3, "LOC"), (4, 5, "ORG")}),
    # IOBES: E- and S- close; I- after E- opens anew.
    (["B-MISC", "E-MISC", "S-LOC", "I-LOC", "E-LOC"], {(0, 2, "MISC"), (2, 3, "LOC"), (3, 5, "LOC")}),
    (["O", "O"], set()),
])
def test_entity_spans_follow_conlleval(tags, spans):
    assert m.entity_spans(tags) == spans


def test_entity_f1_counts_whole_entities_only():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"]]
    # One right, one cut short (PER), one mistyped (ORG as LOC): 1 of 3 found, 1 of 3 expected.
    predicted = [["B-PER", "O", "O", "B-LOC"], ["O", "B-LOC"]]
    assert m.entity_f1(predicted, gold) == pytest.approx(1 / 3)
    assert m.entity_f1(gold, gold) == 1.0 and m.entity_f1([["O"]], [["B-PER"]]) == 0.0
    assert m.is_entity_scheme(["B-LOC", "I-LOC", "O", "S-PER", "E-PER"])
    assert not m.is_entity_scheme(["NN", "VB", "O"]) and not m.is_entity_scheme(["O"])
    assert not m.is_entity_scheme(["B-", "O"])
