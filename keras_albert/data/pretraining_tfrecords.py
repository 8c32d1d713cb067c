"""Pretraining TFRecords: write, parse and read them with static shapes.

The features and their names are those of Google's ALBERT
(`create_pretraining_data.py`), so files made here and there are
interchangeable: `input_ids`, `input_mask`, `segment_ids`, `token_boundary`
([seq] ints), `masked_lm_positions`, `masked_lm_ids` ([predictions] ints),
`masked_lm_weights` ([predictions] floats) and `next_sentence_labels` ([1]).
"""

import functools
import os
import uuid

import numpy as np
import tensorflow as tf

from keras_albert.data.ngram_masking import mask_ngrams_tf
from keras_albert.data.ngram_masking import ngram_probabilities
from keras_albert.data.pretraining_instances import PretrainingInstance
from keras_albert.utils.validation import check_fraction
from keras_albert.utils.validation import check_positive_int

SEQUENCE_FEATURES = ("input_ids", "input_mask", "segment_ids", "token_boundary")
PREDICTION_FEATURES = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")
FEATURE_NAMES = SEQUENCE_FEATURES + PREDICTION_FEATURES + ("next_sentence_labels",)
# Serialised in key order, as protobuf's deterministic serialisation does.
_INT_FEATURES = {name for name in FEATURE_NAMES if name != "masked_lm_weights"}
_SERIALIZE_BATCH = 256


def write_pretraining_tfrecords(instances, output_paths):
    """Writes instances to TFRecord files, atomically.

    Instances go round-robin to the files, as in the original. Each file is
    written under a temporary name and renamed when all instances are
    written: on any error (including one raised by the `instances`
    generator, e.g. an empty corpus) no output file is left behind.

    Args:
        instances: iterable of `PretrainingInstance`, all of the same
            `max_seq_length` and `max_predictions_per_seq`.
        output_paths: a path, or a list of paths (local or `gs://...`).

    Returns:
        int, the number of instances written.

    Example:
    >>> import tempfile, os
    >>> from keras_albert.data.sentencepiece_training import train_sentencepiece
    >>> from keras_albert.data.pretraining_instances import (
    ...     create_pretraining_instances)
    >>> texts = ["the cat sat.", "the dog ran.", "a bird sang."] * 40
    >>> docs = [texts[i:i + 6] for i in range(0, 120, 6)]
    >>> instances = create_pretraining_instances(
    ...     docs, train_sentencepiece(texts, 20), max_seq_length=16,
    ...     max_predictions_per_seq=3)
    >>> path = os.path.join(tempfile.mkdtemp(), "train.tfrecord")
    >>> write_pretraining_tfrecords(instances, path) > 0
    True
    """
    paths = _check_output_paths(output_paths)
    temporary = [f"{path}.tmp-{uuid.uuid4().hex}" for path in paths]
    writers = []
    count = 0
    try:
        writers = [tf.io.TFRecordWriter(path) for path in temporary]
        for batch in _batches(instances, _SERIALIZE_BATCH):
            for record in serialize_instances(batch):
                writers[count % len(writers)].write(record)
                count += 1
        if count == 0:
            raise ValueError("`instances` is empty: no TFRecord file written.")
        for writer in writers:
            writer.close()
        for source, target in zip(temporary, paths):
            tf.io.gfile.rename(source, target, overwrite=True)
    except BaseException:
        for writer in writers:
            writer.close()
        for path in temporary:
            if tf.io.gfile.exists(path):
                tf.io.gfile.remove(path)
        raise
    return count


def _check_output_paths(output_paths):
    if isinstance(output_paths, (str, os.PathLike)):
        output_paths = [output_paths]
    if (
        not isinstance(output_paths, (list, tuple))
        or not output_paths
        or not all(isinstance(p, (str, os.PathLike)) for p in output_paths)
    ):
        raise ValueError(
            "`output_paths` must be a path or a non-empty list of paths. "
            f"Received: output_paths={output_paths!r:.200}"
        )
    paths = [os.fspath(p) for p in output_paths]
    if len(set(paths)) != len(paths):
        raise ValueError(
            f"`output_paths` must not repeat a path. Received: {paths}"
        )
    for path in paths:
        directory = os.path.dirname(path)
        if directory and not tf.io.gfile.isdir(directory):
            raise FileNotFoundError(
                f"`output_paths` entry {path!r}: directory {directory!r} "
                "does not exist."
            )
    return paths


def _batches(items, size):
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def serialize_instances(instances):
    """Serialises instances to `tf.train.Example` bytes, vectorised.

    The bytes are what `tf.train.Example(...).SerializeToString(
    deterministic=True)` gives, built with NumPy for a whole batch (the
    protobuf path costs about a quarter of a millisecond per instance).

    Example:
    >>> import numpy as np
    >>> ones = np.ones(8, np.int32)
    >>> instance = PretrainingInstance(ones, ones, ones, ones,
    ...     np.zeros(2, np.int32), np.zeros(2, np.int32),
    ...     np.zeros(2, np.float32), 0)
    >>> example = tf.train.Example.FromString(serialize_instances([instance])[0])
    >>> list(example.features.feature["input_ids"].int64_list.value)
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    instances = list(instances)
    if not instances:
        return []
    first = instances[0]
    if not isinstance(first, PretrainingInstance):
        raise ValueError(
            "`instances` must hold `PretrainingInstance`s. Received an item "
            f"of type {type(first).__name__}"
        )
    columns = {}
    for name in FEATURE_NAMES:
        values = [getattr(instance, name) for instance in instances]
        if name == "next_sentence_labels":
            column = np.asarray(values, np.int64).reshape(-1, 1)
        else:
            try:
                column = np.stack(values)
            except ValueError:
                shapes = sorted({np.shape(v) for v in values})
                raise ValueError(
                    f"Instances must share one shape per feature; `{name}` "
                    f"has shapes {shapes}."
                ) from None
        columns[name] = column
    encoded = []
    for name in sorted(FEATURE_NAMES):
        column = columns[name]
        if name in _INT_FEATURES:
            if column.min() < 0 or column.max() >= 2**31:
                raise ValueError(
                    f"`{name}` values must be in [0, 2**31). Received min "
                    f"{column.min()}, max {column.max()}"
                )
            payload, sizes = _varint_rows(column)
        else:
            payload = column.astype("<f4").tobytes()
            sizes = np.full(len(instances), 4 * column.shape[1])
        offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        encoded.append((name, payload, offsets))
    records = []
    for row in range(len(instances)):
        parts = []
        for name, payload, offsets in encoded:
            start, end = offsets[row], offsets[row + 1]
            parts.append(_feature_header(name, end - start))
            parts.append(payload[start:end])
        features = b"".join(parts)
        records.append(b"\x0a" + _varint(len(features)) + features)
    return records


@functools.lru_cache(maxsize=None)
def _feature_header(name, packed_length):
    """Bytes of a `Features.feature` map entry up to its packed values.

    Only the packed values vary between instances; the nesting around them
    (entry -> key, Feature -> Int64List/FloatList -> value) depends on the
    name and the packed length alone, so it is built once and cached.
    """
    list_tag = b"\x1a" if name in _INT_FEATURES else b"\x12"
    value_list_header = b"\x0a" + _varint(packed_length)
    value_list_length = len(value_list_header) + packed_length
    feature_header = list_tag + _varint(value_list_length) + value_list_header
    feature_length = len(feature_header) + packed_length
    key = name.encode()
    entry_header = (
        b"\x0a" + _varint(len(key)) + key + b"\x12" + _varint(feature_length)
    )
    entry_length = len(entry_header) + feature_length
    return b"\x0a" + _varint(entry_length) + entry_header + feature_header


def _varint(value):
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varint_rows(column):
    """Protobuf varints of a [rows, n] array: (all bytes, bytes per row)."""
    values = column.astype(np.uint64)
    groups = 1
    while groups < 5 and values.max() >= 1 << (7 * groups):
        groups += 1
    shifts = np.arange(groups, dtype=np.uint64) * np.uint64(7)
    digits = (values[..., None] >> shifts) & np.uint64(0x7F)
    lengths = np.ones(values.shape, np.int64)
    for group in range(1, groups):
        lengths += values >= (1 << (7 * group))
    index = np.arange(groups)
    keep = index < lengths[..., None]
    more = (index < (lengths - 1)[..., None]).astype(np.uint64) << np.uint64(7)
    payload = (digits | more)[keep].astype(np.uint8).tobytes()
    return payload, lengths.sum(axis=1)


def feature_spec(max_seq_length, max_predictions_per_seq):
    """The `tf.io.parse_example` spec of the pretraining features.

    Example:
    >>> sorted(feature_spec(128, 20))[:2]
    ['input_ids', 'input_mask']
    """
    check_positive_int("max_seq_length", max_seq_length)
    check_positive_int("max_predictions_per_seq", max_predictions_per_seq)
    spec = {
        name: tf.io.FixedLenFeature([max_seq_length], tf.int64)
        for name in SEQUENCE_FEATURES
    }
    for name in PREDICTION_FEATURES:
        dtype = tf.float32 if name == "masked_lm_weights" else tf.int64
        spec[name] = tf.io.FixedLenFeature([max_predictions_per_seq], dtype)
    spec["next_sentence_labels"] = tf.io.FixedLenFeature([1], tf.int64)
    return spec


def parse_pretraining_examples(serialized, max_seq_length, max_predictions_per_seq):
    """Parses a batch of serialised examples into int32/float32 tensors.

    Integer features become int32 (TPUs have no int64 path);
    `next_sentence_labels` keeps its `[batch, 1]` shape as in the original.

    Example:
    >>> import numpy as np
    >>> ones = np.ones(8, np.int32)
    >>> instance = PretrainingInstance(ones, ones, ones, ones,
    ...     np.zeros(2, np.int32), np.zeros(2, np.int32),
    ...     np.zeros(2, np.float32), 1)
    >>> records = serialize_instances([instance])
    >>> parse_pretraining_examples(records, 8, 2)["input_ids"].dtype
    tf.int32
    """
    features = tf.io.parse_example(
        serialized, feature_spec(max_seq_length, max_predictions_per_seq)
    )
    return {
        name: value if value.dtype == tf.float32 else tf.cast(value, tf.int32)
        for name, value in features.items()
    }


def pretraining_dataset(
    file_pattern,
    batch_size,
    max_seq_length=None,
    max_predictions_per_seq=None,
    is_training=True,
    shuffle_buffer_size=1000,
    seed=None,
    dynamic_masking=False,
    vocabulary_size=None,
    masked_lm_prob=0.15,
    max_ngram=3,
    favor_shorter_ngram=True,
    whole_word_masking=True,
    input_context=None,
    skip_batches=0,
):
    """A `tf.data` pipeline over pretraining TFRecords, with static shapes.

    Batches are `drop_remainder=True`, so every tensor has a static shape
    (`[batch, max_seq_length]`, `[batch, max_predictions_per_seq]`,
    `[batch, 1]`), integers are int32: ready for TPUs and XLA. For training,
    files and records are shuffled and the data repeats.

    Args:
        file_pattern: a glob pattern, a file, or a list of them.
        batch_size: int, per-replica batch size (per input pipeline).
        max_seq_length: int; None reads it from the first record.
        max_predictions_per_seq: int; None reads it from the first record.
        is_training: bool, shuffle and repeat (False: one pass, in order).
        shuffle_buffer_size: int, records held for shuffling.
        seed: int or None, makes shuffling and dynamic masks reproducible.
        dynamic_masking: bool, draw new n-gram masks for every batch (each
            epoch sees different masks), from files with or without stored
            masks (`masked_lm_prob=0` at creation saves the work).
        vocabulary_size: int, needed with `dynamic_masking` (random
            replacements are drawn from the whole vocabulary).
        masked_lm_prob, max_ngram, favor_shorter_ngram, whole_word_masking:
            dynamic masking settings, as in `create_pretraining_instances`.
            `max_predictions_per_seq` is the files' prediction length.
        input_context: a `tf.distribute.InputContext`; files are sharded
            across input pipelines (e.g. from
            `strategy.distribute_datasets_from_function`).
        skip_batches: int >= 0, batches of the (seeded) stream to leave
            out: a resumed run passes the steps already trained so it sees
            exactly the batches an uninterrupted run would. Skipped batches
            are read but neither parsed nor masked.

    Returns:
        A `tf.data.Dataset` of feature dicts with the original names.

    Example:
    >>> dataset = pretraining_dataset("data/*.tfrecord", batch_size=64,
    ...     dynamic_masking=True, vocabulary_size=30000)  # doctest: +SKIP
    >>> next(iter(dataset))["input_ids"].shape  # doctest: +SKIP
    TensorShape([64, 512])
    """
    files = _resolve_files(file_pattern)
    check_positive_int("batch_size", batch_size)
    check_positive_int("shuffle_buffer_size", shuffle_buffer_size)
    if isinstance(skip_batches, bool) or not isinstance(skip_batches, int) or (
        skip_batches < 0
    ):
        raise ValueError(
            f"`skip_batches` must be an int >= 0. Received: skip_batches={skip_batches!r}"
        )
    if skip_batches and is_training and seed is None:
        raise ValueError(
            "`skip_batches` needs a `seed` when `is_training=True`: an "
            "unseeded shuffle makes the skipped batches differ from those "
            "trained on."
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"`seed` must be an int or None. Received: seed={seed!r}")
    stored = _record_lengths(files[0])
    for name, value, found in (
        ("max_seq_length", max_seq_length, stored[0]),
        ("max_predictions_per_seq", max_predictions_per_seq, stored[1]),
    ):
        if value is not None:
            check_positive_int(name, value)
            if value != found:
                raise ValueError(
                    f"`{name}={value}` does not match the files: {files[0]!r} "
                    f"holds {name}={found}. Pass {found} or None."
                )
    max_seq_length, max_predictions_per_seq = stored
    if dynamic_masking:
        if vocabulary_size is None:
            raise ValueError(
                "`vocabulary_size` is required with `dynamic_masking=True`. "
                "Received: vocabulary_size=None"
            )
        check_positive_int("vocabulary_size", vocabulary_size)
        # Fails early on bad settings rather than inside the pipeline.
        _check_masking_settings(masked_lm_prob, max_ngram)

    dataset = tf.data.Dataset.from_tensor_slices(files)
    if input_context is not None and input_context.num_input_pipelines > 1:
        if len(files) < input_context.num_input_pipelines:
            raise ValueError(
                f"Need at least one file per input pipeline: {len(files)} "
                f"files for {input_context.num_input_pipelines} pipelines."
            )
        dataset = dataset.shard(
            input_context.num_input_pipelines, input_context.input_pipeline_id
        )
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed)
    dataset = dataset.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(len(files), 8),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=not is_training or seed is not None,
    )
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    if dynamic_masking:
        # One seed pair per batch, zipped before skipping so a resumed run
        # draws the masks an uninterrupted run would.
        seeds = tf.data.Dataset.random(
            seed=seed, rerandomize_each_iteration=True
        ).batch(2)
        dataset = tf.data.Dataset.zip(dataset, seeds)
    if skip_batches:
        dataset = dataset.skip(skip_batches)

    def parse_and_mask(records, batch_seed=None):
        features = parse_pretraining_examples(
            records, max_seq_length, max_predictions_per_seq
        )
        if not dynamic_masking:
            return features
        return mask_ngrams_tf(
            features,
            batch_seed,
            vocabulary_size,
            masked_lm_prob=masked_lm_prob,
            max_ngram=max_ngram,
            favor_shorter_ngram=favor_shorter_ngram,
            whole_word_masking=whole_word_masking,
        )

    dataset = dataset.map(
        parse_and_mask, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
    )
    return dataset.prefetch(tf.data.AUTOTUNE)


def _check_masking_settings(masked_lm_prob, max_ngram):
    check_fraction("masked_lm_prob", masked_lm_prob)
    if masked_lm_prob == 0:
        raise ValueError(
            "`masked_lm_prob` must be > 0 with `dynamic_masking=True`. "
            f"Received: masked_lm_prob={masked_lm_prob!r}"
        )
    ngram_probabilities(max_ngram)


def _resolve_files(file_pattern):
    patterns = file_pattern
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    if (
        not isinstance(patterns, (list, tuple))
        or not patterns
        or not all(isinstance(p, (str, os.PathLike)) for p in patterns)
    ):
        raise ValueError(
            "`file_pattern` must be a glob pattern, a path, or a non-empty "
            f"list of them. Received: file_pattern={file_pattern!r:.200}"
        )
    files = []
    for pattern in patterns:
        matches = sorted(tf.io.gfile.glob(os.fspath(pattern)))
        if not matches:
            raise FileNotFoundError(
                f"`file_pattern` entry {os.fspath(pattern)!r} matches no file."
            )
        files.extend(matches)
    return files


def _record_lengths(path):
    """(max_seq_length, max_predictions_per_seq) of a file's first record."""
    for record in tf.data.TFRecordDataset(path).take(1):
        try:
            example = tf.train.Example.FromString(record.numpy())
        except Exception:
            example = None
        feature = {} if example is None else example.features.feature
        missing = [name for name in FEATURE_NAMES if name not in feature]
        if missing:
            raise ValueError(
                f"{path!r} is not a pretraining TFRecord file: its first "
                f"record lacks {missing}."
            )
        return (
            len(feature["input_ids"].int64_list.value),
            len(feature["masked_lm_positions"].int64_list.value),
        )
    raise ValueError(f"{path!r} holds no records.")
