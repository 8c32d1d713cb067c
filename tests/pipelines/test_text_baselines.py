"""The TF-IDF baseline that transfer results are measured against."""

import numpy as np
import pytest

from keras_albert.pipelines import classification_scores
from keras_albert.pipelines import tfidf_baseline


def _separable(count, seed):
    rng = np.random.default_rng(seed)
    words = {0: ["river", "lake", "water"], 1: ["engine", "wheel", "motor"], 2: ["song", "melody", "tune"]}
    filler = ["the", "a", "of", "with", "and"]
    labels = rng.integers(0, 3, count)
    texts = [" ".join(rng.choice(filler, 3).tolist() + [rng.choice(words[y])]) for y in labels]
    return texts, labels


def test_tfidf_learns_a_separable_task():
    train = _separable(60, 0)
    test = _separable(40, 1)
    result = tfidf_baseline(*train, *test)
    assert result["accuracy"] == 1.0 and result["macro_f1"] == 1.0
    assert result["predictions"].shape == (40,)


def test_tfidf_is_at_chance_when_labels_ignore_the_text():
    texts, _ = _separable(300, 2)
    labels = np.random.default_rng(3).integers(0, 3, 300)
    result = tfidf_baseline(texts[:200], labels[:200], texts[200:], labels[200:])
    assert result["accuracy"] < 0.55


def test_scores():
    scores = classification_scores([0, 0, 1, 1], [0, 1, 1, 1])
    assert scores["accuracy"] == 0.75
    assert scores["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
