"""The bundled students: `albert_tiny_en_student` (general distillation) and
`albert_tiny_en_student_supersense` (then task distillation) are small and
trained (measured live on held-out glosses, not read from the report the
supersense student ships with).

Runs on every backend; its int8 TFLite export:
test_bundled_student_tflite.py.
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_bundled_student.py
"""

import numpy as np
import pytest

import keras_albert
from keras_albert import datasets

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


def spread_test_sample():
    """Every 20th noun gloss of the supersense test split (synsets hashed to
    90-99, used by no training or choice of the students): 413 glosses of
    25 of the 26 classes, spread over the split (which is ordered by class)."""
    texts, labels = datasets.load_supersense("test", pos="n")
    return texts[::20], np.asarray(labels[::20])


@pytest.mark.large
def test_supersense_student_classifies_held_out_glosses(supersense_student):
    """Measured here, not read from `student_report.json`. Measured
    2026-12-06 (seed 1 of the protocol run, bundled since): 0.746 on this
    sample (95 % Wilson interval 0.702-0.785), 0.769 on the whole test
    split; the majority class holds 14 % of it. The student it replaced
    scored 0.680 here."""
    texts, labels = spread_test_sample()
    assert len(texts) == 413 and len(set(labels.tolist())) >= 25
    assert supersense_student.num_classes == len(datasets.supersense_labels(pos="n"))
    logits = supersense_student.predict(texts, batch_size=256, verbose=0)
    accuracy = float((logits.argmax(-1) == labels).mean())
    # The interval's lower end 0.702, less a margin for other CPUs' rounding.
    assert accuracy > 0.68, accuracy
