"""A SavedModel in the TF-Hub ALBERT encoder layout (Model Garden variable
names, per-head attention kernels, an `mlm` subobject) converts exactly.

TensorFlow only (TF-Hub modules are SavedModels); skipped without it.
"""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="TF-Hub modules are TensorFlow SavedModels")

import keras_albert  # noqa: E402
from keras_albert.convert.converted_preset import load_preset_model  # noqa: E402
from keras_albert.convert.tf1_names import get_model_weights  # noqa: E402
from keras_albert.convert.tfhub_module import HUB_MLM_NAMES  # noqa: E402
from keras_albert.convert.tfhub_module import HUB_NAMES  # noqa: E402
from keras_albert.convert.tfhub_module import convert_tfhub_module  # noqa: E402


def reference_pretrainer(config):
    backbone = keras_albert.AlbertBackbone(**config)
    model = keras_albert.AlbertPretrainer(backbone, sentence_task="none")
    rng = np.random.default_rng(0)
    for variable in model.weights:
        variable.assign(rng.normal(0, 0.2, variable.shape).astype("float32"))
    return model


class ReusableModule(tf.Module):
    # TF-Hub's reusable SavedModel API: plain lists (DESIGN.md section 11).
    variables = None
    trainable_variables = None


def write_hub_module(path, model, num_heads, with_mlm=True, extra=None):
    weights = get_model_weights(model)
    by_tf1 = {tf1: hub for hub, tf1 in HUB_NAMES + HUB_MLM_NAMES[:-1]}
    hidden = model.backbone.hidden_dim
    encoder, mlm = ReusableModule(), ReusableModule()
    encoder.variables, mlm.variables = [], []
    for tf1, array in weights.items():
        hub = by_tf1[tf1]
        # The Model Garden keeps attention per head.
        if "self_attention/" in hub and hub.endswith("kernel"):
            if "attention_output" in hub:
                array = array.reshape(num_heads, -1, hidden)
            else:
                array = array.reshape(hidden, num_heads, -1)
        elif "self_attention/" in hub and "attention_output" not in hub:
            array = array.reshape(num_heads, -1)
        variable = tf.Variable(array, name=hub)
        (mlm.variables if hub.startswith("cls/") else encoder.variables).append(variable)
    for name, array in (extra or {}).items():
        encoder.variables.append(tf.Variable(array, name=name))
    encoder.trainable_variables = list(encoder.variables)
    if with_mlm:
        mlm.trainable_variables = list(mlm.variables)
        encoder.mlm = mlm
    tf.saved_model.save(encoder, str(path))


@pytest.fixture()
def config(tiny_backbone_config):
    return dict(tiny_backbone_config)


@pytest.mark.large
def test_hub_module_converts_exactly(tmp_path, config):
    model = reference_pretrainer(config)
    write_hub_module(tmp_path / "hub", model, config["num_heads"])
    convert_tfhub_module(
        tmp_path / "hub", tmp_path / "preset", overrides={"num_layers": config["num_layers"]}
    )
    ours = load_preset_model(tmp_path / "preset")
    expected, got = get_model_weights(model), get_model_weights(ours)
    assert sorted(expected) == sorted(got)
    for name in expected:
        np.testing.assert_array_equal(expected[name], got[name], err_msg=name)
    features = {
        "token_ids": np.array([[2, 5, 6, 7, 3, 0]], "int32"),
        "segment_ids": np.zeros((1, 6), "int32"),
        "padding_mask": np.array([[1, 1, 1, 1, 1, 0]], "int32"),
        "mask_positions": np.array([[1, 2]], "int32"),
    }
    np.testing.assert_allclose(
        ours.predict(features, verbose=0)["mlm"],
        model.predict(features, verbose=0)["mlm"],
        atol=1e-5,
    )


def test_encoder_without_mlm_gives_a_backbone(tmp_path, config):
    model = reference_pretrainer(config)
    write_hub_module(tmp_path / "hub", model, config["num_heads"], with_mlm=False)
    convert_tfhub_module(
        tmp_path / "hub", tmp_path / "preset", overrides={"num_layers": config["num_layers"]}
    )
    assert isinstance(load_preset_model(tmp_path / "preset"), keras_albert.AlbertBackbone)


def test_unknown_depth_and_unexpected_variables_are_reported(tmp_path, config):
    model = reference_pretrainer(config)
    write_hub_module(
        tmp_path / "hub", model, config["num_heads"],
        extra={"transformer/mystery/kernel": np.zeros(3, "float32")},
    )
    with pytest.raises(ValueError, match="num_layers"):
        convert_tfhub_module(tmp_path / "hub", tmp_path / "preset")
    with pytest.raises(ValueError, match="transformer/mystery/kernel"):
        convert_tfhub_module(
            tmp_path / "hub", tmp_path / "preset", overrides={"num_layers": 2}
        )
    assert not (tmp_path / "preset").exists()
