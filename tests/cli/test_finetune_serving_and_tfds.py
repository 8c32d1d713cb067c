"""`python -m keras_albert finetune`'s TensorFlow features: the serving
SavedModel takes raw strings, and TFDS datasets are read by split names.

TensorFlow only (SavedModels and TFDS are TensorFlow's): each run is on
the TensorFlow backend whatever this run's backend (in this process on
TensorFlow, else in a TensorFlow process: finetune_tensorflow_features.py),
on a preset saved on this run's backend; skipped only where TensorFlow is
not installed:
    python -m pytest tests/cli/test_finetune_serving_and_tfds.py
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import pytest

pytest.importorskip("tensorflow", reason="SavedModels and TFDS are TensorFlow's")

from tests.cli.test_finetune_command import preset  # noqa: E402, F401 (fixture)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _on_tensorflow(name, *arguments):
    """`finetune_tensorflow_features.NAME(*arguments)` on the TensorFlow
    backend: here when this process's backend is TensorFlow, else in a
    TensorFlow process."""
    if keras.config.backend() == "tensorflow":
        from tests.cli import finetune_tensorflow_features

        return getattr(finetune_tensorflow_features, name)(*map(str, arguments))
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "cli" / "finetune_tensorflow_features.py"), name,
         *map(str, arguments)],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.large
def test_classification_serving_model_takes_raw_strings(preset, tmp_path):  # noqa: F811
    seen = _on_tensorflow("serving", preset, tmp_path)
    assert seen["labels"] == ["pet", "wild"]
    assert seen["probabilities"] == [1, 2]
    assert set(seen["served_labels"]) <= {"pet", "wild"} and len(seen["served_labels"]) == 1


@pytest.mark.large
def test_tfds_dataset_by_split_names(preset, tmp_path):  # noqa: F811
    assert _on_tensorflow("tfds_labels", preset, tmp_path) == ["negative", "positive"]
