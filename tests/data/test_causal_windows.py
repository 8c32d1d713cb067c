"""Causal LM windows (issue 37, item 2): documents packed without padding,
every token a target once, boundaries marked, batches resumable."""

import numpy as np
import pytest

from keras_albert.data.causal_windows import CausalWindowBatches
from keras_albert.data.causal_windows import document_stream
from keras_albert.data.causal_windows import pack_windows
from keras_albert.data.causal_windows import window_batch

START, END = 2, 3


def _documents(seed=0, count=7):
    rng = np.random.default_rng(seed)
    return [rng.integers(5, 50, size=rng.integers(1, 30)) for _ in range(count)]


def test_stream_marks_each_document_with_start_and_end_tokens_and_drops_empty_ones():
    stream = document_stream([[7, 8], [], [9]], START, END)
    np.testing.assert_array_equal(stream, [2, 7, 8, 3, 2, 9, 3])
    with pytest.raises(ValueError, match="no tokens"):
        document_stream([[], []], START, END)


@pytest.mark.parametrize("window_length", [1, 5, 16, 200])
def test_every_token_is_a_target_exactly_once_and_only_the_last_window_is_padded(window_length):
    stream = document_stream(_documents(), START, END)
    windows = pack_windows(stream, window_length)
    x, y, weights = window_batch(windows, np.arange(len(windows["lengths"])))
    # Targets read in window order give the stream back, first token aside:
    # nothing lost, nothing twice.
    np.testing.assert_array_equal(y[weights > 0], stream[1:])
    # Inputs: the stream without its last token, each real input once.
    np.testing.assert_array_equal(x["token_ids"][x["padding_mask"] > 0], stream[:-1])
    # Windows overlap by one token (the last target is the next first input).
    np.testing.assert_array_equal(windows["token_ids"][1:, 0], windows["token_ids"][:-1, -1])
    assert (windows["lengths"][:-1] == window_length + 1).all()
    assert weights[:-1].all() and x["padding_mask"][:-1].all()
    last = windows["lengths"][-1]
    assert 2 <= last <= window_length + 1
    assert (windows["token_ids"][-1, last:] == 0).all()
    assert weights[-1].sum() == last - 1 and x["padding_mask"][-1].sum() == last - 1


def test_document_boundaries_are_an_end_token_then_a_start_token():
    documents = [[10, 11, 12], [20, 21], [30]]
    windows = pack_windows(document_stream(documents, START, END), 4)
    tokens = np.concatenate([windows["token_ids"][0], *[w[1:] for w in windows["token_ids"][1:]]])
    tokens = tokens[: windows["lengths"].sum() - len(windows["lengths"]) + 1]
    np.testing.assert_array_equal(tokens, [2, 10, 11, 12, 3, 2, 20, 21, 3, 2, 30, 3])


def test_batches_are_a_function_of_seed_and_index_so_a_resume_sees_the_same_ones():
    windows = pack_windows(document_stream(_documents(count=40), START, END), 8)
    straight = CausalWindowBatches(windows, 4, seed=3)
    per_epoch = straight.batches_per_epoch
    expected = [straight.batch(i) for i in range(per_epoch + 3)]
    resumed = iter(CausalWindowBatches(windows, 4, seed=3).skipping(per_epoch - 1))
    for index in range(per_epoch - 1, per_epoch + 3):
        got = next(resumed)
        np.testing.assert_array_equal(got[1], expected[index][1])
    # Each epoch is a permutation of full batches; epochs differ in order.
    rows = np.concatenate([straight.rows(i) for i in range(per_epoch)])
    assert len(set(rows)) == len(rows) == per_epoch * 4
    assert not np.array_equal(rows, np.concatenate([straight.rows(i) for i in range(per_epoch, 2 * per_epoch)]))


def test_held_out_batches_cover_every_window_once_in_order():
    windows = pack_windows(document_stream(_documents(count=9), START, END), 8)
    batches = list(CausalWindowBatches(windows, 4, is_training=False))
    assert len(batches) == -(-len(windows["lengths"]) // 4)
    np.testing.assert_array_equal(np.concatenate([y for _, y, _ in batches]), windows["token_ids"][:, 1:])


def test_a_corpus_smaller_than_a_batch_is_refused_in_one_line():
    windows = pack_windows(np.arange(2, 12), 4)
    with pytest.raises(ValueError, match=r"`batch_size=8` is larger than the 3 windows"):
        CausalWindowBatches(windows, 8)
