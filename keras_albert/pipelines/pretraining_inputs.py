"""Where `run_pretraining` keeps its instances and how it feeds them, per backend.

On TensorFlow: TFRecords (Google's format) read by tf.data under a
tf.distribute strategy, as before. On JAX and PyTorch: one NumPy file per
split (`data/train.npz`, `data/eval.npz`) read by
`PretrainingBatches`, no TensorFlow anywhere; the features and the seeded,
resumable batch order are the same idea, the files are not interchangeable.
Dynamic masking and teacher embeddings run on both (`mask_ngrams_tf` and
tf.data zips on TensorFlow; `DynamicMasking` and `TeacherBatches` in NumPy:
the same statistics and texts, not the same draws or order).
"""

import os
import pathlib

import keras

from keras_albert.data.dynamic_masking import DynamicMasking
from keras_albert.data.pretraining_arrays import read_pretraining_arrays
from keras_albert.data.pretraining_arrays import write_pretraining_arrays
from keras_albert.data.pretraining_batches import PretrainingBatches
from keras_albert.training.scope import check_strategy_for_backend
from keras_albert.training.scope import resolve_training
from keras_albert.utils.backend import require_tensorflow


def uses_tfrecords():
    return keras.config.backend() == "tensorflow"


def train_paths(settings, data_dir):
    if uses_tfrecords():
        return [
            str(data_dir / f"train-{i:05d}-of-{settings.num_shards:05d}.tfrecord")
            for i in range(settings.num_shards)
        ]
    return [str(data_dir / "train.npz")]


def eval_path(data_dir):
    return str(data_dir / ("eval.tfrecord" if uses_tfrecords() else "eval.npz"))


def remove_partial_files(data_dir):
    """Files a killed run was writing (renamed only when complete)."""
    for pattern in ("*.tfrecord.tmp-*", ".*.npz.partial.*"):
        for stale in pathlib.Path(data_dir).glob(pattern):
            stale.unlink(missing_ok=True)


def write_instances(instances, paths):
    if uses_tfrecords():
        from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords

        return write_pretraining_tfrecords(instances, paths)
    (path,) = paths if isinstance(paths, list) else [paths]
    # The instance files stay in the run directory: written fast, not small
    # (what travels is the tokenized corpus, `data/tokenized_corpus.py`).
    return write_pretraining_arrays(instances, path, compress=False)


def check_backend_settings(settings):
    """Refuses, before any work, what only the TensorFlow path does."""
    if uses_tfrecords():
        return
    check_strategy_for_backend(settings.strategy)


def training_scope(settings):
    """`(scope, replicas, strategy, description)`: a tf.distribute strategy
    on TensorFlow; on JAX and PyTorch no strategy (one device, or the
    global `keras.distribution`, which Keras applies inside the step)."""
    scope, strategy = resolve_training(settings.strategy, tpu=settings.tpu)
    if strategy is None:
        return scope, 1, None, f"{keras.config.backend()} backend"
    return scope, strategy.num_replicas_in_sync, strategy, type(strategy).__name__


def xla_allowed(strategy):
    if strategy is None:
        return True
    from keras_albert.training.strategy import xla_supported

    return xla_supported(strategy)


def train_stream(settings, files, replicas, sentence_batch, with_teacher, vocabulary_size):
    """`skip_batches -> stream` for `resumable_fit`; dynamic masking draws
    random replacements from `[0, vocabulary_size)`, the model's ids."""
    if settings.batch_size % replicas:
        raise ValueError(
            f"`batch_size={settings.batch_size}` must be a multiple of the "
            f"{replicas} replicas of the strategy."
        )
    if not uses_tfrecords():
        arrays = read_pretraining_arrays(files)

        masking = None
        if settings.dynamic_masking:
            masking = DynamicMasking(vocabulary_size, settings.masked_lm_prob)

        def make_arrays(skip_batches):
            batches = PretrainingBatches(
                arrays, settings.batch_size, seed=settings.seed,
                sentence_task=settings.sentence_task, skip_batches=skip_batches,
                dynamic_masking=masking,
            )
            return with_teacher(batches, skip_batches).generator()

        return make_arrays
    from keras_albert.data.pretraining_tfrecords import pretraining_dataset

    def make(skip_batches):
        dataset = pretraining_dataset(
            files,
            settings.batch_size,
            seed=settings.seed,
            dynamic_masking=settings.dynamic_masking,
            vocabulary_size=vocabulary_size,
            masked_lm_prob=settings.masked_lm_prob,
            skip_batches=skip_batches,
            shuffle_buffer_size=settings.shuffle_buffer_size,
        )
        dataset = dataset.map(sentence_batch)
        return with_teacher(dataset, skip_batches)

    return make


def heldout_stream(settings, path, batch_size, sentence_batch):
    """One ordered pass over the held-out instances (re-readable: `fit`
    evaluates it after every checkpoint interval)."""
    if not uses_tfrecords():
        return _HeldOutBatches(PretrainingBatches(
            read_pretraining_arrays(path), batch_size, sentence_task=settings.sentence_task,
            is_training=False,
        ))
    from keras_albert.data.pretraining_tfrecords import pretraining_dataset

    return pretraining_dataset(path, batch_size, is_training=False).map(sentence_batch)


class _HeldOutBatches(keras.utils.PyDataset):
    # A PyDataset starts over on every pass, which validation wants.
    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def with_addition(self, add):
        return _HeldOutBatches(self.batches.with_addition(add))

    def __len__(self):
        return self.batches.batches_per_epoch

    def __getitem__(self, index):
        return self.batches.batch(index)


def tensorboard_callbacks(log_dir):
    """Keras's TensorBoard callback writes with TensorFlow's summaries."""
    try:
        require_tensorflow("TensorBoard logs", backend_too=False)
    except ImportError:
        return []
    return [keras.callbacks.TensorBoard(os.fspath(log_dir), update_freq=100)]
