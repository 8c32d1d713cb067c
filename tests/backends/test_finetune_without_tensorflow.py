"""`finetune` on JAX with TensorFlow unimportable: length-bucketed NumPy
batches train the bundled preset; the preset it writes loads on TensorFlow;
what needs TensorFlow (the serving export, other tasks) says so."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import keras_albert
from tests.conftest import _WORDS

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("cli_worker.py")


def _run(arguments):
    return subprocess.run(
        [sys.executable, str(WORKER), *arguments],
        env=dict(os.environ, KERAS_BACKEND="jax", PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=900,
    )


def _train_file(path):
    rng = np.random.default_rng(0)
    rows = ["text\tlabel"] + [
        f"{' '.join(rng.choice(_WORDS, int(rng.integers(2, 12))))} {animal}\t{label}"
        for animal, label in [("cat", "pet"), ("fish", "wild")] * 40
    ]
    path.write_text("\n".join(rows) + "\n")
    return path


def _arguments(train, output, task="classification"):
    return [
        "finetune", "--preset=albert_tiny_en", f"--task={task}", f"--train={train}",
        f"--eval={train}", f"--output={output}", "--epochs=2", "--batch_size=8",
        "--sequence_length=32", "--learning_rate=1e-3",
    ]


def test_classification_trains_and_its_preset_loads_on_tensorflow(tmp_path):
    train = _train_file(tmp_path / "train.tsv")
    result = _run(_arguments(train, tmp_path / "out"))
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert len(metrics["history"]) == 2 and metrics["labels"] == ["pet", "wild"]
    assert "Serving SavedModel: not written (export needs KERAS_BACKEND=tensorflow)" in result.stdout
    assert not (tmp_path / "out" / "serving").exists()
    classifier = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "out" / "preset"))
    texts = ["the small cat", "a big fish"]
    assert classifier.predict(texts, verbose=0).shape == (2, 2)
    # Learned: the best epoch beats guessing on its own training file.
    assert metrics["best"]["accuracy"] > 0.6


def test_tensorflow_only_tasks_are_refused_before_any_work(tmp_path):
    train = _train_file(tmp_path / "train.tsv")
    result = _run(_arguments(train, tmp_path / "out", task="token_classification"))
    assert result.returncode == 2
    assert ("`--task=token_classification` needs KERAS_BACKEND=tensorflow; this run is on "
            "KERAS_BACKEND=jax") in result.stderr
    assert not (tmp_path / "out").exists()
