"""Reversible residual layers: gradients by reversal equal plain autodiff.

Runs on every backend, each with its own autodiff (and its traced run:
tf.function on TensorFlow, jax.jit on JAX; XLA-compiled training on
TensorFlow and JAX, PyTorch has no XLA in Keras):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_reversible_backbone.py
"""

import keras
import numpy as np
import pytest
from keras import ops

import keras_albert
from keras_albert.layers.reversible_encoder import AlbertReversibleEncoder
from tests.layers.backend_autodiff import EAGER_AND_TRACED
from tests.layers.backend_autodiff import JIT_CHOICES
from tests.layers.backend_autodiff import loss_and_gradients

LSH = dict(attention="lsh", attention_kwargs=dict(num_buckets=4, chunk_length=4, num_hashes=2, seed=2))


def encoder_inputs(length=12, hidden=16):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, length, hidden)).astype("float32")
    mask = np.ones((2, length), "int32")
    mask[1, length // 2:] = 0
    weights = rng.normal(size=(2, length, hidden)).astype("float32")
    return x, mask, weights


def gradients(encoder, x, mask, weights, reference, mode):
    def loss_of(x):
        if reference:
            outputs = encoder.reference_outputs(x, mask)
        else:
            outputs = encoder(x, padding_mask=mask, training=True)
        # Uses the last and an intermediate layer's output.
        return ops.sum(ops.multiply(outputs[-1], weights)) + ops.sum(ops.square(outputs[0]))

    return loss_and_gradients(encoder, loss_of, x, mode)


@pytest.mark.parametrize("mode", EAGER_AND_TRACED)
@pytest.mark.parametrize(
    "options",
    [
        dict(sharing="all"),
        dict(sharing="none"),
        dict(sharing="attention", num_groups=2, num_inner_repetitions=2),
        dict(sharing="all", **LSH),
    ],
    ids=["all", "none", "attention-groups", "lsh"],
)
def test_gradients_equal_plain_autodiff(options, mode):
    encoder = AlbertReversibleEncoder(
        num_layers=3, num_heads=2, hidden_dim=16, intermediate_dim=32, **options
    )
    x, mask, weights = encoder_inputs()
    encoder.build(x.shape, mask.shape)
    expected = gradients(encoder, x, mask, weights, True, mode)
    actual = gradients(encoder, x, mask, weights, False, mode)
    assert len(actual) == 2 + len(encoder.trainable_variables)
    for a, e in zip(actual, expected):
        assert a is not None and e is not None
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)
    # The weights really are shared: fewer variables than blocks would own.
    if options["sharing"] == "all":
        assert len(encoder.attention_sublayers) == 1


def test_reference_is_the_two_stream_formula():
    encoder = AlbertReversibleEncoder(num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32)
    x, mask, _ = encoder_inputs()
    encoder.build(x.shape, mask.shape)
    x, mask = ops.convert_to_tensor(x), ops.convert_to_tensor(mask)
    attention = encoder.attention_sublayers["group_0_inner_0"]
    feed_forward = encoder.feed_forward_sublayers["group_0_inner_0"]
    y1 = x + attention.attention_layer(attention.layer_norm(x), padding_mask=mask)
    y2 = x + feed_forward.output_dense(feed_forward.intermediate_dense(feed_forward.layer_norm(y1)))
    expected = ops.convert_to_numpy((y1 + y2) / 2)
    for training in (True, False):
        outputs = encoder(x, padding_mask=mask, training=training)
        np.testing.assert_allclose(ops.convert_to_numpy(outputs[0]), expected, atol=1e-6)


def backbone_inputs(length=16):
    rng = np.random.default_rng(1)
    mask = np.ones((2, length), "int32")
    mask[1, 10:] = 0
    return {
        "token_ids": rng.integers(5, 120, (2, length)).astype("int32"),
        "segment_ids": np.zeros((2, length), "int32"),
        "padding_mask": mask,
    }


def test_backbone_option_config_and_preset_round_trip(tmp_path, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config, reversible=True)
    assert isinstance(backbone.encoder, AlbertReversibleEncoder)
    config = backbone.get_config()
    assert config["reversible"] is True
    rebuilt = keras_albert.AlbertBackbone.from_config(config)
    assert rebuilt.get_config() == config and isinstance(rebuilt.encoder, AlbertReversibleEncoder)
    # Same weight layout as the standard backbone: presets load either way.
    standard = keras_albert.AlbertBackbone(**tiny_backbone_config)
    assert [w.path for w in standard.weights] == [w.path for w in backbone.weights]
    assert keras_albert.AlbertBackbone.from_config(standard.get_config()).get_config()["reversible"] is False
    backbone.save_to_preset(str(tmp_path))
    restored = keras_albert.AlbertBackbone.from_preset(str(tmp_path))
    assert restored.reversible is True
    x = backbone_inputs()

    def sequence(model, **kwargs):
        return ops.convert_to_numpy(model(x, **kwargs)["sequence_output"])

    np.testing.assert_array_equal(sequence(restored), sequence(backbone))
    np.testing.assert_allclose(sequence(backbone, training=True), sequence(backbone), atol=1e-6)


@pytest.mark.large
@pytest.mark.parametrize("jit_compile", JIT_CHOICES)
def test_backbone_trains_with_fit(tiny_backbone_config, jit_compile):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config, reversible=True, **LSH)
    x = backbone_inputs()
    inputs = {k: keras.Input((None,), dtype="int32", name=k) for k in x}
    model = keras.Model(inputs, keras.layers.Dense(1)(backbone(inputs)["pooled_output"]))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=jit_compile)
    before = [ops.convert_to_numpy(w) for w in backbone.encoder.trainable_weights]
    history = model.fit(x, np.array([[1.0], [-1.0]]), epochs=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    after = [ops.convert_to_numpy(w) for w in backbone.encoder.trainable_weights]
    assert all(not np.array_equal(a, b) for a, b in zip(after, before))


def test_refuses_what_cannot_be_reversed(tiny_backbone_config):
    with pytest.raises(ValueError, match="dropout=0"):
        keras_albert.AlbertBackbone(**tiny_backbone_config, reversible=True, dropout=0.1)
    with pytest.raises(ValueError, match="redraw_rotations"):
        keras_albert.AlbertBackbone(
            **tiny_backbone_config, reversible=True, attention="lsh",
            attention_kwargs={"redraw_rotations": True},
        )
    with pytest.raises(ValueError, match="ALBERT's blocks only"):
        keras_albert.AlbertBackbone(**tiny_backbone_config, reversible=True, bottleneck_dim=8)
