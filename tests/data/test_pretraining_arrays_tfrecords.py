"""NumPy pretraining shards hold what the TFRecords hold.

TensorFlow only (TFRecords and tf.data are TensorFlow's), on any Keras
backend; skipped where TensorFlow is not installed:
    python -m pytest tests/data/test_pretraining_arrays_tfrecords.py
"""

import numpy as np
import pytest

pytest.importorskip("tensorflow", reason="TFRecords are TensorFlow's")

from keras_albert.data.pretraining_arrays import read_pretraining_arrays  # noqa: E402
from keras_albert.data.pretraining_arrays import write_pretraining_arrays  # noqa: E402
from keras_albert.data.pretraining_instances import create_pretraining_instances  # noqa: E402
from keras_albert.data.pretraining_tfrecords import pretraining_dataset  # noqa: E402
from keras_albert.data.pretraining_tfrecords import write_pretraining_tfrecords  # noqa: E402
from keras_albert.data.sentencepiece_training import train_sentencepiece  # noqa: E402
from tests.conftest import synthetic_sentences  # noqa: E402


def test_arrays_hold_what_the_tfrecords_hold(tmp_path):
    sentences = synthetic_sentences(600)
    documents = [sentences[i:i + 8] for i in range(0, len(sentences), 8)]
    proto = train_sentencepiece(sentences, 60)
    instances = list(create_pretraining_instances(
        documents, proto, max_seq_length=24, max_predictions_per_seq=4, seed=3
    ))
    count = write_pretraining_arrays(instances, tmp_path / "train.npz")
    write_pretraining_tfrecords(instances, str(tmp_path / "train.tfrecord"))
    arrays = read_pretraining_arrays(tmp_path / "train.npz")
    assert count == len(instances) == len(arrays["input_ids"])
    records = next(iter(pretraining_dataset(str(tmp_path / "train.tfrecord"), count, is_training=False)))
    for name, values in arrays.items():
        np.testing.assert_array_equal(values, records[name].numpy(), err_msg=name)
        assert values.dtype == records[name].dtype.as_numpy_dtype
