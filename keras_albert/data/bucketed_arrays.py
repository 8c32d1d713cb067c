"""Fine-tuning batches padded to their length bucket, in NumPy: the JAX and
PyTorch counterpart of `length_bucketed_batches.bucketed_dataset` (tf.data).

The texts are packed once by the preprocessor (keras-hub's Python path, no
TensorFlow), each example goes to the smallest bucket that holds it, and
every epoch draws a new seeded order: rows shuffled within their bucket,
cut into batches, the batches shuffled. The number of batches per epoch is
fixed (the examples per bucket do not change), so XLA compiles at most two
programs per bucket, as with the tf.data pipeline. Every fine-tuning
preprocessor that packs raw inputs: texts and text pairs, multiple-choice
dicts ([batch, choices, sequence] features, cut on the last axis) and word
lists, whose per-piece labels and first-piece weights come from the
preprocessor and are cut with the features.
"""

import keras
import numpy as np

from keras_albert.models.length_buckets import DEFAULT_BUCKETS
from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import check_buckets
from keras_albert.models.length_buckets import packed_lengths
from keras_albert.models.preprocessor_inputs import is_text
from keras_albert.utils.validation import check_positive_int


def _count(x):
    if isinstance(x, dict):
        return len(x["context"])
    return len(x[0]) if isinstance(x, tuple) and not is_word_lists(x) else len(x)


def is_word_lists(x):
    """Token classification's input: a list of word lists (a tuple of two
    text lists is a batch of text pairs)."""
    if not isinstance(x, (list, tuple)) or not x or not all(isinstance(row, (list, tuple)) for row in x):
        return False
    return not (isinstance(x, tuple) and len(x) == 2 and is_text(list(x[0])) and is_text(list(x[1])))


def _pack(preprocessor, x, y, sample_weight):
    """(features, targets): NumPy arrays; per-piece targets for word lists."""
    if is_word_lists(x):
        if sample_weight is not None:
            raise ValueError("Word lists get their weights from the preprocessor (first pieces); pass no `sample_weight`.")
        if y is None:
            return preprocessor([list(words) for words in x]), []
        features, labels, weights = preprocessor([list(words) for words in x], [list(row) for row in y])
        return features, [np.asarray(labels), np.asarray(weights)]
    packed = preprocessor(x=tuple(x) if isinstance(x, tuple) else x)
    return packed, [np.asarray(t) for t in (y, sample_weight) if t is not None]


class BucketedArrayBatches(keras.utils.PyDataset):
    """`(features, y[, sample_weight])` batches, each cut to its bucket.

    Args:
        preprocessor: the task's preprocessor (text classifier, multiple
            choice or token classifier; its `sequence_length` is the
            largest padded length).
        x: texts, a `(texts, second_texts)` pair of lists, a
            multiple-choice dict or a list of word lists.
        y: labels, one per example (one per word for word lists), or None.
        sample_weight: per-example weights (or None; not for word lists).
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
        if y is not None and len(y) != _count(x):
            raise ValueError(f"`y` has {len(y)} entries for {_count(x)} examples.")
        packed, self.targets = _pack(preprocessor, x, y, sample_weight)
        self.features = {name: keras.ops.convert_to_numpy(value) for name, value in packed.items()}
        count = len(self.features["token_ids"])
        for name, values in zip(("y", "sample_weight"), self.targets):
            if len(values) != count:
                raise ValueError(f"`{name}` has {len(values)} entries for {count} examples.")
        # Word lists' labels and weights are per piece: cut like the features.
        self.per_position_targets = is_word_lists(x)
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
        # The sequence is the last axis (also of [batch, choices, sequence]).
        features = {name: value[rows][..., :length] for name, value in self.features.items()}
        targets = (target[rows, :length] if self.per_position_targets else target[rows] for target in self.targets)
        return (features, *targets)

    def on_epoch_end(self):
        self.epoch += 1
        self._plan()
