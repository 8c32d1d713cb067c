"""NumPy pretraining shards and the resumable batch stream over them.

Runs on every backend, TensorFlow installed or not (that the shards hold
what the TFRecords hold is checked in test_pretraining_arrays_tfrecords.py):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/data/test_pretraining_arrays.py
"""

import numpy as np
import pytest

from keras_albert.data.pretraining_arrays import FEATURE_DTYPES
from keras_albert.data.pretraining_arrays import read_pretraining_arrays
from keras_albert.data.pretraining_arrays import write_pretraining_arrays
from keras_albert.data.pretraining_batches import PretrainingBatches
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.sentencepiece_training import train_sentencepiece
from tests.conftest import synthetic_sentences


@pytest.fixture(scope="module")
def instances():
    sentences = synthetic_sentences(600)
    documents = [sentences[i:i + 8] for i in range(0, len(sentences), 8)]
    proto = train_sentencepiece(sentences, 60)
    return list(create_pretraining_instances(
        documents, proto, max_seq_length=24, max_predictions_per_seq=4, seed=3
    ))


def test_arrays_hold_the_instances(instances, tmp_path):
    count = write_pretraining_arrays(instances, tmp_path / "train.npz")
    arrays = read_pretraining_arrays(tmp_path / "train.npz")
    assert count == len(instances) == len(arrays["input_ids"])
    for name, values in arrays.items():
        column = np.asarray([getattr(instance, name) for instance in instances])
        np.testing.assert_array_equal(values, column.reshape(values.shape), err_msg=name)
        assert values.dtype == FEATURE_DTYPES[name], name


def test_nothing_is_left_after_a_failure(tmp_path):
    with pytest.raises(ValueError, match="`instances` is empty"):
        write_pretraining_arrays([], tmp_path / "train.npz")
    assert list(tmp_path.iterdir()) == []


def test_bad_files_are_named(instances, tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="junk.npz' is not a pretraining arrays file"):
        read_pretraining_arrays(tmp_path / "junk.npz")
    np.savez(tmp_path / "partial.npz", input_ids=np.zeros((2, 4), "int32"))
    with pytest.raises(ValueError, match="partial.npz' lacks the features"):
        read_pretraining_arrays(tmp_path / "partial.npz")
    with pytest.raises(ValueError, match="must end in .npz"):
        write_pretraining_arrays(instances, tmp_path / "train.bin")


def _flat(batch):
    x, y, weights = batch
    return np.concatenate([x["token_ids"], x["mask_positions"], y["mlm"][:, :1], y["sentence_order"][:, None]], 1)


def test_stream_is_seeded_and_resumes_at_any_batch(instances):
    arrays = read_or_make(instances)
    full = PretrainingBatches(arrays, 16, seed=5)
    per_epoch = full.batches_per_epoch
    first = [_flat(b) for _, b in zip(range(per_epoch + 3), full.generator())]
    again = [_flat(b) for _, b in zip(range(per_epoch + 3), PretrainingBatches(arrays, 16, seed=5).generator())]
    resumed = [_flat(b) for _, b in zip(range(5), PretrainingBatches(arrays, 16, seed=5, skip_batches=per_epoch - 2).generator())]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(first[per_epoch - 2:], resumed):
        np.testing.assert_array_equal(a, b)
    # Fixed shapes; a new order each epoch; another seed, another order.
    assert {a.shape for a in first} == {first[0].shape}
    assert not np.array_equal(first[0], first[per_epoch])
    other = next(PretrainingBatches(arrays, 16, seed=6).generator())
    assert not np.array_equal(_flat(other), first[0])


def test_held_out_pass_reads_every_instance_once_in_order(instances):
    arrays = read_or_make(instances)
    batches = list(PretrainingBatches(arrays, 16, is_training=False).generator())
    tokens = np.concatenate([x["token_ids"] for x, _, _ in batches])
    np.testing.assert_array_equal(tokens, arrays["input_ids"])


def test_bad_settings_are_refused(instances):
    arrays = read_or_make(instances)
    with pytest.raises(ValueError, match="larger than the"):
        PretrainingBatches(arrays, 10_000)
    with pytest.raises(ValueError, match="`skip_batches` must be an int >= 0"):
        PretrainingBatches(arrays, 4, skip_batches=-1)
    with pytest.raises(ValueError, match="sentence_task"):
        PretrainingBatches(arrays, 4, sentence_task="order")


def read_or_make(instances):
    from keras_albert.data.pretraining_arrays import instances_to_arrays

    return instances_to_arrays(instances)

