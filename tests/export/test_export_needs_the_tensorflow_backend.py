"""The exports that trace the Keras model into a TensorFlow graph (serving
SavedModel, TFLite) refuse other backends in one line, before writing
anything, where TensorFlow is installed but Keras runs on JAX or PyTorch.
(TF-Hub export builds its own graph from the weights and runs there.)

Needs TensorFlow installed (the check runs in a JAX process); without it
`keras_albert.export` itself refuses, tested in tests/cli.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("tensorflow", reason="the exports are TensorFlow's")

_SCRIPT = textwrap.dedent("""
    import json, pathlib, sys
    import keras_albert
    from keras_albert.export import export_serving_saved_model, export_tflite
    from keras_albert.utils.backend import TensorFlowRequiredError

    out = pathlib.Path(sys.argv[1])
    task = keras_albert.AlbertClassifier.from_preset("albert_tiny_en", num_classes=2)
    answers = {}
    for name, call in [("saved_model", lambda: export_serving_saved_model(task, out / "saved_model")),
                       ("tflite", lambda: export_tflite(task, out / "model.tflite"))]:
        try:
            call()
            answers[name] = "exported"
        except TensorFlowRequiredError as error:
            answers[name] = str(error)
    answers["written"] = sorted(path.name for path in out.iterdir())
    print(json.dumps(answers))
""")


def test_saved_model_and_tflite_refuse_jax_in_one_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(out)], capture_output=True, text=True, timeout=600,
        env=dict(os.environ, KERAS_BACKEND="jax", TF_CPP_MIN_LOG_LEVEL="3"),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    answers = json.loads(result.stdout.strip().splitlines()[-1])
    for name, feature in [("saved_model", "A serving SavedModel"), ("tflite", "TFLite export")]:
        assert answers[name] == (
            f"{feature} needs KERAS_BACKEND=tensorflow; this process runs KERAS_BACKEND=jax. "
            "Presets saved here load there unchanged."
        )
    assert answers["written"] == []
