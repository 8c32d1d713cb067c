"""Inside a Grain pipeline keras-hub's preprocessors return NumPy (Grain
pickles elements across worker processes); ours must too, int32
`padding_mask` included. Grain is not a dependency: its detection is
switched on directly.

Runs on every backend; the tf.data (graph) leg of the mask cast in a
TensorFlow process only:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_grain_outputs.py
"""

import keras
import numpy as np
import pytest
from keras import ops
from keras_hub.src.utils import tensor_utils

import keras_albert
from keras_albert.models.preprocessor_inputs import int32_padding_mask

TEXTS = ["the cat sees a bird.", "emma walks to the river."]


@pytest.fixture
def inside_grain(monkeypatch):
    monkeypatch.setattr(tensor_utils, "in_grain_data_pipeline", lambda: True)


@pytest.mark.parametrize("cls", [keras_albert.AlbertTextClassifierPreprocessor,
                                 keras_albert.AlbertMaskedLMPreprocessor])
def test_preprocessors_return_numpy_inside_grain(cls, inside_grain, sentencepiece_proto):
    preprocessor = cls(keras_albert.AlbertTokenizer(proto=sentencepiece_proto), sequence_length=12)
    outputs = preprocessor(TEXTS)
    x = outputs[0] if isinstance(outputs, tuple) else outputs
    for leaf in keras.tree.flatten(outputs):
        assert isinstance(leaf, np.ndarray), type(leaf)
    assert x["padding_mask"].dtype == np.int32
    assert x["token_ids"].shape == (2, 12)


def test_int32_padding_mask_keeps_the_array_kind():
    mask = np.array([[True, False]])
    assert isinstance(int32_padding_mask({"padding_mask": mask})["padding_mask"], np.ndarray)
    # A backend tensor stays one, whichever backend runs.
    tensor = ops.convert_to_tensor(mask)
    cast = int32_padding_mask({"padding_mask": tensor})["padding_mask"]
    assert type(cast) is type(tensor) and keras.backend.standardize_dtype(cast.dtype) == "int32"
    assert ops.convert_to_numpy(cast).tolist() == [[1, 0]]


def test_int32_padding_mask_keeps_tf_tensors_in_graphs():
    # tf.data maps run in a TensorFlow graph whatever the Keras backend.
    tf = pytest.importorskip("tensorflow", reason="tf.data's graph tensors are TensorFlow's")
    mask = np.array([[True, False]])
    cast = int32_padding_mask({"padding_mask": tf.constant(mask)})["padding_mask"]
    assert isinstance(cast, tf.Tensor) and cast.dtype == tf.int32

    @tf.function
    def in_graph(m):
        return int32_padding_mask({"padding_mask": m})["padding_mask"]

    assert in_graph(tf.constant(mask)).numpy().tolist() == [[1, 0]]
