"""Fine-tuning batches padded to their length bucket, in NumPy: the JAX and
PyTorch counterpart of `bucketed_batches.bucketed_dataset` (tf.data).

The texts are packed once by the preprocessor (keras-hub's Python path, no
TensorFlow), each example goes to the smallest bucket that holds it, and
every epoch draws a new seeded order: rows shuffled within their bucket,
cut into batches, the batches shuffled. The number of batches per epoch is
fixed (the examples per bucket do not change), so XLA compiles at most two
programs per bucket, as with the tf.data pipeline. Text classification
(single texts and pairs) only: the multiple-choice and token-classification
preprocessors pack with TensorFlow string ops.
"""

import keras
import numpy as np

from keras_albert.models.length_buckets import DEFAULT_BUCKETS
from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import packed_lengths
from keras_albert.utils.validation import check_positive_int


class BucketedArrayBatches(keras.utils.PyDataset):
    """`(features, y[, sample_weight])` batches, each cut to its bucket.

    Args:
        preprocessor: a text classifier's preprocessor (its
            `sequence_length` is the largest padded length).
        x: texts, or a `(texts, second_texts)` pair of lists.
        y: labels, one per example (or None).
        sample_weight: per-example weights (or None).
        batch_size, buckets, shuffle, seed: as in `bucketed_dataset`.
    """

    def __init__(self, preprocessor, x, y=None, sample_weight=None, batch_size=32,
                 buckets=DEFAULT_BUCKETS, shuffle=True, seed=None):
        super().__init__()
        check_positive_int("batch_size", batch_size)
        if sample_weight is not None and y is None:
            raise ValueError("`sample_weight` needs `y`.")
        buckets = check_buckets(buckets) or ()
        shapes = bucket_lengths(preprocessor.sequence_length, buckets)
        packed = preprocessor(x=tuple(x) if isinstance(x, tuple) else x)
        self.features = {name: np.asarray(value) for name, value in packed.items()}
        count = len(self.features["token_ids"])
        self.targets = [np.asarray(t) for t in (y, sample_weight) if t is not None]
        for name, values in zip(("y", "sample_weight"), self.targets):
            if len(values) != count:
                raise ValueError(f"`{name}` has {len(values)} entries for {count} examples.")
        lengths = packed_lengths({"padding_mask": self.features["padding_mask"]})
        self.bucket = np.searchsorted(shapes, np.minimum(lengths, shapes[-1]))
        self.shapes = shapes
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = 0 if seed is None else seed
        self.epoch = 0
        self._plan()

    def _plan(self):
        """This epoch's batches: (rows, padded length) pairs."""
        rng = np.random.default_rng([self.seed, self.epoch])
        batches = []
        for index, length in enumerate(self.shapes):
            rows = np.flatnonzero(self.bucket == index)
            if self.shuffle:
                rows = rng.permutation(rows)
            batches += [(rows[i:i + self.batch_size], length) for i in range(0, len(rows), self.batch_size)]
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        self.batches = batches

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        rows, length = self.batches[index]
        features = {name: value[rows, :length] for name, value in self.features.items()}
        return (features, *(target[rows] for target in self.targets))

    def on_epoch_end(self):
        self.epoch += 1
        self._plan()
