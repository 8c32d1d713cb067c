"""Masked-LM batches for distillation, tokenized with the teacher's vocabulary."""

import os

from keras_albert.data.documents import read_documents
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.pretraining_tfrecords import pretraining_dataset
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords
from keras_albert.models.albert_pretrainer import pretraining_batch


def write_distillation_records(corpus, proto, path, max_seq_length=128,
                               max_predictions_per_seq=20, dupe_factor=5, seed=12345):
    """Writes masked-LM instances of `corpus` (text files, Google's format:
    one sentence a line, blank lines between documents) to the TFRecord
    `path`, unless it exists. Returns the number written (None if reused)."""
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
    return write_pretraining_tfrecords(instances, path)


def distillation_dataset(path, batch_size, seed=0, shuffle_buffer_size=50000):
    """Shuffled, repeating `(x, {"mlm": ids}, {"mlm": weights})` batches
    for `Distiller.fit` (the sentence-order labels are dropped)."""
    dataset = pretraining_dataset(
        path, batch_size, seed=seed, shuffle_buffer_size=shuffle_buffer_size
    )
    return dataset.map(lambda features: pretraining_batch(features, "none"))
