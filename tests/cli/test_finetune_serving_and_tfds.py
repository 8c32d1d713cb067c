"""`python -m keras_albert finetune`'s TensorFlow features: the serving
SavedModel takes raw strings, and TFDS datasets are read by split names.

TensorFlow only (SavedModels and TFDS are TensorFlow's): each run is on
the TensorFlow backend whatever this run's backend (`tests.in_process.
on_tensorflow`: in this process on TensorFlow, else in a TensorFlow
process), on a preset saved on this run's backend; skipped only where
TensorFlow is not installed:
    python -m pytest tests/cli/test_finetune_serving_and_tfds.py
"""

import pathlib

import pytest

pytest.importorskip("tensorflow", reason="SavedModels and TFDS are TensorFlow's")

from tests.cli.test_finetune_command import classification_file  # noqa: E402
from tests.cli.test_finetune_command import preset  # noqa: E402, F401 (fixture)
from tests.cli.test_finetune_command import run  # noqa: E402
from tests.in_process import on_tensorflow  # noqa: E402


def serving(preset_path, directory):
    """A classification run's labels, and what its serving SavedModel
    answers for one raw string."""
    import tensorflow as tf

    directory = pathlib.Path(directory)
    train = classification_file(directory)
    output, metrics = run(preset_path, directory, "classification", train, train)
    serve = tf.saved_model.load(str(output / "serving")).signatures["serving_default"]
    outputs = serve(text=tf.constant(["a cat"]))
    return dict(
        labels=metrics["labels"],
        probabilities=outputs["probabilities"].shape.as_list(),
        served_labels=[label.decode() for label in outputs["labels"].numpy()],
    )


def tfds_labels(preset_path, directory):
    """The labels of a run on a (mock) TFDS dataset named by split names."""
    import tensorflow_datasets as tfds

    with tfds.testing.mock_data(num_examples=16):
        _, metrics = run(preset_path, pathlib.Path(directory), "classification", "train", "validation",
                         "--tfds=glue/sst2", "--text_columns", "sentence")
    return metrics["labels"]


@pytest.mark.large
def test_classification_serving_model_takes_raw_strings(preset, tmp_path):  # noqa: F811
    seen = on_tensorflow(serving, preset, tmp_path)
    assert seen["labels"] == ["pet", "wild"]
    assert seen["probabilities"] == [1, 2]
    assert set(seen["served_labels"]) <= {"pet", "wild"} and len(seen["served_labels"]) == 1


@pytest.mark.large
def test_tfds_dataset_by_split_names(preset, tmp_path):  # noqa: F811
    assert on_tensorflow(tfds_labels, preset, tmp_path) == ["negative", "positive"]
