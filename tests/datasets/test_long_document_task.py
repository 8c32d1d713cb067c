"""The long-document task: split by chapter, nothing shared between splits."""

import itertools

import numpy as np
import pytest

import keras_albert
from keras_albert import datasets
from keras_albert.datasets.long_documents import SPLITS
from keras_albert.datasets.long_documents import build_long_document_task
from keras_albert.datasets.long_documents import mask_names
from keras_albert.datasets.long_documents import passage_bounds
from keras_albert.datasets.long_documents import proper_nouns
from keras_albert.datasets.long_documents import split_chapters
from keras_albert.pipelines.long_documents import TokenizerPieces

PIECES = 1022


def preset_pieces():
    """The bundled preset's tokenizer with plain-list outputs."""
    return TokenizerPieces(keras_albert.AlbertTokenizer.from_preset("albert_tiny_en"))


@pytest.fixture(scope="module")
def pieces():
    return preset_pieces()


@pytest.fixture(scope="module")
def task(pieces):
    return build_long_document_task(pieces, PIECES)


def test_chapters_hold_only_the_novels_text():
    counts = {name: len(datasets.load_austen_chapters(name)) for name in datasets.AUSTEN_NOVELS}
    assert counts == {"emma": 55, "mansfieldpark": 48, "northangerabbey": 31, "persuasion": 24,
                      "prideprejudice": 61, "sensesensibility": 50}
    northanger = datasets.load_austen_chapters("northangerabbey")
    assert northanger[0][0].startswith("No one who had ever seen Catherine Morland")
    text = " ".join(p for name in datasets.AUSTEN_NOVELS
                    for chapter in datasets.load_austen_chapters(name) for p in chapter)
    for outside in ("ADVERTISEMENT", "Signet Classic", "CHAPTER", "FINIS", "THE END"):
        assert outside not in text
    # Chapters are the novel's paragraphs in order, front and back matter aside.
    emma = [p for chapter in datasets.load_austen_chapters("emma") for p in chapter]
    assert emma == list(datasets.load_austen_novel("emma"))


def test_the_split_shares_no_chapter_and_is_seeded():
    splits = split_chapters(seed=0)
    for name in datasets.AUSTEN_NOVELS:
        parts = [set(splits[split][name]) for split in SPLITS]
        assert all(parts), f"{name} is missing from a split"
        for a, b in itertools.combinations(parts, 2):
            assert not a & b
        assert set().union(*parts) == set(range(len(datasets.load_austen_chapters(name))))
        # Test holds a quarter of the text, give or take a chapter.
        sizes = [sum(len(p) for p in chapter) for chapter in datasets.load_austen_chapters(name)]
        share = sum(sizes[i] for i in splits["test"][name]) / sum(sizes)
        assert 0.25 <= share <= 0.25 + max(sizes) / sum(sizes)
    assert split_chapters(seed=0) == splits
    assert split_chapters(seed=1) != splits


def test_passages_read_only_their_splits_chapters(task):
    splits = split_chapters(seed=0)
    for split in SPLITS:
        for passage in task.passages[split]:
            novel = task.novels[passage.label]
            allowed = {(novel, index) for index in splits[split][novel]}
            assert passage.chapters and passage.chapters <= allowed


def test_no_passage_text_crosses_splits(task):
    # Any 16 pieces in a row of one split never occur in another.
    def windows(split, n=16):
        return {p.token_ids[i:i + n].tobytes()
                for p in task.passages[split] for i in range(len(p.token_ids) - n + 1)}

    seen = {split: windows(split) for split in SPLITS}
    for a, b in itertools.combinations(SPLITS, 2):
        assert not seen[a] & seen[b], f"{a} and {b} share text"


def test_every_novel_in_every_split_in_balance(task):
    counts = task.counts()
    for split in SPLITS:
        per_novel = list(counts[split].values())
        assert min(per_novel) >= 10, counts
        # Novels differ in length (Emma is twice Northanger Abbey), no more.
        assert max(per_novel) <= 2.5 * min(per_novel), counts
    assert counts["test"] == {novel: int((task.labels("test") == i).sum())
                              for i, novel in enumerate(task.novels)}
    assert len(task.labels("train")) > 2 * len(task.labels("test"))


def test_passages_fill_their_length_and_read_back_as_the_same_pieces(task, pieces):
    lengths = [len(p.token_ids) for split in SPLITS for p in task.passages[split]]
    assert PIECES - 16 <= min(lengths) and max(lengths) <= PIECES
    sample = task.passages["test"][:8]
    assert pieces.tokenize(task.texts("test")[:8]) == [p.token_ids.tolist() for p in sample]
    # Truncated text is the passage's first pieces.
    for text, passage in zip(task.texts("test", 126)[:8], sample):
        again = pieces.tokenize([text])[0]
        assert again[:120] == passage.token_ids[:120].tolist() and len(again) <= 130


def test_names_are_masked_unless_kept(pieces):
    assert {"emma", "darcy", "elinor", "bath", "wentworth"} <= proper_nouns()
    assert not {"house", "i", "she", "letter"} & proper_nouns()
    assert mask_names("Mr. Darcy looked at Elizabeth.") == "someone. someone looked at someone."
    masked = build_long_document_task(pieces, 510, novels=("emma", "prideprejudice"))
    kept = build_long_document_task(pieces, 510, novels=("emma", "prideprejudice"), names_masked=False)
    masked_words = set(" ".join(masked.texts("train")).split())
    kept_words = set(" ".join(kept.texts("train")).split())
    assert {"emma", "darcy", "elizabeth"} <= kept_words
    assert not {"emma", "darcy", "elizabeth", "knightley"} & masked_words
    assert "someone" in masked_words and masked.describe()["names_masked"] is True


def test_train_shifts_add_overlapping_training_passages_only(pieces):
    novels = ("northangerabbey", "persuasion")
    once = build_long_document_task(pieces, 510, novels=novels)
    twice = build_long_document_task(pieces, 510, novels=novels, train_shifts=2)
    assert 1.8 <= len(twice.labels("train")) / len(once.labels("train")) <= 2.0
    for split in ("validation", "test"):
        assert twice.texts(split) == once.texts(split)


def test_max_passages_per_class_is_a_seeded_sample(pieces):
    novels = ("northangerabbey", "persuasion")
    small = build_long_document_task(pieces, 510, novels=novels, max_passages_per_class=3)
    assert small.counts() == {split: {n: 3 for n in novels} for split in SPLITS}
    again = build_long_document_task(pieces, 510, novels=novels, max_passages_per_class=3)
    assert again.texts("test") == small.texts("test")


def test_passage_bounds_cut_at_word_starts():
    starts = np.array([1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0], bool)
    assert passage_bounds(starts, 4) == [(0, 3), (3, 6), (6, 10)]
    assert passage_bounds(starts, 4, first=2) == [(3, 6), (6, 10)]
    # The remainder shorter than a passage is dropped; one passage per word run.
    assert passage_bounds(np.ones(7, bool), 3) == [(0, 3), (3, 6)]


@pytest.mark.parametrize("arguments, message", [
    ({"passage_pieces": 0}, "passage_pieces"),
    ({"passage_pieces": 64, "train_shifts": 0}, "train_shifts"),
    ({"passage_pieces": 4, "train_shifts": 8}, "train_shifts"),
    ({"passage_pieces": 64, "novels": ("emma",)}, "at least 2"),
    ({"passage_pieces": 64, "novels": ("emma", "ulysses")}, "Accepted: .*persuasion"),
    ({"passage_pieces": 64, "seed": -1}, "seed"),
    ({"passage_pieces": 64, "max_passages_per_class": 0}, "max_passages_per_class"),
    ({"passage_pieces": 64, "names_masked": "yes"}, "names_masked"),
])
def test_bad_arguments_are_named(arguments, message):
    with pytest.raises(ValueError, match=message):
        build_long_document_task(None, **arguments)


def test_passages_longer_than_a_split_are_refused(pieces):
    with pytest.raises(ValueError, match="not one passage"):
        build_long_document_task(pieces, 200_000, novels=("northangerabbey", "persuasion"))
