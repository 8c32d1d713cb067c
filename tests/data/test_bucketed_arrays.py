"""NumPy length-bucketed batches: every example once an epoch, cut to its
bucket, a new seeded order each epoch."""

import numpy as np
import pytest

import keras_albert
from keras_albert.data.bucketed_arrays import BucketedArrayBatches


@pytest.fixture(scope="module")
def preprocessor(sentencepiece_proto):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    return keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=64)


def _texts(count=50):
    rng = np.random.default_rng(1)
    return [" ".join(["cat"] * int(rng.integers(1, 40))) for _ in range(count)]


def test_every_example_once_per_epoch_at_its_bucket(preprocessor):
    texts = _texts()
    labels = np.arange(len(texts))
    batches = BucketedArrayBatches(preprocessor, texts, labels, batch_size=8, buckets=(16, 32), seed=3)
    full = preprocessor(texts)
    for _ in range(2):
        seen = []
        for index in range(len(batches)):
            features, y = batches[index]
            length = features["token_ids"].shape[1]
            assert length in (16, 32, 64) and len(y) <= 8
            real = features["padding_mask"].sum(-1)
            # The bucket holds each example, and no smaller bucket would.
            assert real.max() <= length
            smaller = [b for b in (16, 32, 64) if b < length]
            assert not smaller or real.min() > max(smaller)
            np.testing.assert_array_equal(features["token_ids"], np.asarray(full["token_ids"])[y, :length])
            seen += list(y)
        assert sorted(seen) == list(range(len(texts)))
        first_order = [tuple(batches[i][1]) for i in range(len(batches))]
        batches.on_epoch_end()
        assert [tuple(batches[i][1]) for i in range(len(batches))] != first_order


def test_counts_must_match(preprocessor):
    with pytest.raises(ValueError, match="`y` has 3 entries for 50 examples"):
        BucketedArrayBatches(preprocessor, _texts(), [0, 1, 2])
