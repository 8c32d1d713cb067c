"""Pretraining TFRecords: bytes, atomic writes, static-shape reader, dynamic masks.

TensorFlow only (TFRecords, tf.data); skipped without it. The TF-free pretraining
inputs are tests/data/test_pretraining_arrays.py's.
"""

import os

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="TFRecords and their tf.data reader are TensorFlow's")

from keras_albert.data.ngram_masking import CLS_ID  # noqa: E402
from keras_albert.data.ngram_masking import MASK_ID  # noqa: E402
from keras_albert.data.ngram_masking import SEP_ID  # noqa: E402
from keras_albert.data.ngram_masking import NgramMasker  # noqa: E402
from keras_albert.data.ngram_masking import apply_masks_tf  # noqa: E402
from keras_albert.data.ngram_masking import find_words_tf  # noqa: E402
from keras_albert.data.ngram_masking import num_to_predict  # noqa: E402
from keras_albert.data.ngram_masking import restore_original_ids  # noqa: E402
from keras_albert.data.ngram_masking import start_piece_table  # noqa: E402
from keras_albert.data.pretraining_instances import create_pretraining_instances  # noqa: E402
from keras_albert.data.pretraining_instances import load_sentencepiece  # noqa: E402
from keras_albert.data.pretraining_tfrecords import FEATURE_NAMES  # noqa: E402
from keras_albert.data.pretraining_tfrecords import parse_pretraining_examples  # noqa: E402
from keras_albert.data.pretraining_tfrecords import pretraining_dataset  # noqa: E402
from keras_albert.data.pretraining_tfrecords import serialize_instances  # noqa: E402
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords  # noqa: E402
from tests.conftest import synthetic_sentences  # noqa: E402

SEQUENCE, PREDICTIONS = 64, 10


def _documents(count=40, sentences=10, seed=0):
    texts = synthetic_sentences(count * sentences, seed=seed)
    return [texts[i : i + sentences] for i in range(0, len(texts), sentences)]


def _instances(proto, **kwargs):
    kwargs.setdefault("max_seq_length", SEQUENCE)
    kwargs.setdefault("max_predictions_per_seq", PREDICTIONS)
    documents = kwargs.pop("documents", None) or _documents()
    return create_pretraining_instances(documents, proto, **kwargs)


def _example(instance):
    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    feature = {
        name: ints(np.ravel(getattr(instance, name)))
        for name in FEATURE_NAMES
        if name != "masked_lm_weights"
    }
    feature["masked_lm_weights"] = tf.train.Feature(
        float_list=tf.train.FloatList(value=instance.masked_lm_weights)
    )
    return tf.train.Example(features=tf.train.Features(feature=feature))


def test_serialized_bytes_are_protobufs_deterministic_bytes(sentencepiece_proto):
    instances = list(_instances(sentencepiece_proto))[:50]
    # Large ids need multi-byte varints.
    instances[0].input_ids[1] = 2**31 - 1
    instances[1].input_ids[1] = 300
    for instance, record in zip(instances, serialize_instances(instances)):
        expected = _example(instance)
        assert tf.train.Example.FromString(record) == expected
        assert record == expected.SerializeToString(deterministic=True)


def test_write_and_read_back_with_static_int32_shapes(sentencepiece_proto, tmp_path):
    instances = list(_instances(sentencepiece_proto, instance_buffer_size=1))
    paths = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    assert write_pretraining_tfrecords(iter(instances), paths) == len(instances)
    assert sorted(os.listdir(tmp_path)) == ["a.tfrecord", "b.tfrecord"]

    # Round-robin across files, as the original writes them.
    dataset = pretraining_dataset(paths[0], batch_size=8, is_training=False)
    for name, spec in dataset.element_spec.items():
        assert spec.shape.is_fully_defined(), name
        assert spec.dtype == (tf.float32 if name == "masked_lm_weights" else tf.int32)
    assert dataset.element_spec["input_ids"].shape == (8, SEQUENCE)
    assert dataset.element_spec["masked_lm_ids"].shape == (8, PREDICTIONS)
    assert dataset.element_spec["next_sentence_labels"].shape == (8, 1)
    batches = list(dataset)
    first_file = instances[::2]
    assert len(batches) == len(first_file) // 8  # drop_remainder
    for row, instance in enumerate(first_file[: 8 * len(batches)]):
        batch = batches[row // 8]
        for name in FEATURE_NAMES:
            np.testing.assert_array_equal(
                batch[name][row % 8].numpy(), np.ravel(getattr(instance, name))
            )


def test_training_dataset_shuffles_repeats_and_is_seeded(sentencepiece_proto, tmp_path):
    path = str(tmp_path / "train.tfrecord")
    count = write_pretraining_tfrecords(_instances(sentencepiece_proto), path)

    def first_ids(seed):
        dataset = pretraining_dataset(path, batch_size=4, seed=seed)
        return [b["input_ids"].numpy() for b in dataset.take(count // 4 + 3)]

    run = first_ids(3)
    assert len(run) == count // 4 + 3  # repeats past one epoch
    np.testing.assert_array_equal(np.stack(run), np.stack(first_ids(3)))
    assert not np.array_equal(np.stack(run), np.stack(first_ids(4)))


def test_same_seed_gives_byte_identical_files(sentencepiece_proto, tmp_path):
    def write(name, seed):
        path = str(tmp_path / name)
        write_pretraining_tfrecords(_instances(sentencepiece_proto, seed=seed), path)
        with open(path, "rb") as file:
            return file.read()

    first = write("a.tfrecord", 11)
    assert first == write("b.tfrecord", 11)
    assert first != write("c.tfrecord", 12)


def test_failed_writes_leave_no_file_behind(sentencepiece_proto, tmp_path):
    path = tmp_path / "out.tfrecord"
    path.write_bytes(b"previous contents")

    def documents():
        yield from _documents(count=30)
        yield ["a fine sentence.", None]

    with pytest.raises(ValueError, match="must hold only str"):
        write_pretraining_tfrecords(
            _instances(sentencepiece_proto, documents=documents()), str(path)
        )
    with pytest.raises(ValueError, match="holds no text"):
        write_pretraining_tfrecords(
            _instances(sentencepiece_proto, documents=[[""]]), str(path)
        )
    with pytest.raises(ValueError, match="`instances` is empty"):
        write_pretraining_tfrecords([], str(path))
    assert os.listdir(tmp_path) == ["out.tfrecord"]
    assert path.read_bytes() == b"previous contents"


def test_bad_writer_and_reader_arguments(sentencepiece_proto, tmp_path):
    with pytest.raises(FileNotFoundError, match="no_dir"):
        write_pretraining_tfrecords([], str(tmp_path / "no_dir" / "x.tfrecord"))
    with pytest.raises(ValueError, match="must not repeat"):
        write_pretraining_tfrecords([], [str(tmp_path / "x"), str(tmp_path / "x")])
    with pytest.raises(FileNotFoundError, match="matches no file"):
        pretraining_dataset(str(tmp_path / "*.tfrecord"), batch_size=2)
    path = str(tmp_path / "train.tfrecord")
    write_pretraining_tfrecords(_instances(sentencepiece_proto), path)
    with pytest.raises(ValueError, match=r"=128.*holds max_seq_length=64"):
        pretraining_dataset(path, batch_size=2, max_seq_length=128)
    with pytest.raises(ValueError, match="batch_size.*=0"):
        pretraining_dataset(path, batch_size=0)
    with pytest.raises(ValueError, match="vocabulary_size` is required"):
        pretraining_dataset(path, batch_size=2, dynamic_masking=True)
    with pytest.raises(ValueError, match=r"masked_lm_prob.*1.5"):
        pretraining_dataset(
            path, batch_size=2, dynamic_masking=True, vocabulary_size=80,
            masked_lm_prob=1.5,
        )
    other = tmp_path / "other.tfrecord"
    with tf.io.TFRecordWriter(str(other)) as writer:
        writer.write(b"not an example")
    with pytest.raises(ValueError, match="not a pretraining TFRecord"):
        pretraining_dataset(str(other), batch_size=2)


def _numpy_draws(batch, rng, num_words):
    """Random draws for the TF masker, and the per-row slices NumPy uses."""
    sequence = SEQUENCE
    orders, sizes = [], []
    for words in num_words:
        order = np.concatenate([rng.permutation(words), np.arange(words, sequence)])
        orders.append(order)
        sizes.append(rng.integers(1, 4, sequence))
    replace = rng.random((2, batch, PREDICTIONS)).astype(np.float32)
    random_ids = rng.integers(0, 80, (batch, PREDICTIONS))
    return np.array(orders), np.array(sizes), replace, random_ids


def test_tf_masking_matches_numpy_masking_exactly(sentencepiece_proto):
    sp = load_sentencepiece(sentencepiece_proto)
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    masker = NgramMasker(start_piece_table(pieces), max_predictions_per_seq=PREDICTIONS)
    instances = list(
        _instances(sentencepiece_proto, masked_lm_prob=0.0, sentence_task="sop")
    )[:32]
    features = {
        name: tf.constant(np.stack([np.ravel(getattr(i, name)) for i in instances]))
        for name in FEATURE_NAMES
    }
    original = restore_original_ids(features)
    words = find_words_tf(original, features, whole_word_masking=True)
    num_words = words["num_words"].numpy()
    rng = np.random.default_rng(5)
    order, sizes, replace, random_ids = _numpy_draws(len(instances), rng, num_words)
    out = apply_masks_tf(
        features, original, words, 0.15, 3,
        tf.constant(order, tf.int32), tf.constant(sizes, tf.int32),
        tf.constant(replace), tf.constant(random_ids, tf.int32),
    )
    for row, instance in enumerate(instances):
        length = int(instance.input_mask.sum())
        tokens = instance.input_ids[:length]
        candidates, starts, _ = masker.words(tokens)
        assert starts.sum() == num_words[row]
        ids, positions, labels = masker.apply(
            tokens, candidates, starts, num_to_predict(length, 0.15, PREDICTIONS),
            order[row, : num_words[row]], sizes[row, : num_words[row]],
            replace_draws=replace[:, row], random_ids=random_ids[row],
        )
        count = positions.size
        assert count > 0
        np.testing.assert_array_equal(out["input_ids"][row, :length], ids)
        np.testing.assert_array_equal(
            out["masked_lm_positions"][row, :count], positions
        )
        np.testing.assert_array_equal(out["masked_lm_ids"][row, :count], labels)
        assert out["masked_lm_weights"][row].numpy().sum() == count
        assert not out["masked_lm_positions"][row, count:].numpy().any()


@pytest.mark.large
def test_dynamic_masking_draws_new_masks_each_epoch(sentencepiece_proto, tmp_path):
    path = str(tmp_path / "train.tfrecord")
    # Stored with static masks: the pipeline restores and masks again.
    instances = list(_instances(sentencepiece_proto, instance_buffer_size=1))
    write_pretraining_tfrecords(instances, path)
    originals = []
    for instance in instances:
        ids = instance.input_ids.copy()
        real = instance.masked_lm_weights > 0
        ids[instance.masked_lm_positions[real]] = instance.masked_lm_ids[real]
        originals.append(ids)

    def epoch_batches(dataset):
        return [
            {k: v.numpy() for k, v in batch.items()} for batch in dataset
        ]

    dataset = pretraining_dataset(
        path, batch_size=8, is_training=False, seed=1, dynamic_masking=True,
        vocabulary_size=80,
    )
    first, second = epoch_batches(dataset), epoch_batches(dataset)
    predicted = tokens = replaced = masked = 0
    for batch_first, batch_second, start in zip(first, second, range(0, 10**6, 8)):
        assert not np.array_equal(
            batch_first["masked_lm_positions"], batch_second["masked_lm_positions"]
        )
        for row in range(8):
            original = originals[start + row]
            ids = batch_first["input_ids"][row]
            weights = batch_first["masked_lm_weights"][row] > 0
            positions = batch_first["masked_lm_positions"][row][weights]
            restored = ids.copy()
            restored[positions] = batch_first["masked_lm_ids"][row][weights]
            np.testing.assert_array_equal(restored, original)
            assert not np.isin(original[positions], [0, CLS_ID, SEP_ID]).any()
            unchanged = np.ones(SEQUENCE, bool)
            unchanged[positions] = False
            np.testing.assert_array_equal(ids[unchanged], original[unchanged])
            predicted += weights.sum()
            tokens += (original > 0).sum()
            masked += (ids[positions] == MASK_ID).sum()
            replaced += weights.sum()
    assert abs(predicted / tokens - 0.15) < 0.015
    assert abs(masked / replaced - 0.8) < 0.05

    again = pretraining_dataset(
        path, batch_size=8, is_training=False, seed=1, dynamic_masking=True,
        vocabulary_size=80,
    )
    np.testing.assert_array_equal(
        epoch_batches(again)[0]["input_ids"], first[0]["input_ids"]
    )


def test_parse_casts_to_int32(sentencepiece_proto):
    records = serialize_instances(list(_instances(sentencepiece_proto))[:3])
    features = parse_pretraining_examples(tf.constant(records), SEQUENCE, PREDICTIONS)
    assert features["input_ids"].shape == (3, SEQUENCE)
    assert features["input_ids"].dtype == tf.int32
    assert features["masked_lm_weights"].dtype == tf.float32
