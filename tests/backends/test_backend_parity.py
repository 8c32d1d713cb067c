"""The same weights give the same outputs, gradients and training step on
the tensorflow, jax and torch backends.

Models are built and saved on TensorFlow (this process); a fresh process
per backend loads them (`backend_worker.py`) with TensorFlow made
unimportable, as on a machine without it, and writes what it computed.
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_albert
from tests.backends import backend_worker

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMALL = dict(
    vocabulary_size=120, num_layers=3, num_heads=2, embedding_dim=16,
    hidden_dim=32, intermediate_dim=64, max_sequence_length=32,
)
LSH = dict(attention="lsh", attention_kwargs=dict(num_buckets=4, chunk_length=4, num_hashes=2, seed=2))
BACKBONES = {
    "all_shared": dict(sharing="all"),
    "not_shared": dict(sharing="none"),
    "attention_groups": dict(sharing="attention", num_groups=2, num_inner_repetitions=2),
    "ffn_shared": dict(sharing="ffn"),
    "lsh": dict(sharing="all", **LSH),
    "reversible": dict(sharing="all", reversible=True),
    "bottleneck_student": dict(
        embedding_type="trigram", bottleneck_dim=16, num_feedforward_stacks=2,
        normalization="no_norm", activation="relu",
    ),
}
LENGTH = 16


def _inputs():
    rng = np.random.default_rng(0)
    mask = np.ones((2, LENGTH), "int32")
    mask[1, 10:] = 0
    return {
        "token_ids": rng.integers(5, 120, (2, LENGTH)).astype("int32"),
        "segment_ids": (np.arange(LENGTH) >= 5).astype("int32")[None].repeat(2, 0),
        "padding_mask": mask,
        "mask_positions": np.array([[1, 3, 7, 0], [2, 4, 0, 0]], "int32"),
        "mask_ids": rng.integers(5, 120, (2, 4)).astype("int32"),
        "mask_weights": np.array([[1, 1, 1, 0], [1, 1, 0, 0]], "float32"),
        "sop_labels": np.array([0, 1], "int32"),
    }


def _save_cases(directory):
    keras.utils.set_random_seed(0)
    np.savez(directory / "inputs.npz", **_inputs())

    def save(name, model, kind, **spec):
        model.save(directory / f"{name}.keras")
        (directory / f"{name}.json").write_text(json.dumps(dict(kind=kind, **spec)))

    for name, options in BACKBONES.items():
        save(f"backbone_{name}", keras_albert.AlbertBackbone(**SMALL, **options), "backbone")
    reversible = keras_albert.AlbertBackbone(**SMALL, sharing="attention", num_groups=2, reversible=True, **LSH)
    save("reversible_gradients", reversible, "reversible_gradients")
    tasks = {
        "question_answerer": lambda b: keras_albert.AlbertQuestionAnswerer(b),
        "multiple_choice": lambda b: keras_albert.AlbertMultipleChoice(b),
        "token_classifier": lambda b: keras_albert.AlbertTokenClassifier(b, num_classes=5),
        "classifier": lambda b: keras_albert.AlbertClassifier(b, num_classes=3),
        "masked_lm": lambda b: keras_albert.AlbertMaskedLM(b),
    }
    for name, task in tasks.items():
        save(f"task_{name}", task(keras_albert.AlbertBackbone(**SMALL)), "task")
    teacher = keras_albert.AlbertMaskedLM(keras_albert.AlbertBackbone(**SMALL, initializer_range=0.5))
    student = keras_albert.AlbertMaskedLM(keras_albert.AlbertBackbone(
        **dict(SMALL, num_layers=3, bottleneck_dim=8, num_feedforward_stacks=2, normalization="no_norm",
               activation="relu", sharing="none")))
    for role, model in (("teacher", teacher), ("student", student)):
        model.save(directory / f"distiller_{role}.keras")
    (directory / "distiller.json").write_text(json.dumps(dict(kind="distiller")))
    for optimizer in ("sgd", "lamb"):
        backbone = keras_albert.AlbertBackbone(**SMALL, sharing="all")
        save(f"pretrainer_{optimizer}", keras_albert.AlbertPretrainer(backbone), "pretrainer", optimizer=optimizer)


def _run_worker(backend, cases, out):
    env = dict(os.environ, KERAS_BACKEND=backend, KERAS_ALBERT_BLOCK_TENSORFLOW="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "backends" / "backend_worker.py"), str(cases), str(out)],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return dict(np.load(out))


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    cases = tmp_path_factory.mktemp("cases")
    _save_cases(cases)
    results = {}
    tensorflow_out = cases.parent / "tensorflow.npz"
    backend_worker.main(cases, tensorflow_out)
    results["tensorflow"] = dict(np.load(tensorflow_out))
    for backend in ("jax", "torch"):
        results[backend] = _run_worker(backend, cases, cases.parent / f"{backend}.npz")
    return results


def _keys(computed, prefix):
    keys = sorted(k for k in computed["tensorflow"] if k.startswith(prefix))
    assert keys, f"nothing computed for {prefix}"
    return keys


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_backbone_outputs_equal_tensorflow(computed, backend, name):
    for key in _keys(computed, f"backbone_{name}/"):
        np.testing.assert_allclose(computed[backend][key], computed["tensorflow"][key], atol=1e-5, rtol=1e-5, err_msg=key)


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize("optimizer", ["sgd", "lamb"])
def test_pretrainer_outputs_and_one_step_equal_tensorflow(computed, backend, optimizer):
    keys = _keys(computed, f"pretrainer_{optimizer}/")
    assert f"pretrainer_{optimizer}/loss_after_step" in keys
    for key in keys:
        np.testing.assert_allclose(computed[backend][key], computed["tensorflow"][key], atol=1e-5, rtol=1e-5, err_msg=key)
    # The step did something: the loss moved.
    before = computed[backend][f"pretrainer_{optimizer}/loss_before_step"]
    after = computed[backend][f"pretrainer_{optimizer}/loss_after_step"]
    assert abs(float(before) - float(after)) > 1e-3


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize(
    "name", ["question_answerer", "multiple_choice", "token_classifier", "classifier", "masked_lm"]
)
def test_task_outputs_equal_tensorflow(computed, backend, name):
    for key in _keys(computed, f"task_{name}/"):
        np.testing.assert_allclose(computed[backend][key], computed["tensorflow"][key], atol=1e-5, rtol=1e-5, err_msg=key)


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_distillation_losses_and_step_equal_tensorflow(computed, backend):
    keys = _keys(computed, "distiller/")
    assert {"distiller/loss_before_step", "distiller/loss_after_step"} <= set(keys)
    assert len([k for k in keys if k.startswith("distiller/loss_") and "step" not in k]) >= 3
    for key in keys:
        np.testing.assert_allclose(computed[backend][key], computed["tensorflow"][key], atol=1e-5, rtol=1e-5, err_msg=key)
        assert computed["tensorflow"][key] > 0, key
    before, after = (float(computed[backend][f"distiller/loss_{when}_step"]) for when in ("before", "after"))
    assert abs(before - after) > 1e-3


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_reversible_gradients_equal_plain_autodiff(computed, backend):
    results = computed[backend]
    reversal = _keys(computed, "reversible_gradients/reversal_")
    assert len(reversal) > 5  # the input and the shared weights
    for key in reversal:
        expected = results[key.replace("reversal_", "autodiff_")]
        assert np.abs(expected).max() > 0, key
        np.testing.assert_allclose(results[key], expected, atol=1e-5, rtol=1e-4, err_msg=key)
        np.testing.assert_allclose(results[key], computed["tensorflow"][key], atol=1e-5, rtol=1e-4, err_msg=key)


def test_full_attention_is_fused_off_tensorflow(computed):
    # JAX and PyTorch go through ops.dot_product_attention; TensorFlow keeps
    # the explicit softmax that int8 TFLite calibration needs.
    assert computed["jax"]["fused_attention_calls"] > 0
    assert computed["torch"]["fused_attention_calls"] > 0
    assert computed["tensorflow"]["fused_attention_calls"] == 0
