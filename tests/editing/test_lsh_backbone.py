"""LSH attention through AlbertBackbone: arguments, presets, warm start."""

import numpy as np
import pytest

import keras_albert
from keras_albert.editing.lsh_warm_start import lsh_backbone_from

LSH = dict(lsh_num_hashes=2, lsh_num_buckets=4, lsh_chunk_length=8, lsh_seed=3)


def inputs(length=32):
    rng = np.random.default_rng(0)
    mask = np.ones((2, length), "int32")
    mask[1, 20:] = 0
    return {
        "token_ids": rng.integers(5, 120, (2, length)).astype("int32"),
        "segment_ids": np.zeros((2, length), "int32"),
        "padding_mask": mask,
    }


@pytest.mark.parametrize("sharing", ["all", "attention", "ffn", "none"])
def test_lsh_backbones_round_trip_through_presets(tmp_path, tiny_backbone_config, sharing):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config, sharing=sharing, attention="lsh", **LSH)
    assert backbone.get_config()["attention_kwargs"] == {
        "num_hashes": 2, "num_buckets": 4, "chunk_length": 8, "seed": 3
    }
    backbone.save_to_preset(str(tmp_path))
    restored = keras_albert.AlbertBackbone.from_preset(str(tmp_path))
    np.testing.assert_array_equal(
        restored(inputs())["sequence_output"], backbone(inputs())["sequence_output"]
    )


def test_lsh_arguments_need_lsh_attention(tiny_backbone_config):
    with pytest.raises(ValueError, match="need attention='lsh'"):
        keras_albert.AlbertBackbone(**tiny_backbone_config, lsh_num_hashes=2)


def test_warm_start_from_full_attention(tiny_backbone_config):
    full = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, num_layers=3, num_groups=2))
    lsh = lsh_backbone_from(full, **LSH)
    full_weights = {v.path: v.numpy() for v in full.weights}
    copied = [v for v in lsh.weights if not v.path.endswith("rotations")]
    assert len(copied) == len(full.weights) - 2 * 2  # two groups drop key kernel + bias
    for variable in copied:
        np.testing.assert_array_equal(variable.numpy(), full_weights[variable.path])
    outputs = lsh(inputs())["sequence_output"]
    assert np.isfinite(outputs).all()
    with pytest.raises(ValueError, match="must use full attention"):
        lsh_backbone_from(lsh)
