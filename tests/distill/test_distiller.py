"""Distiller: losses, layer maps, the progressive schedule, training.

Runs on every backend; MirroredStrategy (TensorFlow's) in a TensorFlow
process whatever the backend, skipped only where TensorFlow is absent:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/distill/test_distiller.py
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
from keras_albert.distill import Distiller
from keras_albert.distill import attention_transfer_loss
from keras_albert.distill import feature_map_loss
from keras_albert.distill import resolve_layer_map
from keras_albert.distill import soft_mlm_loss

TEACHER = dict(vocabulary_size=40, num_layers=2, num_heads=2, embedding_dim=8,
               hidden_dim=16, intermediate_dim=32, max_sequence_length=16)
STUDENT = dict(TEACHER, hidden_dim=8, intermediate_dim=8, embedding_dim=4, bottleneck_dim=4,
               num_feedforward_stacks=2, embedding_type="trigram", normalization="no_norm",
               activation="relu", sharing="none")


def masked_lm(config, seed):
    keras.utils.set_random_seed(seed)
    # A larger initializer makes attention maps far from uniform, so the
    # losses are clearly positive between unrelated models.
    return keras_albert.AlbertMaskedLM(
        keras_albert.AlbertBackbone(**dict(config, initializer_range=0.5)))


def batch(size=4, length=10, predictions=3, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((size, length), "int32")
    mask[0, 6:] = 0
    x = {
        "token_ids": rng.integers(5, 40, (size, length)).astype("int32"),
        "segment_ids": np.zeros((size, length), "int32"),
        "padding_mask": mask,
        "mask_positions": rng.integers(0, 6, (size, predictions)).astype("int32"),
    }
    return x, {"mlm": rng.integers(5, 40, (size, predictions)).astype("int32")}, {
        "mlm": np.ones((size, predictions), "float32")}


def losses(distiller, seed=0):
    x, y, w = batch(seed=seed)
    values = distiller.distillation_losses(x, distiller(x), y["mlm"], w["mlm"])
    return {name: float(keras.ops.convert_to_numpy(value)) for name, value in values.items()}


@pytest.fixture(scope="module")
def teacher():
    return masked_lm(TEACHER, 0)


def test_every_loss_is_zero_for_a_copy_of_the_teacher_and_positive_otherwise(teacher):
    copy = keras_albert.AlbertMaskedLM.from_config(teacher.get_config())
    copy.set_weights(teacher.get_weights())
    same = losses(Distiller(teacher, copy))
    assert same["feature_loss"] == 0.0
    assert same["attention_loss"] == 0.0
    assert same["mlm_distill_loss"] == 0.0
    assert same["mlm_loss"] > 0.0  # the true tokens are another matter
    for student in (masked_lm(TEACHER, 1), masked_lm(STUDENT, 2)):
        different = losses(Distiller(teacher, student))
        for name in ("feature_loss", "attention_loss", "mlm_distill_loss"):
            assert different[name] > 1e-3, name


def test_loss_functions_ignore_padding():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(1, 4, 6)).astype("float32")
    b = a.copy()
    b[0, 3] += 5.0  # differs only at a padded position
    mask = np.array([[1, 1, 1, 0]])
    assert float(feature_map_loss(a, b, mask)) == 0.0
    assert float(feature_map_loss(a, b, np.ones((1, 4)))) > 0.0
    p = np.full((1, 1, 4, 4), 0.25, "float32")
    q = p.copy()
    q[0, 0, 3] = [0.7, 0.1, 0.1, 0.1]
    assert float(attention_transfer_loss(q, p, mask)) == 0.0
    assert float(attention_transfer_loss(q, p, np.ones((1, 4)))) > 0.0
    logits = rng.normal(size=(1, 2, 5)).astype("float32")
    other = logits.copy()
    other[0, 1] *= 3
    assert float(soft_mlm_loss(other, logits, np.array([[1.0, 0.0]]))) == 0.0
    assert float(soft_mlm_loss(other, logits, np.array([[1.0, 1.0]]), temperature=2.0)) > 0.0


def test_progressive_stages_freeze_exactly_what_they_say(teacher):
    student = masked_lm(dict(STUDENT, num_layers=4), 3)
    distiller = Distiller(teacher, student, layer_map={1: 0, 3: 1})
    encoder = student.backbone.encoder

    def trainable():
        return {v.path for v in distiller.trainable_variables}

    def paths(*layers):
        return {v.path for layer in layers for v in layer.trainable_variables
                } if all(layer.trainable for layer in layers) else None

    def sublayers(*virtual_layers):
        return [encoder.attention_sublayers[f"layer_{l}_inner_0"] for l in virtual_layers] + [
            encoder.feed_forward_sublayers[f"layer_{l}_inner_0"] for l in virtual_layers]

    projection = {v.path for v in distiller.projection.weights}
    distiller.set_stage(0)  # embeddings and layers 0-1 (up to mapped layer 1)
    assert trainable() == paths(student.backbone.embeddings, *sublayers(0, 1)) | projection
    distiller.set_stage(1)  # layers 2-3, everything below frozen
    assert trainable() == paths(*sublayers(2, 3)) | projection
    assert not student.backbone.embeddings.trainable
    assert distiller.stage_layers(1) == sorted(
        ["layer_2_inner_0_attention", "layer_2_inner_0_feed_forward",
         "layer_3_inner_0_attention", "layer_3_inner_0_feed_forward"])
    distiller.set_stage(None)  # the whole student (its pooler feeds no loss)
    expected = {v.path for v in student.trainable_variables} - {
        v.path for v in student.backbone.pooler.weights}
    assert trainable() == expected | projection
    assert not any(v.trainable for v in teacher.variables)
    with pytest.raises(ValueError, match="stage"):
        distiller.set_stage(2)


@pytest.mark.large
def test_a_stage_trains_only_its_layers(teacher):
    student = masked_lm(STUDENT, 4)
    distiller = Distiller(teacher, student)
    distiller.set_stage(1)
    distiller.compile(keras.optimizers.Adam(1e-2))
    frozen = [v for v in student.variables if "layer_0" in v.path or "embeddings" in v.path]
    trained = [v for v in student.variables if "layer_1" in v.path]
    before = [keras.ops.convert_to_numpy(v) for v in frozen + trained]
    x, y, w = batch(size=8)
    distiller.fit(x, y, sample_weight=w, batch_size=4, epochs=1, verbose=0)
    after = [keras.ops.convert_to_numpy(v) for v in frozen + trained]
    assert all(np.array_equal(a, b) for a, b in zip(before[:len(frozen)], after))
    assert any(not np.array_equal(a, b) for a, b in zip(before[len(frozen):], after[len(frozen):]))


def _train_and_compare(distiller):
    """Losses before and after 15 epochs, and the fit history's losses."""
    before = losses(distiller, seed=1)
    x, y, w = batch(size=16, seed=1)
    history = distiller.fit(x, y, sample_weight=w, batch_size=8, epochs=15, verbose=0).history
    return dict(before=before, after=losses(distiller, seed=1), loss=history["loss"])


def _assert_losses_fell(result):
    for name in ("feature_loss", "attention_loss", "mlm_distill_loss", "mlm_loss"):
        assert result["after"][name] < result["before"][name], name
    assert result["loss"][-1] < result["loss"][0]


@pytest.mark.large
def test_distillation_lowers_the_losses(teacher):
    student = masked_lm(STUDENT, 5)
    distiller = Distiller(teacher, student, alpha=0.5)
    distiller.compile(keras.optimizers.Adam(3e-2))
    _assert_losses_fell(_train_and_compare(distiller))


_MIRRORED_SCRIPT = textwrap.dedent(
    """
    import json
    import keras
    import tensorflow as tf
    from keras_albert.distill import Distiller
    from tests.distill.test_distiller import STUDENT, TEACHER, _train_and_compare, masked_lm

    teacher = masked_lm(TEACHER, 0)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        student = masked_lm(STUDENT, 5)
        distiller = Distiller(teacher, student, alpha=0.5)
        distiller.compile(keras.optimizers.Adam(3e-2))
    print(json.dumps(_train_and_compare(distiller)))
    """
)


@pytest.mark.large
def test_distillation_under_a_strategy_lowers_the_losses():
    # tf.distribute is TensorFlow's: checked in a TensorFlow process
    # whatever this run's backend.
    pytest.importorskip("tensorflow", reason="tf.distribute is TensorFlow's")
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-c", _MIRRORED_SCRIPT],
        capture_output=True, text=True, timeout=600, env=env, cwd=root,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    _assert_losses_fell(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.large
def test_bad_inputs_name_the_argument_and_value(teacher):
    with pytest.raises(ValueError, match=r"attention_weight.*student num_heads=1.*teacher num_heads=2"):
        Distiller(teacher, masked_lm(dict(STUDENT, num_heads=1), 6))
    Distiller(teacher, masked_lm(dict(STUDENT, num_heads=1), 6), attention_weight=0)
    with pytest.raises(ValueError, match=r"layer_map.*student layer 5.*0 to 1"):
        Distiller(teacher, masked_lm(STUDENT, 7), layer_map={5: 1})
    with pytest.raises(ValueError, match=r"layer_map.*teacher layer 2.*0 to 1"):
        Distiller(teacher, masked_lm(STUDENT, 7), layer_map=[(0, 2)])
    with pytest.raises(ValueError, match=r"hidden_projection=False.*hidden_dim=8.*hidden_dim=16"):
        Distiller(teacher, masked_lm(STUDENT, 7), hidden_projection=False)
    with pytest.raises(ValueError, match="alpha"):
        Distiller(teacher, masked_lm(STUDENT, 7), alpha=1.5)
    with pytest.raises(ValueError, match="vocabulary"):
        Distiller(teacher, masked_lm(dict(STUDENT, vocabulary_size=41), 7))


def test_layer_maps():
    assert resolve_layer_map(None, 2, 4) == [(0, 1), (1, 3)]
    assert resolve_layer_map(None, 4, 4) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert resolve_layer_map({1: 3, 0: 0}, 2, 4) == [(0, 0), (1, 3)]
    with pytest.raises(ValueError, match="increasing"):
        resolve_layer_map({0: 3, 1: 0}, 2, 4)
    with pytest.raises(ValueError, match="layer_map"):
        resolve_layer_map("0:1", 2, 4)
