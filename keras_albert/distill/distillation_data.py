"""Masked-LM batches for distillation, tokenized with the teacher's vocabulary.

Two record formats, chosen by the path's suffix as `run_pretraining` chooses
by backend: TFRecords read by tf.data (`.tfrecord`, TensorFlow's), or one
NumPy file (`.npz`) read by `PretrainingBatches` on any backend without
TensorFlow.
"""

import os

from keras_albert.data.documents import read_documents
from keras_albert.data.pretraining_arrays import read_pretraining_arrays
from keras_albert.data.pretraining_arrays import write_pretraining_arrays
from keras_albert.data.pretraining_batches import PretrainingBatches
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.models.albert_pretrainer import pretraining_batch


def _is_arrays(path):
    return os.fspath(path).endswith(".npz")


def write_distillation_records(corpus, proto, path, max_seq_length=128,
                               max_predictions_per_seq=20, dupe_factor=5, seed=12345):
    """Writes masked-LM instances of `corpus` (text files, Google's format:
    one sentence a line, blank lines between documents) to `path` (a
    TFRecord, or NumPy arrays for a `.npz` path), unless it exists. Returns
    the number written (None if reused)."""
    if os.path.exists(path):
        return None
    instances = create_pretraining_instances(
        read_documents(corpus),
        proto,
        max_seq_length=max_seq_length,
        max_predictions_per_seq=max_predictions_per_seq,
        dupe_factor=dupe_factor,
        seed=seed,
    )
    if _is_arrays(path):
        # Stays in the run directory: written fast rather than small.
        return write_pretraining_arrays(instances, path, compress=False)
    from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords

    return write_pretraining_tfrecords(instances, path)


def distillation_dataset(path, batch_size, seed=0, shuffle_buffer_size=50000):
    """Shuffled, repeating `(x, {"mlm": ids}, {"mlm": weights})` batches
    for `Distiller.fit` (the sentence-order labels are dropped): a tf.data
    pipeline for a TFRecord, a NumPy generator for a `.npz` file (which
    shuffles all of its instances each epoch, so `shuffle_buffer_size` is
    not used)."""
    if _is_arrays(path):
        arrays = read_pretraining_arrays(path)
        return PretrainingBatches(arrays, batch_size, seed=seed, sentence_task="none").generator()
    from keras_albert.data.pretraining_tfrecords import pretraining_dataset

    dataset = pretraining_dataset(
        path, batch_size, seed=seed, shuffle_buffer_size=shuffle_buffer_size
    )
    return dataset.map(lambda features: pretraining_batch(features, "none"))
