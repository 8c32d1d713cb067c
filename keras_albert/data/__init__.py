"""Data preparation: vocabularies, pretraining instances, task readers.

Names are imported on first use: the TFRecord and tf.data readers import
TensorFlow, while the vocabularies, instances and NumPy pretraining arrays
need only NumPy and SentencePiece (every backend).
"""

from keras_albert.utils.lazy_exports import lazy_exports

_EXPORTS = {
    "bucketed_batches": "length_bucketed_batches",
    "bucketed_dataset": "length_bucketed_batches",
    "batches_per_epoch": "length_bucketed_batches",
    "BucketedArrayBatches": "bucketed_arrays",
    "read_documents": "documents",
    "create_pretraining_instances": "pretraining_instances",
    "pretraining_dataset": "pretraining_tfrecords",
    "write_pretraining_tfrecords": "pretraining_tfrecords",
    "write_pretraining_arrays": "pretraining_arrays",
    "read_pretraining_arrays": "pretraining_arrays",
    "PretrainingBatches": "pretraining_batches",
    "train_sentencepiece": "sentencepiece_training",
}
__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
