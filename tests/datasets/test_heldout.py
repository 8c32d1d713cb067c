"""Held-out evaluation text is recognised wherever it appears in a corpus line."""

import pytest

from keras_albert import datasets
from keras_albert.datasets.heldout import HeldOutGuard
from keras_albert.datasets.heldout import normalize


def _glosses(split, count):
    found = []
    for synset in datasets.load_wordnet_synsets():
        if datasets.split_of(synset.synset) == split and len(synset.definition.split()) >= 6:
            found.append(synset.definition)
            if len(found) == count:
                return found
    raise AssertionError(split)


@pytest.fixture(scope="module")
def guard():
    return HeldOutGuard()


@pytest.mark.large
def test_validation_and_test_glosses_are_held_out(guard):
    for gloss in _glosses("validation", 20) + _glosses("test", 20):
        assert guard.contains(gloss), gloss
        # Case, punctuation and a surrounding sentence do not hide it.
        assert guard.contains(f"Grief: {gloss.upper()}!")


def test_training_glosses_are_not(guard):
    flagged = [g for g in _glosses("train", 200) if guard.contains(g)]
    # A training gloss may share a clause with a held-out one; almost none do.
    assert len(flagged) <= 4, flagged


def test_persuasion_is_held_out_and_the_other_novels_mostly_not(guard):
    persuasion = datasets.load_austen_documents(
        names=("persuasion",), exclude=(), sentences=True)[0]
    long_sentences = [s for s in persuasion if len(s.split()) > 12][:50]
    assert all(guard.contains(s) for s in long_sentences)
    emma = datasets.load_austen_documents(names=("emma",), sentences=True)[0]
    emma = [s for s in emma if len(s.split()) > 12][:300]
    assert sum(guard.contains(s) for s in emma) <= 3


def test_drop_and_check(guard):
    held_out = _glosses("validation", 1)[0]
    lines = ["the cat sat on the mat and looked around the room", held_out]
    assert guard.drop(lines) == lines[:1]
    guard.check(lines[:1])
    with pytest.raises(ValueError, match="line 2 repeats held-out"):
        guard.check(lines, where="corpus.txt")


def test_normalize():
    assert normalize("  A Feeling, of deep-sadness! ") == "a feeling of deep sadness"
