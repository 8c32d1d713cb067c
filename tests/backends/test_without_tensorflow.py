"""JAX and PyTorch with TensorFlow not installed: presets load, the
tokenizer runs on Python's SentencePiece with the ids TensorFlow gives,
classifiers predict and train, TensorFlow-only features say what they
need, and a backend we do not run on is refused in one line.

Runs on every backend, TensorFlow installed or not: the JAX and PyTorch
workers make TensorFlow unimportable themselves; what they saw is compared
with TensorFlow's ids and outputs, made on TensorFlow whatever this run's
backend (here, or in a TensorFlow process when this run is on another;
skipped only where TensorFlow is absent), and their
presets are loaded on this run's backend:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/backends/test_without_tensorflow.py
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest

import keras_albert
from tests.backends.no_tensorflow_worker import TEXTS

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(backend, *args, script="no_tensorflow_worker.py", **env):
    env = dict(os.environ, KERAS_BACKEND=backend, **env)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [sys.executable, str(ROOT / "tests" / "backends" / script), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    results = {}
    for backend in ("jax", "torch"):
        out = tmp_path_factory.mktemp(backend) / "out.npz"
        result = _run(backend, str(out))
        assert result.returncode == 0, result.stderr[-4000:]
        data = dict(np.load(out))
        data["report"] = json.loads(str(data["report"]))
        data["preset"] = out.with_name("trained_preset")
        results[backend] = data
    return results


def tensorflow_reference():
    """TensorFlow's ids (by its graph path, tensorflow-text, as in tf.data
    and serving) and the bundled preset's outputs, on KERAS_BACKEND=tensorflow."""
    import tensorflow as tf

    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset("albert_tiny_en", sequence_length=16)
    backbone = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    features = preprocessor(TEXTS)
    graph_ids = tf.data.Dataset.from_tensor_slices(TEXTS).map(tokenizer)
    return dict(
        ids=[list(map(int, row)) for row in graph_ids.as_numpy_iterator()],
        token_ids=np.asarray(features["token_ids"]),
        sequence_output=np.asarray(backbone(features)["sequence_output"]),
    )


_TENSORFLOW_REFERENCE = textwrap.dedent(
    """
    import json
    import sys

    import numpy as np

    from tests.backends.test_without_tensorflow import tensorflow_reference

    data = tensorflow_reference()
    np.savez(sys.argv[1], **dict(data, ids=np.array(json.dumps(data["ids"]))))
    """
)


@pytest.fixture(scope="module")
def on_tensorflow(tmp_path_factory):
    # TensorFlow's ids and outputs, the reference the other backends must
    # match: here when this run is on TensorFlow (a process start costs
    # seconds), else from a TensorFlow process.
    pytest.importorskip("tensorflow", reason="the reference is TensorFlow's")
    if keras.config.backend() == "tensorflow":
        return tensorflow_reference()
    out = tmp_path_factory.mktemp("tensorflow") / "out.npz"
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", _TENSORFLOW_REFERENCE, str(out)],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    data = dict(np.load(out))
    data["ids"] = json.loads(str(data["ids"]))
    return data


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_worker_never_imports_tensorflow_and_detokenizes(seen, backend):
    report = seen[backend]["report"]
    assert not report["tensorflow_imported"]
    assert report["detokenized"][0] == "hello world, the horse runs."


def test_jax_and_torch_give_the_same_ids_and_outputs(seen):
    # What holds with TensorFlow absent too: the two backends agree.
    assert seen["jax"]["report"]["ids"] == seen["torch"]["report"]["ids"]
    np.testing.assert_array_equal(seen["jax"]["token_ids"], seen["torch"]["token_ids"])
    np.testing.assert_allclose(seen["jax"]["sequence_output"], seen["torch"]["sequence_output"], atol=1e-5)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_tokenizer_ids_equal_tensorflow(seen, on_tensorflow, backend):
    report = seen[backend]["report"]
    assert report["ids"] == on_tensorflow["ids"]
    np.testing.assert_array_equal(seen[backend]["token_ids"], on_tensorflow["token_ids"])


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_bundled_preset_outputs_equal_tensorflow(seen, on_tensorflow, backend):
    np.testing.assert_allclose(seen[backend]["sequence_output"], on_tensorflow["sequence_output"], atol=1e-5)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_classifier_trains_and_predicts(seen, backend):
    report = seen[backend]["report"]
    assert report["loss_after"] < report["loss_before"]
    logits = seen[backend]["logits"]
    assert logits.shape == (len(TEXTS), 3) and np.isfinite(logits).all()


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_preset_trained_there_loads_here_with_equal_outputs(seen, backend):
    classifier = keras_albert.AlbertClassifier.from_preset(str(seen[backend]["preset"]))
    np.testing.assert_allclose(classifier.predict(TEXTS, verbose=0), seen[backend]["logits"], atol=1e-5)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_tensorflow_only_feature_says_what_it_needs(seen, backend):
    refusal = seen[backend]["report"]["refusal"]
    assert refusal is not None and "\n" not in refusal
    assert "needs TensorFlow" in refusal and "pip install tensorflow" in refusal


@pytest.mark.parametrize(
    "backend, expected",
    [
        ("numpy", "keras_albert runs on KERAS_BACKEND=tensorflow|jax|torch. Received: KERAS_BACKEND='numpy'"),
        ("mxnet", "Received: KERAS_BACKEND='mxnet'"),
    ],
)
def test_unknown_backend_is_refused_in_one_line(backend, expected):
    result = subprocess.run(
        [sys.executable, "-c", "import keras_albert"],
        env=dict(os.environ, KERAS_BACKEND=backend), capture_output=True, text=True, timeout=300,
    )
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("keras_albert.utils.backend.BackendError: ") and expected in last


def test_backend_not_installed_is_refused_in_one_line():
    # `torch` made unimportable, as where it is not installed.
    code = "import sys; sys.modules['torch'] = None; import keras_albert"
    result = subprocess.run(
        [sys.executable, "-c", code], env=dict(os.environ, KERAS_BACKEND="torch"),
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode != 0
    assert "KERAS_BACKEND=torch needs the 'torch' package" in result.stderr.strip().splitlines()[-1]
