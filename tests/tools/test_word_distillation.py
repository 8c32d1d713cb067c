"""tools/teacher_word_vectors.py and tools/distill_word_vectors.py: words
line up between the teacher's and our vocabularies, and batches mask whole
words with the right targets. (The teacher itself is a build-time extra;
its vectors are replaced by numbered rows here.)"""

import argparse

import numpy as np

import keras_albert
from tests.scripts import load_script

teacher_tool = load_script("tools/teacher_word_vectors.py")
distill_tool = load_script("tools/distill_word_vectors.py")


def test_words_are_whitespace_spans():
    assert teacher_tool.word_spans("  a dog,  (barks). ") == [(2, 3), (4, 8), (10, 18)]
    assert teacher_tool.word_spans("") == []


def test_pieces_line_up_with_the_teachers_words_and_batches_mask_whole_words():
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    texts = ["a large domesticated animal kept for riding", "The quick, brown fox (jumps).",
             "word " * 40]
    counts = [len(text.split()) for text in texts]
    # The second text's teacher row claims one word too many: not aligned.
    counts[1] += 1
    offsets = np.concatenate([[0], np.cumsum(counts)])
    kept, ids, words = distill_tool.align(tokenizer, texts, offsets, length=32)
    # The third has more than 30 pieces.
    assert kept == [0]
    assert words[0][0] == 0 and words[0][-1] == counts[0] - 1
    assert (np.diff(words[0]) >= 0).all()

    # Row k of the teacher's vectors holds the number k: targets are checkable.
    vectors = np.repeat(np.arange(offsets[-1], dtype=np.float32)[:, None], 384, axis=1)
    args = argparse.Namespace(sequence_length=32, max_predictions=8, mask_rate=0.3)
    batches = distill_tool.Batches(tokenizer, ids, words, vectors, offsets, kept, args)
    (token_ids, segment_ids, padding, word_of_piece, targets, word_valid,
     positions, labels, weights) = batches.make([0], np.random.default_rng(0))
    count = counts[0]
    assert targets[0, :count, 0].tolist() == list(range(count)) and word_valid[0].sum() == count
    original = np.asarray(tokenizer(texts[0]))
    assert token_ids[0, 0] == tokenizer.cls_token_id
    assert token_ids[0, len(original) + 1] == tokenizer.sep_token_id
    assert padding[0].sum() == len(original) + 2
    assert not segment_ids.any()
    masked = positions[0][weights[0] > 0]
    assert len(masked) > 0
    # Labels are the original pieces; the input shows [MASK] there.
    assert (labels[0][weights[0] > 0] == original[masked - 1]).all()
    assert (token_ids[0, masked] == tokenizer.mask_token_id).all()
    # Whole words: every piece of a masked word is masked.
    masked_words = set(word_of_piece[0, masked].tolist())
    for word in masked_words:
        pieces = np.flatnonzero(word_of_piece[0] == word)
        assert set(pieces.tolist()) <= set(masked.tolist())


def test_pairs_pack_a_second_text_as_segment_one_with_its_own_targets():
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    texts = ["a large domesticated animal", "kept for riding or pulling loads",
             "word " * 26]
    counts = [len(text.split()) for text in texts]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    kept, ids, words = distill_tool.align(tokenizer, texts, offsets, length=32)
    assert kept == [0, 1, 2]
    vectors = np.repeat(np.arange(offsets[-1], dtype=np.float32)[:, None], 384, axis=1)
    args = argparse.Namespace(sequence_length=32, max_predictions=20, mask_rate=1.0)
    batches = distill_tool.Batches(tokenizer, ids, words, vectors, offsets, kept, args)
    # Row 0 with row 1 fits; row 1 with row 2 (26 more pieces) does not.
    (token_ids, segment_ids, padding, word_of_piece, targets, word_valid,
     positions, labels, weights) = batches.make([0, 1], np.random.default_rng(0),
                                                partners=[1, 2])
    first, second = np.asarray(tokenizer(texts[0])), np.asarray(tokenizer(texts[1]))
    end = len(first) + len(second) + 2
    assert token_ids[0, 0] == tokenizer.cls_token_id
    assert token_ids[0, len(first) + 1] == token_ids[0, end] == tokenizer.sep_token_id
    assert segment_ids[0, :len(first) + 2].sum() == 0
    assert (segment_ids[0, len(first) + 2:end + 1] == 1).all() and segment_ids[0, end + 1:].sum() == 0
    assert padding[0].sum() == end + 1
    # Targets: the first text's teacher rows, then the second's.
    both = counts[0] + counts[1]
    assert targets[0, :both, 0].tolist() == list(range(both)) and word_valid[0].sum() == both
    assert word_of_piece[0, len(first) + 2] == counts[0]
    assert word_of_piece[0, len(first) + 1] == -1 and word_of_piece[0, end] == -1
    # Every word masked (rate 1.0): labels are the pieces of both texts, in place.
    masked = positions[0][weights[0] > 0]
    original = np.full(32, -1)
    original[1:len(first) + 1] = first
    original[len(first) + 2:end] = second
    assert sorted(masked.tolist()) == [p for p in range(32) if original[p] >= 0]
    assert (labels[0][weights[0] > 0] == original[masked]).all()
    assert (token_ids[0, masked] == tokenizer.mask_token_id).all()
    # The partner that does not fit leaves its row a single text.
    assert not segment_ids[1].any() and word_valid[1].sum() == counts[1]
