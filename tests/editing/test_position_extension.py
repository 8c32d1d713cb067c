"""extend_positions: longer inputs for any backbone, tiled positions."""

import numpy as np
import pytest

import keras_albert
from keras_albert.editing.position_extension import tiled_positions
from tests.conftest import backbone_inputs as inputs


def position_table(backbone):
    (table,) = [v for v in backbone.weights if v.path.endswith("position_embeddings")]
    return table.numpy()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"embedding_type": "trigram", "normalization": "no_norm"},
        {"attention": "lsh", "lsh_num_buckets": 4, "lsh_chunk_length": 8, "lsh_seed": 1},
        {"sharing": "none", "num_groups": 2},
    ],
    ids=["factorized", "trigram", "lsh", "unshared"],
)
def test_outputs_equal_on_first_positions_and_rows_tiled(tiny_backbone_config, options):
    short = keras_albert.AlbertBackbone(**tiny_backbone_config, **options)
    long = keras_albert.extend_positions(short, max_sequence_length=100)
    assert long.max_sequence_length == 100
    assert long.get_config()["max_sequence_length"] == 100
    assert short.max_sequence_length == 32  # the original is untouched
    for length in (7, 32):
        expected = short(inputs(length))
        actual = long(inputs(length))
        for key in ("sequence_output", "pooled_output"):
            np.testing.assert_array_equal(actual[key], expected[key])
    learned, tiled = position_table(short), position_table(long)
    assert tiled.shape == (100, learned.shape[1])
    for row in range(100):
        np.testing.assert_array_equal(tiled[row], learned[row % 32])
    others = {v.path: v.numpy() for v in short.weights if not v.path.endswith("position_embeddings")}
    for variable in long.weights:
        if variable.path in others:
            np.testing.assert_array_equal(variable.numpy(), others[variable.path])
    assert len(others) == len(long.weights) - 1
    # Longer inputs now run (the short backbone refuses them).
    assert long(inputs(80))["sequence_output"].shape == (2, 80, 32)


def test_preset_round_trip_keeps_the_new_length(tmp_path, tiny_backbone_config):
    long = keras_albert.extend_positions(
        keras_albert.AlbertBackbone(**tiny_backbone_config), max_sequence_length=64
    )
    long.save_to_preset(str(tmp_path))
    restored = keras_albert.AlbertBackbone.from_preset(str(tmp_path))
    assert restored.max_sequence_length == 64
    np.testing.assert_array_equal(position_table(restored), position_table(long))
    np.testing.assert_array_equal(
        restored(inputs(64))["sequence_output"], long(inputs(64))["sequence_output"]
    )


def test_bundled_preset_extends_to_long_inputs():
    short = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    long = keras_albert.extend_positions(short, max_sequence_length=300)
    x = inputs(128)
    x["token_ids"] = x["token_ids"] % 100 + 5
    np.testing.assert_array_equal(long(x)["sequence_output"], short(x)["sequence_output"])
    np.testing.assert_array_equal(position_table(long)[256:300], position_table(short)[:44])


def test_tiled_positions_wraps_rows():
    table = np.arange(8).reshape(4, 2)
    np.testing.assert_array_equal(tiled_positions(table, 4), table)
    np.testing.assert_array_equal(tiled_positions(table, 9)[:, 0], [0, 2, 4, 6, 0, 2, 4, 6, 0])


def test_rejects_bad_arguments(tiny_backbone_config):
    short = keras_albert.AlbertBackbone(**tiny_backbone_config)
    with pytest.raises(ValueError, match="at least the backbone's"):
        keras_albert.extend_positions(short, max_sequence_length=16)
    with pytest.raises(ValueError, match="max_sequence_length"):
        keras_albert.extend_positions(short, max_sequence_length=0)
    with pytest.raises(ValueError, match="AlbertBackbone"):
        keras_albert.extend_positions("albert_tiny_en", max_sequence_length=64)
