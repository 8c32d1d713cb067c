"""with_layer_groups: more weight groups, each started from the shared weights."""

import numpy as np
import pytest

import keras_albert
from tests.conftest import backbone_inputs


def encoder_kernels(backbone, owner):
    sublayer = backbone.encoder.attention_sublayers[owner]
    return [w.numpy() for w in sublayer.weights]


@pytest.mark.parametrize(
    "options, new_groups",
    [
        ({"num_layers": 4}, 4),
        ({"num_layers": 4}, 2),
        ({"num_layers": 4, "num_groups": 2}, 4),
        ({"num_layers": 4, "sharing": "attention"}, 4),
        ({"num_layers": 4, "num_inner_repetitions": 2}, 2),
        ({"num_layers": 4, "reversible": True}, 4),
    ],
    ids=["one_to_four", "one_to_two", "two_to_four", "attention_only", "inner_blocks", "reversible"],
)
def test_outputs_equal_and_groups_start_as_copies(tiny_backbone_config, options, new_groups):
    shared = keras_albert.AlbertBackbone(**{**tiny_backbone_config, **options})
    regrouped = keras_albert.with_layer_groups(shared, num_groups=new_groups)
    assert regrouped.num_groups == new_groups
    assert regrouped.get_config()["num_groups"] == new_groups
    assert regrouped.count_params() > shared.count_params()
    before, after = shared(backbone_inputs(12)), regrouped(backbone_inputs(12))
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(after[name], before[name], atol=1e-5)
    # Every layer's new group holds the weights of its old group, in
    # variables of its own: changing one group leaves the others.
    for old_layer, new_layer in zip(shared.encoder.plan, regrouped.encoder.plan):
        (old_owner, _), (new_owner, _) = old_layer[0], new_layer[0]
        for a, b in zip(encoder_kernels(regrouped, new_owner), encoder_kernels(shared, old_owner)):
            np.testing.assert_array_equal(a, b)
    first, last = "group_0_inner_0", f"group_{new_groups - 1}_inner_0"
    first_variable = regrouped.encoder.attention_sublayers[first].weights[0]
    last_before = encoder_kernels(regrouped, last)[0]
    first_variable.assign(first_variable.numpy() + 1.0)
    np.testing.assert_array_equal(encoder_kernels(regrouped, last)[0], last_before)
    # The original is untouched.
    np.testing.assert_allclose(shared(backbone_inputs(12))["sequence_output"], before["sequence_output"])


def test_same_number_of_groups_returns_the_backbone(tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config)
    assert keras_albert.with_layer_groups(backbone, num_groups=1) is backbone


def test_preset_round_trip_keeps_the_groups(tiny_backbone_config, tmp_path):
    shared = keras_albert.AlbertBackbone(**{**tiny_backbone_config, "num_layers": 4})
    regrouped = keras_albert.with_layer_groups(shared, num_groups=4)
    regrouped.save_to_preset(str(tmp_path / "preset"))
    loaded = keras_albert.AlbertBackbone.from_preset(str(tmp_path / "preset"))
    assert loaded.num_groups == 4
    np.testing.assert_allclose(
        loaded(backbone_inputs(12))["sequence_output"], shared(backbone_inputs(12))["sequence_output"], atol=1e-5
    )


def test_merging_groups_is_refused(tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**{**tiny_backbone_config, "num_layers": 4, "num_groups": 4})
    with pytest.raises(ValueError, match=r"`num_groups=2` would merge the weights of 'group_0_inner_0' and 'group_1_inner_0'"):
        keras_albert.with_layer_groups(backbone, num_groups=2)


def test_groups_that_straddle_old_groups_are_refused(tiny_backbone_config):
    # 6 layers: 2 groups are layers 0-2 and 3-5; 3 groups would put layers
    # 2 and 3 (old groups 0 and 1) together in group 1.
    backbone = keras_albert.AlbertBackbone(**{**tiny_backbone_config, "num_layers": 6, "num_groups": 2})
    with pytest.raises(ValueError, match="would merge the weights"):
        keras_albert.with_layer_groups(backbone, num_groups=3)


@pytest.mark.parametrize("bad", [0, -1, 2.0, "4", True, 3])
def test_bad_num_groups_is_refused(tiny_backbone_config, bad):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config)  # 2 layers
    with pytest.raises(ValueError, match="num_groups"):
        keras_albert.with_layer_groups(backbone, num_groups=bad)


def test_not_a_backbone_is_refused():
    with pytest.raises(ValueError, match="`backbone` must be a keras_albert.AlbertBackbone. Received: backbone=str"):
        keras_albert.with_layer_groups("albert_tiny_en", num_groups=4)
