"""Run texts padded to their length bucket, not to the longest.

Real texts are mostly far shorter than the padded length: a 12-piece gloss
padded to 128 spends ~90 % of the encoder's work on padding. Examples are
packed once at the full length; each runs at the smallest bucket that holds
it (batches are formed within a bucket) and the outputs are put back in the
original order. Slicing off positions that are padding in every row of a
batch is exact (padding is masked out of attention, positions keep their
embeddings), so results equal the unbucketed ones up to float rounding.

The padded shapes form a bounded set, so XLA and TPUs compile a bounded
number of programs: full batches take one of the bucket lengths, and each
bucket's partial batch is padded with repeated rows to a power of two, so
at most `max_padded_shapes(...)` shapes appear however many calls with
however many examples are made.
"""

import contextlib
import dataclasses
import numbers

import keras
import numpy as np

from keras_albert.models.preprocessor_inputs import is_text
from keras_albert.utils.backend import require_tensorflow

DEFAULT_BUCKETS = (16, 32, 64, 128, 256, 512)
# Examples packed and planned together (in batches): bucketing within a
# chunk loses little, and memory stays bounded for long inputs.
CHUNK_BATCHES = 64


def check_buckets(buckets):
    """Validates a bucket list: positive ints (or None for "no buckets")."""
    if buckets is None:
        return None
    values = list(buckets)
    if not values or any(isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 2 for b in values):
        raise ValueError(
            "`length_buckets` must be None or a non-empty list of ints >= 2 "
            f"(padded lengths). Received: {buckets!r}"
        )
    return tuple(sorted(set(int(b) for b in values)))


def bucket_lengths(sequence_length, buckets=DEFAULT_BUCKETS):
    """The padded lengths used: buckets below `sequence_length`, and it."""
    return sorted({b for b in buckets if b < sequence_length} | {sequence_length})


def max_padded_shapes(sequence_length, batch_size, buckets=DEFAULT_BUCKETS):
    """Bound on the distinct [batch, length] shapes bucketed runs produce."""
    row_counts = 1 + int(np.ceil(np.log2(batch_size))) if batch_size > 1 else 1
    return len(bucket_lengths(sequence_length, buckets)) * row_counts


def packed_lengths(features):
    """Real length of each packed example (the longest choice for
    [batch, choices, sequence] inputs): padding is a suffix of every row."""
    lengths = np.asarray(features["padding_mask"]).astype(bool).sum(-1)
    while lengths.ndim > 1:
        lengths = lengths.max(-1)
    return lengths


@dataclasses.dataclass
class Batch:
    rows: np.ndarray  # example indices; a padded batch repeats its first row
    length: int  # padded length of the batch


def plan_batches(lengths, batch_size, shapes, pad_rows=True):
    """Batches of examples of one bucket each, with their padded length.

    Every example runs at the smallest of `shapes` that holds it (one long
    text no longer drags a whole batch of short ones to its length).
    Within a bucket examples keep their order; longest bucket first. With
    `pad_rows`, each bucket's last (partial) batch is filled up to a power
    of two with repeats of its first row, which bounds the row counts XLA
    sees.
    """
    lengths = np.asarray(lengths)
    shapes = np.asarray(shapes)
    bucket = np.searchsorted(shapes, np.minimum(lengths, shapes[-1]))
    batches = []
    for index in range(len(shapes) - 1, -1, -1):
        members = np.flatnonzero(bucket == index)
        for start in range(0, len(members), batch_size):
            rows = members[start : start + batch_size]
            if pad_rows and len(rows) < batch_size:
                size = min(batch_size, 1 << (len(rows) - 1).bit_length())
                rows = np.concatenate([rows, np.repeat(rows[:1], size - len(rows))])
            batches.append(Batch(rows, int(shapes[index])))
    return batches


def _sliced(features, rows, length):
    # The sequence is the last axis of every input (also [b, choices, seq]).
    return {name: value[rows][..., :length] for name, value in features.items()}


def _run_plan(task, features, plan, per_position_fill):
    """Outputs of `task` on `features` (numpy, full length) batch by batch."""
    total = len(next(iter(features.values())))
    full_length = next(iter(features.values())).shape[-1]
    results = None
    for batch in plan:
        # keras.Model's own predict_on_batch: the features are packed already,
        # so keras-hub's preprocessing must not run again.
        outputs = keras.Model.predict_on_batch(task, _sliced(features, batch.rows, batch.length))
        leaves = keras.tree.flatten(outputs)
        if results is None:
            results = []
            for leaf in leaves:
                shape = list(leaf.shape[1:])
                if per_position_fill is not None:
                    shape[0] = full_length
                results.append(np.full([total] + shape, per_position_fill or 0, leaf.dtype))
        for result, leaf in zip(results, leaves):
            # Repeated rows write the same values twice: harmless.
            if per_position_fill is None:
                result[batch.rows] = leaf
            else:
                result[batch.rows, : leaf.shape[1]] = leaf
    return keras.tree.pack_sequence_as(outputs, results)


def predict_packed(task, features, batch_size=32, buckets=DEFAULT_BUCKETS, per_position_fill=None):
    """Bucketed outputs of `task` on packed features, in their order.

    `features` holds numpy `token_ids`, `segment_ids`, `padding_mask`
    padded to one length. Pooled outputs equal the unbucketed ones; for
    per-position outputs ([batch, sequence, ...]) pass `per_position_fill`:
    positions past a batch's bucket (padding in the unbucketed run too) get
    that value, all others equal the unbucketed outputs.
    """
    features = {name: np.asarray(value) for name, value in features.items()}
    full_length = next(iter(features.values())).shape[-1]
    shapes = bucket_lengths(full_length, buckets)
    plan = plan_batches(packed_lengths(features), batch_size, shapes)
    return _run_plan(task, features, plan, per_position_fill)


def _count(x):
    if isinstance(x, tuple):
        return len(x[0])
    if isinstance(x, dict):
        return len(x["context"])
    return len(x)


def _chunk(x, start, stop):
    if isinstance(x, tuple):
        return tuple(list(part[start:stop]) for part in x)
    if isinstance(x, dict):
        return {name: np.asarray(value[start:stop]) if name == "choices" else list(value[start:stop])
                for name, value in x.items()}
    return list(x[start:stop])


def packed_chunks(task, x, chunk_size, y=None):
    """Yields (features as numpy at the full length, y chunk) per chunk of
    `x`. Packing runs eagerly: a tf.data map would be traced again on every
    call, which costs more than tokenizing a chunk."""
    for start in range(0, _count(x), chunk_size):
        packed = task.preprocess_samples(_chunk(x, start, start + chunk_size))
        features = keras.utils.unpack_x_y_sample_weight(packed)[0]
        features = {name: np.asarray(value) for name, value in features.items()}
        yield features, None if y is None else y[start : start + chunk_size]


def is_raw_input(task, x):
    """True for inputs the task's preprocessor packs: texts, text pairs, or
    a multiple-choice dict of strings."""
    if task.preprocessor is None:
        return False
    if isinstance(x, dict):
        return "context" in x and "choices" in x and is_text(list(x["context"]))
    if isinstance(x, tuple):
        if len(x) != 2 or not (is_text(x[0]) and is_text(x[1])):
            return False
        if len(x[0]) != len(x[1]):
            raise ValueError(
                f"Text pairs need as many second texts as first texts; got {len(x[0])} and {len(x[1])}."
            )
        return True
    return isinstance(x, (list, np.ndarray)) and is_text(x)


def bucketed_predict(task, x, batch_size=None, buckets=DEFAULT_BUCKETS):
    """`task.predict(x)` on raw inputs, run in length buckets."""
    batch_size = batch_size or 32
    chunk = batch_size * CHUNK_BATCHES
    parts = [predict_packed(task, features, batch_size, buckets) for features, _ in packed_chunks(task, x, chunk)]
    if len(parts) == 1:
        return parts[0]
    return keras.tree.map_structure(lambda *leaves: np.concatenate(leaves), *parts)


def bucketed_dataset_from_packed(features, y, sample_weight, batch_size, buckets=DEFAULT_BUCKETS):
    """A tf.data pipeline of (features, y, sample_weight) batches, each
    sliced to its bucket; no padded rows (losses and metrics stay exact).

    Each bucket's batches are full but the last, so each bucket is one
    `from_tensor_slices(...).batch(...)` block: no Python per step.
    """
    full_length = features["token_ids"].shape[-1]
    plan = plan_batches(packed_lengths(features), batch_size, bucket_lengths(full_length, buckets), pad_rows=False)
    blocks = []
    for length in dict.fromkeys(batch.length for batch in plan):
        rows = np.concatenate([batch.rows for batch in plan if batch.length == length])
        block = (_sliced(features, rows, length),)
        if y is not None:
            block += (keras.tree.map_structure(lambda v: np.asarray(v)[rows], y),)
        if sample_weight is not None:
            block += (np.asarray(sample_weight)[rows],)
        blocks.append(block)
    if keras.config.backend() != "tensorflow":
        return _NumpyBatches(blocks, batch_size)
    tf = require_tensorflow("Length-bucketed evaluation")
    dataset = None
    for block in blocks:
        part = tf.data.Dataset.from_tensor_slices(block).batch(batch_size)
        dataset = part if dataset is None else dataset.concatenate(part)
    return dataset.prefetch(tf.data.AUTOTUNE)


class _NumpyBatches(keras.utils.PyDataset):
    """The same batches as NumPy for the JAX and PyTorch backends."""

    def __init__(self, blocks, batch_size):
        super().__init__()
        self._batches = []
        for block in blocks:
            count = len(block[0]["token_ids"])
            for start in range(0, count, batch_size):
                self._batches.append(
                    keras.tree.map_structure(lambda v: v[start:start + batch_size], block)
                )

    def __len__(self):
        return len(self._batches)

    def __getitem__(self, index):
        return self._batches[index]


def bucketed_evaluate(task, x, y=None, sample_weight=None, batch_size=None, buckets=DEFAULT_BUCKETS, **kwargs):
    """`task.evaluate(x, y)` on raw inputs, run in length buckets."""
    batch_size = batch_size or 32
    chunks = list(packed_chunks(task, x, batch_size * CHUNK_BATCHES))
    features = {name: np.concatenate([c[0][name] for c in chunks]) for name in chunks[0][0]}
    dataset = bucketed_dataset_from_packed(features, y, sample_weight, batch_size, buckets)
    # keras.Model's own evaluate: the features are packed already.
    return keras.Model.evaluate(task, dataset, **kwargs)


class PackedInputsMixin:
    """Lets packed features (a dict with `token_ids`) through a task's
    preprocessing, so pipelines packed ahead (`keras_albert.data.
    bucketed_batches`) feed `fit`/`evaluate`/`predict` directly.

    A `keras.utils.PyDataset` (what `bucketed_batches` gives on JAX and
    PyTorch) goes to Keras's own methods: keras-hub's take tf.data and grain
    datasets only, and its batches are packed already.
    """

    def preprocess_samples(self, x, y=None, sample_weight=None):
        if isinstance(x, dict) and "token_ids" in x:
            return keras.utils.pack_x_y_sample_weight(x, y, sample_weight)
        return super().preprocess_samples(x, y, sample_weight)

    def fit(self, x=None, *args, **kwargs):
        if isinstance(x, keras.utils.PyDataset):
            check_packed_batches(x)
            return keras.Model.fit(self, x, *args, **kwargs)
        return super().fit(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        if isinstance(x, keras.utils.PyDataset):
            check_packed_batches(x)
            return keras.Model.evaluate(self, x, *args, **kwargs)
        return super().evaluate(x, *args, **kwargs)

    def predict(self, x=None, *args, **kwargs):
        if isinstance(x, keras.utils.PyDataset):
            check_packed_batches(x)
            return keras.Model.predict(self, x, *args, **kwargs)
        return super().predict(x, *args, **kwargs)


def check_packed_batches(batches):
    """Refuses a PyDataset whose first batch is not packed features."""
    first = batches[0]
    features = first[0] if isinstance(first, tuple) else first
    if not (isinstance(features, dict) and "token_ids" in features):
        raise ValueError(
            f"`x` is a {type(batches).__name__} (a keras.utils.PyDataset), so its batches must hold packed "
            "features (a dict with 'token_ids', 'segment_ids', 'padding_mask'), as "
            "`keras_albert.data.bucketed_batches` makes them; its first batch holds "
            f"{type(features).__name__}. Pack each batch with the task's preprocessor in `__getitem__`, "
            "or pass the texts themselves."
        )


def _check_batch_size(batch_size):
    # 0 once ran as if unset and -2 failed deep inside Keras; NumPy ints pass.
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1
    ):
        raise ValueError(f"`batch_size` must be a positive integer. Received: batch_size={batch_size!r}")


def _label_array(y):
    # These tasks have one output, so a Python list of labels (one per
    # example, or one row per example) is one array, not a structure.
    if isinstance(y, (list, tuple)):
        return np.asarray(y)
    return keras.tree.map_structure(np.asarray, y)


class LengthBucketedMixin(PackedInputsMixin):
    """`predict` and `evaluate` on raw inputs run in length buckets.

    Set `task.length_buckets = None` to pad everything to the full length;
    inputs that are already packed (token ids) are passed on unchanged.
    """

    length_buckets = DEFAULT_BUCKETS

    def _buckets_apply(self, x, kwargs):
        return bool(self.length_buckets) and kwargs.get("steps") is None and is_raw_input(self, x)

    def predict(self, x=None, batch_size=None, **kwargs):
        """Keras `predict`; raw inputs run in length buckets (same outputs)."""
        _check_batch_size(batch_size)
        if self._buckets_apply(x, kwargs) and kwargs.get("callbacks") is None:
            return bucketed_predict(self, x, batch_size, check_buckets(self.length_buckets))
        return super().predict(x, batch_size=batch_size, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None, **kwargs):
        """Keras `evaluate`; raw inputs run in length buckets (same loss and
        metrics: no padded rows are added)."""
        _check_batch_size(batch_size)
        if self._buckets_apply(x, kwargs) and not kwargs.get("_use_cached_eval_dataset"):
            y = None if y is None else _label_array(y)
            return bucketed_evaluate(
                self, x, y, sample_weight, batch_size, check_buckets(self.length_buckets), **kwargs
            )
        return super().evaluate(x=x, y=y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)


@contextlib.contextmanager
def unbucketed(task):
    """Temporarily pads everything to the full length (for references)."""
    saved = getattr(task, "length_buckets", None)
    task.length_buckets = None
    try:
        yield task
    finally:
        task.length_buckets = saved
