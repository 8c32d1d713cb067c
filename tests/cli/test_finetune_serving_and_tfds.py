"""`python -m keras_albert finetune`'s TensorFlow features: the serving
SavedModel takes raw strings, and TFDS datasets are read by split names.

TensorFlow only (SavedModels and TFDS are TensorFlow's): each run is a
TensorFlow process whatever this run's backend, on a preset saved on that
backend; skipped only where TensorFlow is not installed:
    python -m pytest tests/cli/test_finetune_serving_and_tfds.py
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("tensorflow", reason="SavedModels and TFDS are TensorFlow's")

from tests.cli.test_finetune_command import preset  # noqa: E402, F401 (fixture)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _on_tensorflow(script, *arguments):
    """`script` run with KERAS_BACKEND=tensorflow; the JSON it prints last."""
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", script, *map(str, arguments)],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


_SERVING = textwrap.dedent(
    """
    import json
    import pathlib
    import sys

    import tensorflow as tf

    from tests.cli.test_finetune_command import classification_file
    from tests.cli.test_finetune_command import run

    directory = pathlib.Path(sys.argv[2])
    train = classification_file(directory)
    output, metrics = run(sys.argv[1], directory, "classification", train, train)
    serve = tf.saved_model.load(str(output / "serving")).signatures["serving_default"]
    outputs = serve(text=tf.constant(["a cat"]))
    print(json.dumps(dict(
        labels=metrics["labels"],
        probabilities=outputs["probabilities"].shape.as_list(),
        served_labels=[label.decode() for label in outputs["labels"].numpy()],
    )))
    """
)


@pytest.mark.large
def test_classification_serving_model_takes_raw_strings(preset, tmp_path):  # noqa: F811
    seen = _on_tensorflow(_SERVING, preset, tmp_path)
    assert seen["labels"] == ["pet", "wild"]
    assert seen["probabilities"] == [1, 2]
    assert set(seen["served_labels"]) <= {"pet", "wild"} and len(seen["served_labels"]) == 1


_TFDS = textwrap.dedent(
    """
    import json
    import pathlib
    import sys

    import tensorflow_datasets as tfds

    from tests.cli.test_finetune_command import run

    with tfds.testing.mock_data(num_examples=16):
        _, metrics = run(sys.argv[1], pathlib.Path(sys.argv[2]), "classification", "train", "validation",
                         "--tfds=glue/sst2", "--text_columns", "sentence")
    print(json.dumps(metrics["labels"]))
    """
)


@pytest.mark.large
def test_tfds_dataset_by_split_names(preset, tmp_path):  # noqa: F811
    assert _on_tensorflow(_TFDS, preset, tmp_path) == ["negative", "positive"]
