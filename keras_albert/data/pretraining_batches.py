"""Pretraining batches from NumPy arrays, on every backend, resumable.

The TensorFlow-free counterpart of `pretraining_tfrecords.pretraining_dataset`
for `model.fit` on JAX or PyTorch: fixed-shape int32 batches
(`drop_remainder`, so XLA compiles one step), shuffled by an epoch's own
permutation of `seed`, so batch `i` of the stream is the same in every run
and a resumed run starts at the batch it stopped at (`skip_batches`).

A plain Python generator, written here rather than taken from grain or a
`keras.utils.PyDataset`: Keras restarts a `PyDataset` at its first batch
every epoch (a checkpoint interval here), which would replay data after each
checkpoint, and a generator needs no extra package on the GPU machine.
Gathering a batch of fixed-shape rows costs microseconds to milliseconds,
and a background thread keeps `prefetch` batches ready while the step runs.
With `dynamic_masking`, batch `i` is masked afresh from a generator seeded
by `(seed, i)`: new masks every epoch, the same ones in a resumed run.
"""

import copy as _copy
import queue
import threading

import numpy as np

from keras_albert.data.seeded_batches import SeededBatches
from keras_albert.models.albert_pretrainer import check_sentence_task
from keras_albert.models.albert_pretrainer import pretraining_batch
from keras_albert.utils.validation import check_positive_int

# Tags the masking generators' seeds ("mask"), apart from the epochs' orders.
_MASKING_STREAM = 0x6D61736B


def numpy_pretraining_batch(features, sentence_task="sop"):
    """`pretraining_batch` on NumPy features, staying in NumPy."""
    return pretraining_batch(features, sentence_task, ones_like=np.ones_like)


class PretrainingBatches(SeededBatches):
    """The batch stream over `arrays` (from `read_pretraining_arrays`).

    Args:
        arrays: dict of feature arrays, one row per instance.
        batch_size: int, rows per batch.
        seed: int, fixes every epoch's order.
        sentence_task: "sop", "nsp" or "none" (which labels to emit).
        is_training: bool; True shuffles and repeats without end, False
            makes one pass in order (the last batch may be short).
        skip_batches: int >= 0, batches of the stream to leave out.
        dynamic_masking: a `DynamicMasking`, or None to keep the stored
            masks.

    Example:
    >>> arrays = {"input_ids": np.zeros((10, 8), "int32")}  # doctest: +SKIP
    >>> batches = PretrainingBatches(arrays, 4, seed=1)  # doctest: +SKIP
    >>> model.fit(batches.generator(), steps_per_epoch=100)  # doctest: +SKIP
    """

    def __init__(self, arrays, batch_size, seed=0, sentence_task="sop",
                 is_training=True, skip_batches=0, dynamic_masking=None):
        check_positive_int("batch_size", batch_size)
        check_sentence_task(sentence_task)
        super().__init__(len(arrays["input_ids"]), batch_size, seed, is_training, skip_batches,
                         rows_name="instances")
        self.arrays = arrays
        self.sentence_task = sentence_task
        if dynamic_masking is not None and not callable(dynamic_masking):
            raise ValueError(
                "`dynamic_masking` must be a DynamicMasking or None. Received: "
                f"dynamic_masking={dynamic_masking!r}"
            )
        self.dynamic_masking = dynamic_masking
        self.additions = ()

    def batch(self, index):
        """Batch `index` of the stream as `(x, y, sample_weight)`."""
        rows = self.rows(index)
        features = {name: values[rows] for name, values in self.arrays.items()}
        if self.dynamic_masking is not None:
            features = self.dynamic_masking(features, self.masking_rng(index))
        batch = numpy_pretraining_batch(features, self.sentence_task)
        for add in self.additions:
            batch = add(index, batch)
        return batch

    def with_addition(self, add):
        """A copy whose batch `i` also goes through `add(i, batch)` (e.g. a
        second input stream such as `TeacherBatches.add`)."""
        copy = _copy.copy(self)
        copy.additions = (*self.additions, add)
        return copy

    def masking_rng(self, index):
        """The generator batch `index` draws its masks from: a function of
        `(seed, index)` only, apart from the stream that orders epochs."""
        return np.random.default_rng(
            np.random.SeedSequence(self.seed, spawn_key=(_MASKING_STREAM, index))
        )

    def generator(self, prefetch=4):
        """The stream as a generator (what `fit` takes), `prefetch` batches
        made ahead in a background thread."""
        check_positive_int("prefetch", prefetch)
        return _prefetched(iter(self), prefetch)


def _prefetched(iterator, depth):
    ready = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def fill():
        try:
            for item in iterator:
                while not stop.is_set():
                    try:
                        ready.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            ready.put(done)
        except BaseException as error:  # handed to the consumer
            ready.put(error)

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
