"""Dynamic n-gram masking in NumPy: the TensorFlow masker's output given the
same draws, its statistics given its own, and masks that are a function of
(seed, batch index) so a resumed stream masks as an uninterrupted one."""

import itertools

import numpy as np
import pytest

from keras_albert.data.dynamic_masking import DynamicMasking
from keras_albert.data.dynamic_masking import apply_masks
from keras_albert.data.dynamic_masking import find_words
from keras_albert.data.dynamic_masking import restore_original_ids
from keras_albert.data.ngram_masking import CLS_ID
from keras_albert.data.ngram_masking import MASK_ID
from keras_albert.data.ngram_masking import SEP_ID
from keras_albert.data.pretraining_arrays import instances_to_arrays
from keras_albert.data.pretraining_batches import PretrainingBatches
from keras_albert.data.pretraining_instances import create_pretraining_instances
from tests.conftest import synthetic_sentences

SEQUENCE, PREDICTIONS, VOCABULARY = 128, 20, 80
MASKED = ("input_ids", "masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


@pytest.fixture(scope="module")
def arrays(sentencepiece_proto):
    texts = synthetic_sentences(3000, seed=4)
    documents = [texts[i : i + 10] for i in range(0, len(texts), 10)]
    instances = create_pretraining_instances(
        documents, sentencepiece_proto, max_seq_length=SEQUENCE,
        max_predictions_per_seq=PREDICTIONS, seed=3,
    )
    return instances_to_arrays(instances)


def _rows(arrays, count=64):
    return {name: values[:count] for name, values in arrays.items()}


def test_masks_are_valid_whole_word_and_restore_the_original(arrays):
    features = _rows(arrays)
    original = restore_original_ids(features)
    words = find_words(original, features, whole_word_masking=True)
    out = DynamicMasking(VOCABULARY)(features, np.random.default_rng(1))
    assert {out[name].dtype for name in MASKED} == {np.dtype("int32"), np.dtype("float32")}
    assert out["input_ids"].shape == (64, SEQUENCE)
    assert out["masked_lm_positions"].shape == (64, PREDICTIONS)
    for row in range(64):
        real = out["masked_lm_weights"][row] > 0
        positions = out["masked_lm_positions"][row][real]
        assert real.sum() >= 1 and not out["masked_lm_positions"][row][~real].any()
        assert np.all(np.diff(positions) > 0)
        np.testing.assert_array_equal(out["masked_lm_ids"][row][real], original[row, positions])
        assert not np.isin(original[row, positions], [0, CLS_ID, SEP_ID]).any()
        untouched = np.ones(SEQUENCE, bool)
        untouched[positions] = False
        np.testing.assert_array_equal(out["input_ids"][row][untouched], original[row][untouched])
        # Whole words: every candidate piece of a masked word is masked.
        masked_words = np.unique(words["word_of_position"][row, positions])
        pieces = words["candidates"][row] & np.isin(words["word_of_position"][row], masked_words)
        np.testing.assert_array_equal(np.flatnonzero(pieces), positions)
    # The features that masking does not own pass through.
    np.testing.assert_array_equal(out["segment_ids"], features["segment_ids"])


def test_matches_the_tensorflow_masker_given_the_same_draws(arrays):
    tf = pytest.importorskip("tensorflow")
    from keras_albert.data import ngram_masking

    features = _rows(arrays)
    original = restore_original_ids(features)
    words = find_words(original, features, whole_word_masking=True)
    rng = np.random.default_rng(7)
    keys = rng.random((64, SEQUENCE))
    valid = np.arange(SEQUENCE)[None] < words["num_words"][:, None]
    order = np.argsort(np.where(valid, keys, 2.0), axis=1, kind="stable")
    sizes = rng.integers(1, 4, (64, SEQUENCE))
    replace = rng.random((2, 64, PREDICTIONS)).astype(np.float32)
    random_ids = rng.integers(0, VOCABULARY, (64, PREDICTIONS))
    ours = apply_masks(features, original, words, 0.15, 3, order, sizes, replace, random_ids)

    tensors = {name: tf.constant(values) for name, values in features.items()}
    tf_original = ngram_masking.restore_original_ids(tensors)
    np.testing.assert_array_equal(tf_original.numpy(), original)
    tf_words = ngram_masking.find_words_tf(tf_original, tensors, True)
    for name in ("num_words", "offsets", "word_of_position", "candidates"):
        np.testing.assert_array_equal(tf_words[name].numpy(), words[name])
    theirs = ngram_masking.apply_masks_tf(
        tensors, tf_original, tf_words, 0.15, 3, tf.constant(order, tf.int32),
        tf.constant(sizes, tf.int32), tf.constant(replace), tf.constant(random_ids, tf.int32),
    )
    for name in MASKED:
        np.testing.assert_array_equal(ours[name], theirs[name].numpy(), err_msg=name)
    assert ours["masked_lm_weights"].sum() > 64 * 5


def _statistics(batches, features):
    """Prediction rate, shares of masked word runs of 1, 2, 3, 4+ words and
    shares of [MASK] / kept / other replacements, over masked batches."""
    original = restore_original_ids(features)
    word_of_position = find_words(original, features, True)["word_of_position"]
    tokens = predicted = 0
    runs = np.zeros(4)
    replaced = np.zeros(3)
    for out in batches:
        tokens += features["input_mask"].sum()
        predicted += out["masked_lm_weights"].sum()
        for row in range(len(original)):
            real = out["masked_lm_weights"][row] > 0
            positions = out["masked_lm_positions"][row][real]
            masked_words = np.unique(word_of_position[row, positions])
            breaks = np.flatnonzero(np.diff(masked_words) != 1)
            lengths = np.diff(np.concatenate([[-1], breaks, [masked_words.size - 1]]))
            np.add.at(runs, np.minimum(lengths, 4) - 1, 1)
            ids, labels = out["input_ids"][row, positions], original[row, positions]
            replaced += [(ids == MASK_ID).sum(), ((ids == labels) & (ids != MASK_ID)).sum(),
                         ((ids != labels) & (ids != MASK_ID)).sum()]
    return predicted / tokens, runs / runs.sum(), replaced / replaced.sum()


@pytest.mark.large
def test_statistics_match_the_tensorflow_path_on_the_same_instances(arrays):
    tf = pytest.importorskip("tensorflow")
    from keras_albert.data.ngram_masking import mask_ngrams_tf

    features = _rows(arrays)
    tensors = {name: tf.constant(values) for name, values in features.items()}
    mask_tf = tf.function(lambda seed: mask_ngrams_tf(tensors, seed, VOCABULARY))
    draws = 60
    tf_stats = _statistics(
        [{k: v.numpy() for k, v in mask_tf(tf.constant([9, i], tf.int64)).items()}
         for i in range(draws)], features,
    )

    def numpy_stats(**settings):
        masking = DynamicMasking(VOCABULARY, **settings)
        return _statistics(
            [masking(features, np.random.default_rng([5, i])) for i in range(draws)], features
        )

    rate, runs, replaced = numpy_stats()
    assert abs(rate - 0.15) < 0.02
    assert abs(rate / tf_stats[0] - 1) < 0.01, (rate, tf_stats[0])
    np.testing.assert_allclose(runs, tf_stats[1], atol=0.015)
    np.testing.assert_allclose(replaced, tf_stats[2], atol=0.01)
    np.testing.assert_allclose(replaced, [0.8, 0.1, 0.1], atol=0.015)
    # The tolerances catch a wrong setting: longer n-grams favoured, or a
    # different masking rate.
    _, reversed_runs, _ = numpy_stats(favor_shorter_ngram=False)
    assert np.abs(reversed_runs - tf_stats[1]).max() > 0.05
    other_rate, _, _ = numpy_stats(masked_lm_prob=0.13)
    assert abs(other_rate / tf_stats[0] - 1) > 0.05


def test_batches_mask_by_seed_and_index_so_a_resumed_stream_matches(arrays):
    masking = DynamicMasking(VOCABULARY)

    def stream(seed=3, skip_batches=0):
        return PretrainingBatches(
            arrays, 32, seed=seed, skip_batches=skip_batches, dynamic_masking=masking
        )

    straight = list(itertools.islice(stream().generator(), 12))
    resumed = list(itertools.islice(stream(skip_batches=7).generator(), 5))
    for got, expected in zip(resumed, straight[7:], strict=True):
        for part_got, part_expected in zip(got, expected, strict=True):
            for name in part_expected:
                np.testing.assert_array_equal(part_got[name], part_expected[name])
    again = stream().batch(3)
    np.testing.assert_array_equal(again[0]["token_ids"], straight[3][0]["token_ids"])
    other_seed = stream(seed=4)
    np.testing.assert_array_equal(other_seed.rows(0), other_seed.rows(0))
    assert not np.array_equal(other_seed.batch(0)[0]["token_ids"], straight[0][0]["token_ids"])


def test_each_epoch_masks_an_instance_anew(arrays):
    batches = PretrainingBatches(arrays, 32, seed=2, dynamic_masking=DynamicMasking(VOCABULARY))
    per_epoch = batches.batches_per_epoch

    def masks(epoch):
        found = {}
        for index in range(epoch * per_epoch, (epoch + 1) * per_epoch):
            x = batches.batch(index)[0]
            for row, positions in zip(batches.rows(index), x["mask_positions"], strict=True):
                found[int(row)] = tuple(positions)
        return found

    first, second = masks(0), masks(1)
    shared = first.keys() & second.keys()
    assert len(shared) >= 0.9 * len(arrays["input_ids"]) - 32
    changed = sum(first[row] != second[row] for row in shared)
    assert changed >= 0.95 * len(shared)


def test_without_dynamic_masking_the_stored_masks_stay(arrays):
    batch = PretrainingBatches(arrays, 16, seed=1).batch(0)
    rows = PretrainingBatches(arrays, 16, seed=1).rows(0)
    np.testing.assert_array_equal(batch[0]["mask_positions"], arrays["masked_lm_positions"][rows])


def test_bad_settings_are_refused_in_one_line(arrays):
    with pytest.raises(ValueError, match=r"`masked_lm_prob` must be > 0 for dynamic masking"):
        DynamicMasking(VOCABULARY, masked_lm_prob=0)
    with pytest.raises(ValueError, match="vocabulary_size"):
        DynamicMasking(0)
    with pytest.raises(ValueError, match="max_ngram"):
        DynamicMasking(VOCABULARY, max_ngram=0)
    masking = DynamicMasking(VOCABULARY)
    with pytest.raises(ValueError, match=r"`rng` must be a numpy.random.Generator"):
        masking(_rows(arrays), 3)
    with pytest.raises(ValueError, match=r"Missing: \['token_boundary'\]"):
        masking({k: v for k, v in arrays.items() if k != "token_boundary"}, np.random.default_rng())
    with pytest.raises(ValueError, match="`dynamic_masking` must be a DynamicMasking or None"):
        PretrainingBatches(arrays, 16, dynamic_masking=True)
