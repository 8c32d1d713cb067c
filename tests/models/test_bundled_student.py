"""The bundled students: `albert_tiny_en_student` (general distillation) and
`albert_tiny_en_student_supersense` (then task distillation) are small,
trained, and the supersense student ships as int8 TFLite."""

import json

import numpy as np
import pytest

import keras_albert
from keras_albert import datasets
from keras_albert.export.tflite_export import export_tflite
from keras_albert.presets.preset_resolution import bundled_presets_dir

SAVED_MODELS = bundled_presets_dir()
SUPERSENSE = "albert_tiny_en_student_supersense"


@pytest.fixture(scope="module")
def supersense_student():
    return keras_albert.AlbertClassifier.from_preset(SUPERSENSE)


def test_students_are_bundled_and_at_least_4x_smaller_than_the_teacher():
    assert {"albert_tiny_en_student", SUPERSENSE} <= set(keras_albert.list_presets())
    teacher = keras_albert.AlbertBackbone.from_preset("albert_tiny_en").count_params()
    for name in ("albert_tiny_en_student", SUPERSENSE):
        assert keras_albert.AlbertBackbone.from_preset(name).count_params() * 4 <= teacher


def test_supersense_student_names_its_classes(supersense_student):
    """The class ids it was trained on index `supersense_labels("n")`."""
    assert supersense_student.label_names == list(datasets.supersense_labels(pos="n"))


@pytest.mark.large
def test_supersense_student_classifies_held_out_glosses(supersense_student):
    """Held-out noun glosses (never used in pretraining, distillation or
    fine-tuning): far above the majority class (about 15 %)."""
    texts, labels = datasets.load_supersense("validation", pos="n")
    assert supersense_student.num_classes == len(datasets.supersense_labels(pos="n"))
    logits = supersense_student.predict(texts[:1000], batch_size=256, verbose=0)
    accuracy = float((logits.argmax(-1) == np.asarray(labels[:1000])).mean())
    assert accuracy > 0.6, accuracy


def test_recorded_report_meets_the_targets():
    report = json.loads((SAVED_MODELS / SUPERSENSE / "student_report.json").read_text())
    models = report["models"]
    student, teacher = models["student, task-distilled"], models["teacher"]
    assert student["accuracy"] >= teacher["accuracy"] - 0.02
    assert student["accuracy"] > models["student without distillation"]["accuracy"]
    assert student["parameter_ratio_vs_teacher"] >= 4
    assert student["speedup_int8_vs_teacher"] >= 3


@pytest.mark.large
def test_supersense_student_exports_to_int8_tflite(supersense_student, tmp_path):
    texts, _ = datasets.load_supersense("validation", pos="n")
    report = export_tflite(supersense_student, tmp_path / "student.tflite", quantize="dynamic",
                           sequence_length=32, check_texts=texts[:200])
    assert report["argmax_agreement"] >= 0.99
    assert report["bytes"] < 1_000_000
