"""The bundled supersense student exports to int8 TFLite that agrees with
the Keras model.

TensorFlow only, on the TensorFlow backend (the export traces the model
into a TensorFlow graph, as `keras_albert.export` requires); the student
itself is checked on every backend in test_bundled_student.py.
"""

import keras
import pytest

pytest.importorskip("tensorflow", reason="TFLite export is TensorFlow's")
if keras.config.backend() != "tensorflow":
    pytest.skip("TFLite export traces the model as TensorFlow ops: KERAS_BACKEND=tensorflow",
                allow_module_level=True)

import keras_albert  # noqa: E402
from keras_albert.export.tflite_export import export_tflite  # noqa: E402
from tests.models.test_bundled_student import SUPERSENSE  # noqa: E402
from tests.models.test_bundled_student import spread_test_sample  # noqa: E402


@pytest.fixture(scope="module")
def supersense_student():
    return keras_albert.AlbertClassifier.from_preset(SUPERSENSE)


@pytest.mark.large
def test_supersense_student_exports_to_int8_tflite(supersense_student, tmp_path):
    texts, _ = spread_test_sample()
    report = export_tflite(supersense_student, tmp_path / "student.tflite", quantize="dynamic",
                           sequence_length=32, check_texts=texts[:200])
    assert report["argmax_agreement"] >= 0.99
    assert report["bytes"] < 1_000_000
