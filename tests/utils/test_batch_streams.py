"""What the task models let through unchecked as ready batches: datasets of
every pipeline Keras and keras-hub take (tf.data, PyDataset, grain).

Runs on every backend; the tf.data check only where TensorFlow is installed:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/utils/test_batch_streams.py
"""

import grain
import keras
import numpy as np
import pytest

from keras_albert.utils.backend import is_batch_stream


class _Batches(keras.utils.PyDataset):
    def __len__(self):
        return 1

    def __getitem__(self, index):
        return np.zeros((2, 3))


def test_tf_data_datasets_are_batch_streams():
    tf = pytest.importorskip("tensorflow", reason="tf.data is TensorFlow's")
    assert is_batch_stream(tf.data.Dataset.from_tensor_slices(np.zeros((3, 4))))


def test_datasets_of_every_other_pipeline_are_batch_streams():
    rows = [{"token_ids": np.arange(4)} for _ in range(3)]
    assert is_batch_stream(_Batches())
    assert is_batch_stream(grain.MapDataset.source(rows).batch(2))
    assert is_batch_stream(grain.MapDataset.source(rows).to_iter_dataset())


@pytest.mark.parametrize("value", [[1, 2], np.zeros((2, 3)), {"token_ids": np.zeros((1, 2))}, None, "text"])
def test_in_memory_inputs_are_not(value):
    assert not is_batch_stream(value)
