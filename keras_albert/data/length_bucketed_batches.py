"""Fine-tuning input pipelines that pad each batch to its length bucket.

`bucketed_dataset(preprocessor, texts, labels)` shuffles the examples,
packs them in a parallel tf.data map, groups them by the smallest bucket
that holds each one and batches within a bucket, so short texts train at
16 or 32 positions instead of 128 or 512. The padded shapes are bounded:
per bucket, full batches and one remainder batch whose size is the same
every epoch (the examples per bucket do not change), so XLA compiles at
most two programs per bucket (one with `drop_remainder=True`).

The batches are packed already; pass them to the task's `fit`/`evaluate`
as they are (the task models let packed features through their
preprocessing). Word lists with word labels (token classification) become
per-piece labels and first-piece weights, cut to the bucket with the
features.
"""

import keras
import numpy as np

from keras_albert.models.length_buckets import DEFAULT_BUCKETS
from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import packed_lengths
from keras_albert.models.preprocessor_inputs import is_text
from keras_albert.utils.backend import optional_tensorflow

# tf.data on TensorFlow; `bucketed_batches` hands JAX and PyTorch NumPy
# batches (`bucketed_arrays`).
tf = optional_tensorflow()[0]

# Examples tokenized per map call: batched tokenization is much faster
# than one example at a time.
_PACK_CHUNK = 256


def _is_word_lists(x):
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(row, (list, tuple)) for row in x)


def _as_slices(x):
    if _is_word_lists(x) and not (isinstance(x, tuple) and len(x) == 2 and is_text(list(x[0]))):
        # Token classification: word lists, ragged.
        return tf.ragged.constant([list(words) for words in x], dtype=tf.string)
    if isinstance(x, tuple):
        if len(x) != 2 or not (is_text(list(x[0])) and is_text(list(x[1]))):
            raise ValueError(f"`x` as a tuple must be (texts, second texts). Received: {x!r:.200}")
        return tuple(list(part) for part in x)
    if isinstance(x, dict):
        return {name: np.asarray(value) if name == "choices" else list(value) for name, value in x.items()}
    if not is_text(list(x)):
        raise ValueError(
            "`x` must be a list of texts, a pair of lists, a multiple-choice dict or a list of word lists. "
            f"Received: {x!r:.200}"
        )
    return list(x)


def _as_targets(values, word_lists):
    if word_lists and not isinstance(values, np.ndarray):
        return tf.ragged.constant([list(row) for row in values], dtype=tf.int32)
    return np.asarray(values)


def _count(slices):
    if isinstance(slices, tuple):
        return len(slices[0])
    if isinstance(slices, dict):
        return len(slices["context"])
    if isinstance(slices, tf.RaggedTensor):
        return int(slices.nrows())
    return len(slices)


def _packer(preprocessor, is_pair, word_lists):
    def pack(inputs, *targets):
        if word_lists and targets:
            # Word labels -> per-piece labels and weights (first pieces).
            return tuple(preprocessor(inputs, targets[0]))
        features = preprocessor(x=inputs) if is_pair else preprocessor(inputs)
        if isinstance(features, tuple):
            features = features[0]
        return (features, *targets)

    return pack


def bucketed_batches(preprocessor, x, y=None, batch_size=32, seed=None, buckets=DEFAULT_BUCKETS):
    """Length-bucketed training batches for the running backend: this
    module's tf.data pipeline on TensorFlow, `BucketedArrayBatches` (NumPy
    arrays packed once) on JAX and PyTorch."""
    if keras.config.backend() == "tensorflow":
        return bucketed_dataset(preprocessor, x, y, batch_size=batch_size, buckets=buckets, seed=seed)
    from keras_albert.data.bucketed_arrays import BucketedArrayBatches

    return BucketedArrayBatches(preprocessor, x, y, batch_size=batch_size, buckets=buckets, seed=seed)


def batches_per_epoch(batches):
    """How many batches one epoch of `bucketed_batches(...)` holds, on any
    backend (a tf.data pipeline knows its count; a PyDataset its length)."""
    if isinstance(batches, keras.utils.PyDataset):
        return len(batches)
    return int(batches.cardinality())


def bucketed_dataset(
    preprocessor,
    x,
    y=None,
    sample_weight=None,
    batch_size=32,
    buckets=DEFAULT_BUCKETS,
    shuffle=True,
    seed=None,
    drop_remainder=False,
):
    """A `tf.data.Dataset` of `(features, y[, sample_weight])` batches, each
    padded to the smallest bucket that holds its longest example.

    Args:
        preprocessor: the task's preprocessor (text classifier, multiple
            choice or token classifier); its `sequence_length` is the
            largest padded length.
        x: texts, a `(texts, second_texts)` pair, or a multiple-choice dict.
        y: labels, one per example (or None).
        sample_weight: per-example weights (or None).
        batch_size: examples per batch.
        buckets: padded lengths below the preprocessor's length to use.
        shuffle: reshuffle every epoch (training); False keeps the order
            within each bucket.
        seed: shuffle seed.
        drop_remainder: drop each bucket's partial batch (fixed batch size,
            e.g. for TPUs).

    Example:
    >>> ds = bucketed_dataset(classifier.preprocessor, texts, labels)  # doctest: +SKIP
    >>> classifier.fit(ds, epochs=3)  # doctest: +SKIP
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive int. Received: {batch_size!r}")
    buckets = check_buckets(buckets) or ()
    shapes = bucket_lengths(preprocessor.sequence_length, buckets)
    slices = _as_slices(x)
    word_lists = isinstance(slices, tf.RaggedTensor)
    count = _count(slices)
    targets = [_as_targets(t, word_lists) for t in (y, sample_weight) if t is not None]
    if word_lists and sample_weight is not None:
        raise ValueError("Word lists get their weights from the preprocessor (first pieces); pass no `sample_weight`.")
    if sample_weight is not None and y is None:
        raise ValueError("`sample_weight` needs `y`.")
    for name, values in zip(("y", "sample_weight"), targets):
        if _count(values) != count:
            raise ValueError(f"`{name}` has {len(values)} entries for {count} examples.")

    # Each example's bucket, known before training: sizes per bucket fix the
    # number of steps (tf.data cannot count grouped batches itself).
    pack = _packer(preprocessor, isinstance(slices, tuple), word_lists)
    batched = (lambda d: d.ragged_batch(_PACK_CHUNK)) if word_lists else (lambda d: d.batch(_PACK_CHUNK))
    lengths = np.concatenate([
        packed_lengths({"padding_mask": np.asarray(features["padding_mask"])})
        for (features,) in batched(tf.data.Dataset.from_tensor_slices((slices,))).map(
            pack, num_parallel_calls=tf.data.AUTOTUNE
        )
    ]) if count else np.zeros([0], int)
    bucket = np.searchsorted(shapes, np.minimum(lengths, shapes[-1])).astype("int64")
    per_bucket = np.bincount(bucket, minlength=len(shapes))
    steps = int((per_bucket // batch_size).sum() if drop_remainder else (-(-per_bucket // batch_size)).sum())

    dataset = tf.data.Dataset.from_tensor_slices((slices, bucket, *targets))
    if shuffle:
        dataset = dataset.shuffle(max(count, 1), seed=seed, reshuffle_each_iteration=True)

    def pack_with_bucket(inputs, bucket_index, *rest):
        features, *rest = pack(inputs, *rest)
        return features, bucket_index, *rest

    dataset = batched(dataset).map(pack_with_bucket, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
    shape_table = tf.constant(shapes, tf.int32)

    def batch_bucket(bucket_index, window):
        length = tf.gather(shape_table, bucket_index)

        def cut(features, _, *rest):
            features = {name: value[..., :length] for name, value in features.items()}
            # Per-piece labels and weights ([batch, sequence]) are cut too.
            rest = [value[:, :length] if value.shape.rank == 2 and word_lists else value for value in rest]
            return (features, *rest)

        return window.batch(batch_size, drop_remainder=drop_remainder).map(cut)

    dataset = dataset.group_by_window(
        key_func=lambda features, bucket_index, *rest: bucket_index,
        reduce_func=batch_bucket,
        window_size=batch_size,
    )
    return dataset.apply(tf.data.experimental.assert_cardinality(steps)).prefetch(tf.data.AUTOTUNE)
