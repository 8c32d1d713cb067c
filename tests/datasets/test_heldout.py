"""Held-out evaluation text is recognised wherever it appears in a corpus line."""

import pytest

from keras_albert import datasets
from keras_albert.datasets.heldout import HELD_OUT_SETS
from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED
from keras_albert.datasets.heldout import HeldOutGuard
from keras_albert.datasets.heldout import find_contained
from keras_albert.datasets.heldout import heldout_passages
from keras_albert.datasets.heldout import normalize


def _glosses(split, count, min_words=6, max_words=100):
    found = []
    for synset in datasets.load_wordnet_synsets():
        words = len(normalize(synset.definition).split())
        if datasets.split_of(synset.synset) == split and min_words <= words <= max_words:
            found.append(synset.definition)
            if len(found) == count:
                return found
    raise AssertionError(split)


def _chapter_sentences(novel, split):
    chapters = datasets.load_austen_chapters(novel)
    indices = datasets.split_chapters(seed=LONG_DOCUMENT_SEED)[split][novel]
    return [s for i in indices for p in chapters[i] for s in datasets.split_sentences(p)]


@pytest.fixture(scope="module")
def guard():
    return HeldOutGuard()


def test_every_held_out_set_is_guarded():
    passages = heldout_passages()
    assert tuple(passages) == HELD_OUT_SETS
    assert all(len(passages[name]) > 1000 for name in HELD_OUT_SETS)


@pytest.mark.large
def test_validation_and_test_glosses_are_held_out(guard):
    for split in ("validation", "test"):
        for gloss in _glosses(split, 20):
            assert guard.match(gloss) == f"supersense_{split}", gloss
            # Case, punctuation and a surrounding sentence do not hide it.
            assert guard.contains(f"Grief: {gloss.upper()}!")


def test_a_gloss_inside_a_longer_dictionary_sentence_is_caught(guard):
    # How GCIDE quotes WordNet: the gloss inside its own sentence, set off
    # by commas only, which the old whole-line-or-clause match missed.
    long_gloss = _glosses("validation", 1, min_words=9)[0]
    assert guard.contains(f"Hence, in a general sense, {long_gloss}, as used of things in common speech")
    short_gloss = _glosses("test", 1, min_words=5, max_words=7)[0]
    assert guard.match(f"Formerly also {short_gloss.rstrip('.')} or the like, now rare") == "supersense_test"


def test_a_sentence_sharing_a_few_common_words_is_kept(guard):
    # "I do not know" is a clause of Persuasion; sharing it is not copying.
    assert "I do not know" in " ".join(heldout_passages()["persuasion"])
    assert not guard.contains("What he meant by it, nobody could say; I do not know.")
    gloss_words = normalize(_glosses("validation", 1, min_words=12)[0]).split()
    shared = " ".join(gloss_words[:5])
    assert not guard.contains(f"The builders thought that {shared} would never be said here")


def test_training_glosses_are_not(guard):
    flagged = [g for g in _glosses("train", 200) if guard.contains(g)]
    # A training gloss may hold a short held-out gloss; almost none do.
    assert len(flagged) <= 4, flagged


def test_persuasion_is_held_out_and_the_other_novels_mostly_not(guard):
    persuasion = datasets.load_austen_documents(
        names=("persuasion",), exclude=(), sentences=True)[0]
    long_sentences = [s for s in persuasion if len(s.split()) > 12][:50]
    assert all(guard.match(s) == "persuasion" for s in long_sentences)
    emma = [s for s in _chapter_sentences("emma", "train") if len(s.split()) > 12][:300]
    assert sum(guard.contains(s) for s in emma) <= 3


def test_long_document_test_chapters_are_held_out(guard):
    test = [s for s in _chapter_sentences("emma", "test") if len(normalize(s).split()) >= 8][:200]
    assert all(guard.match(s) == "long_document_test" for s in test)
    validation = [s for s in _chapter_sentences("emma", "validation") if len(s.split()) > 12][:200]
    assert sum(guard.contains(s) for s in validation) <= 3


def test_drop_and_check(guard):
    held_out = _glosses("validation", 1)[0]
    lines = ["the cat sat on the mat and looked around the room", held_out]
    assert guard.drop(lines) == lines[:1]
    guard.check(lines[:1])
    with pytest.raises(ValueError, match=r"line 2 holds held-out .*supersense_validation"):
        guard.check(lines, where="corpus.txt")


def test_no_held_out_passage_survives_the_guard_in_a_fixture_corpus(guard):
    # A small corpus with held-out text planted the ways it arrives: a
    # gloss quoted inside a dictionary sentence, a short gloss in passing,
    # a Persuasion sentence and a test-chapter sentence inside longer lines.
    validation, test = _glosses("validation", 3, min_words=9), _glosses("test", 3, min_words=4, max_words=7)
    persuasion = [s for s in heldout_passages()["persuasion"] if len(s.split()) > 10][:3]
    chapter = [s for s in _chapter_sentences("emma", "test") if len(s.split()) > 10][:3]
    planted = [f"Hence, {g}, as of things" for g in validation] + [f"Also {g.rstrip('.')} or so" for g in test]
    planted += [f"He wrote: {s} And so on." for s in persuasion + chapter]
    clean = [s for s in _chapter_sentences("emma", "train") if len(s.split()) > 10][:40]
    clean += _glosses("train", 40)
    corpus = clean[:20] + planted + clean[20:]
    found = find_contained(corpus)
    assert {name: len(found.get(name, ())) for name in HELD_OUT_SETS} == {
        "persuasion": 3, "supersense_validation": 3, "supersense_test": 3, "long_document_test": 3}
    kept = guard.drop(corpus)
    assert find_contained(kept) == {}
    assert len(kept) >= len(clean) - 2  # the clean lines stay


def test_find_contained_needs_whole_passages():
    passages = {"g": ["a feeling of deep sadness"], "p": ["one two three four five six seven eight nine"]}
    lines = ["it was a feeling of deep sadness indeed", "a feeling of deep", "one two three four five six seven eight",
             "zero one two three four five six seven eight nine ten"]
    assert find_contained(lines, passages, contained_sets=("g",)) == {
        "g": {"a feeling of deep sadness"}, "p": {"one two three four five six seven eight nine"}}
    with pytest.raises(ValueError, match="`lines` must be a list of strings"):
        find_contained("one line", passages)


def test_custom_passages_and_thresholds():
    guard = HeldOutGuard({"g": ["one two three four five six"]}, contained_sets=("g",), ngram_words=4)
    assert guard.match("zero one two three four ten") == "g"  # a shared 4-gram
    assert not guard.contains("zero one two three ten")
    prose = HeldOutGuard({"p": ["one two three four five"]}, contained_sets=())
    assert prose.contains("One, two, three, four, five!")  # the whole line
    assert not prose.contains("zero one two three four five six")


@pytest.mark.parametrize("kwargs, message", [
    ({"passages": ["a list"]}, "`passages` must be a dict"),
    ({"passages": {"g": "one string"}}, "`passages` must be a dict"),
    ({"passages": {}, "contained_sets": "g"}, "`contained_sets` must be a list"),
    ({"passages": {}, "ngram_words": 0}, "`ngram_words` must be a positive integer"),
    ({"passages": {}, "ngram_words": 4, "min_contained_words": 5}, "`min_contained_words` must be at most"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        HeldOutGuard(**kwargs)


def test_normalize():
    assert normalize("  A Feeling, of deep-sadness! ") == "a feeling of deep sadness"
