"""The row order both NumPy pretraining streams share (masked-LM instances,
causal-LM windows): a seeded permutation per epoch, so batch `i` depends on
`(seed, i)` alone and a run resumed with `skip_batches` sees the
uninterrupted run's batches."""

import copy as _copy

import numpy as np

from keras_albert.utils.validation import check_positive_int


class SeededBatches:
    """Batches of `batch_size` rows out of `count`; subclasses make `batch(index)`.

    Training (`is_training=True`) draws a seeded permutation per epoch,
    full batches only, without end; otherwise one pass in order (the last
    batch may be short). `rows_name` and `hint` word the error when
    `count` is below one batch.
    """

    def __init__(self, count, batch_size, seed=0, is_training=True, skip_batches=0,
                 rows_name="rows", hint=""):
        check_positive_int("batch_size", batch_size)
        if isinstance(skip_batches, bool) or not isinstance(skip_batches, int) or skip_batches < 0:
            raise ValueError(f"`skip_batches` must be an int >= 0. Received: skip_batches={skip_batches!r}")
        if is_training and count < batch_size:
            raise ValueError(
                f"`batch_size={batch_size}` is larger than the {count} {rows_name}: "
                f"no full batch can be made{hint}."
            )
        self.count = count
        self.batch_size = batch_size
        self.seed = seed
        self.is_training = is_training
        self.skip_batches = skip_batches

    @property
    def batches_per_epoch(self):
        if self.is_training:
            return self.count // self.batch_size
        return -(-self.count // self.batch_size)

    def order(self, epoch):
        """Row order of `epoch` (the same in every run)."""
        if not self.is_training:
            return np.arange(self.count)
        return np.random.default_rng([self.seed, epoch]).permutation(self.count)

    def rows(self, index):
        """The rows of batch `index` of the stream."""
        epoch, position = divmod(index, self.batches_per_epoch)
        if getattr(self, "_order_epoch", None) != epoch:
            self._order, self._order_epoch = self.order(epoch), epoch
        return self._order[position * self.batch_size:(position + 1) * self.batch_size]

    def skipping(self, skip_batches):
        """A copy that starts `skip_batches` batches into the stream."""
        copy = _copy.copy(self)
        copy.skip_batches = skip_batches
        return copy

    def __iter__(self):
        index = self.skip_batches
        while self.is_training or index < self.batches_per_epoch:
            yield self.batch(index)
            index += 1
