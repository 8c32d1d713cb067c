"""The TF-IDF baseline that transfer results are measured against."""

import numpy as np
import pytest

from keras_albert.pipelines import classification_scores
from keras_albert.pipelines import majority_baseline
from keras_albert.pipelines import tfidf_baseline
from keras_albert.pipelines import tuned_tfidf_baseline
from keras_albert.pipelines.text_baselines import TFIDF_C
from keras_albert.pipelines.text_baselines import TFIDF_NGRAM_RANGES


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


def test_tuned_tfidf_picks_its_settings_on_the_carve_out_only():
    train = _separable(200, 4)
    test = _separable(50, 5)
    result = tuned_tfidf_baseline(*train, *test, seed=0)
    assert result["accuracy"] == 1.0
    assert result["C"] in TFIDF_C and tuple(result["ngram_range"]) in TFIDF_NGRAM_RANGES
    # Flipping every test label changes the test score, never the choice.
    flipped = tuned_tfidf_baseline(*train, test[0], (test[1] + 1) % 3, seed=0)
    assert (flipped["C"], flipped["ngram_range"]) == (result["C"], result["ngram_range"])
    assert flipped["accuracy"] == 0.0


def test_tuned_tfidf_choice_follows_the_carve_out_and_its_seed():
    texts, labels = _separable(300, 6)
    first = tuned_tfidf_baseline(texts, labels, texts[:5], labels[:5], seed=0)
    again = tuned_tfidf_baseline(texts, labels, texts[:5], labels[:5], seed=0)
    assert first["validation_accuracy"] == again["validation_accuracy"] == 1.0
    # Ties go to the simplest setting: unigrams and the smallest C.
    assert (first["C"], first["ngram_range"]) == (TFIDF_C[0], [1, 1])


def test_majority_predicts_the_training_majority_and_scores_it_on_the_test_labels():
    result = majority_baseline([2, 2, 2, 0, 1], [0, 0, 2, 1])
    assert result["majority_label"] == 2
    assert result["accuracy"] == 0.25
