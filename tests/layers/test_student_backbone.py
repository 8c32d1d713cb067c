"""MobileBERT-style options of AlbertBackbone: sizes, sharing, presets, defaults."""

import json

import numpy as np
import pytest

import keras_albert
from keras_albert.layers import AlbertBottleneckAttentionSublayer
from keras_albert.layers import AlbertTrigramEmbedding
from keras_albert.layers import NoNorm
from keras_albert.presets.preset_resolution import bundled_presets_dir
from tests.harness import run_preset_round_trip

STUDENT = dict(
    vocabulary_size=60, num_layers=4, num_heads=2, embedding_dim=8, hidden_dim=16,
    intermediate_dim=12, bottleneck_dim=8, num_feedforward_stacks=2,
    embedding_type="trigram", normalization="no_norm", activation="relu",
    max_sequence_length=16,
)


def _inputs(batch=2, length=10, vocabulary_size=60):
    rng = np.random.default_rng(0)
    mask = np.ones((batch, length), "int32")
    mask[1, length // 2:] = 0
    return {
        "token_ids": rng.integers(0, vocabulary_size, (batch, length)).astype("int32"),
        "segment_ids": np.zeros((batch, length), "int32"),
        "padding_mask": mask,
    }


@pytest.mark.large
def test_mobilebert_sized_config_has_about_25m_parameters():
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=30522, num_layers=24, num_heads=4, embedding_dim=128,
        hidden_dim=512, intermediate_dim=512, bottleneck_dim=128,
        num_feedforward_stacks=4, embedding_type="trigram", normalization="no_norm",
        activation="relu", sharing="none")
    # MobileBERT's paper reports 25.3M; the difference is its heads/pooler
    # bookkeeping. Counted here: 24,844,544 (pooler included).
    assert backbone.count_params() == 24_844_544
    assert abs(backbone.count_params() - 25.3e6) / 25.3e6 < 0.03


@pytest.mark.parametrize(
    "sharing,attention,ffn",
    [("all", 2 * 2, 2 * 2), ("attention", 2 * 2, 4 * 2), ("ffn", 4 * 2, 2 * 2), ("none", 8, 8)],
)
def test_students_share_parameters_like_albert(sharing, attention, ffn):
    backbone = keras_albert.AlbertBackbone(
        **dict(STUDENT, num_groups=2, num_inner_repetitions=2, sharing=sharing))
    encoder = backbone.encoder
    assert len(encoder.attention_sublayers) == attention
    assert len(encoder.feed_forward_sublayers) == ffn
    assert all(isinstance(s, AlbertBottleneckAttentionSublayer)
               for s in encoder.attention_sublayers.values())
    one_attention = next(iter(encoder.attention_sublayers.values())).count_params()
    one_ffn = next(iter(encoder.feed_forward_sublayers.values())).count_params()
    outside = backbone.embeddings.count_params() + backbone.pooler.count_params()
    assert backbone.count_params() == outside + attention * one_attention + ffn * one_ffn
    outputs = backbone(_inputs())
    assert outputs["sequence_output"].shape == (2, 10, 16)
    assert len(outputs["encoder_outputs"]) == 4


def test_distillation_outputs_leave_normal_outputs_unchanged():
    for config in (STUDENT, dict(STUDENT, bottleneck_dim=None, num_feedforward_stacks=1,
                                 embedding_type="factorized", normalization="layer_norm",
                                 activation="gelu_approximate")):
        backbone = keras_albert.AlbertBackbone(**config)
        x = _inputs()
        outputs = backbone(x)
        intermediate = backbone.distillation_outputs(x)
        for mine, theirs in zip(intermediate["encoder_outputs"], outputs["encoder_outputs"]):
            # Equal bits on TensorFlow; XLA (JAX) fuses the two graphs apart
            # and may round one float32 ulp differently.
            np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)
        probabilities = intermediate["attention_probabilities"]
        assert len(probabilities) == 4 and probabilities[0].shape == (2, 2, 10, 10)
        # Padded keys get no attention.
        assert np.all(np.asarray(probabilities[-1])[1, :, :, 5:] == 0.0)


def test_student_preset_round_trip(tmp_path):
    backbone = keras_albert.AlbertBackbone(**dict(STUDENT, num_groups=2))
    restored = run_preset_round_trip(backbone, tmp_path, _inputs(), atol=0)
    assert isinstance(restored.embeddings, AlbertTrigramEmbedding)


def test_existing_configs_build_albert_unchanged():
    # A config as presets were written before these options existed.
    config = json.loads((bundled_presets_dir() / "albert_tiny_en" / "config.json").read_text())["config"]
    for key in ("normalization", "bottleneck_dim", "num_feedforward_stacks", "embedding_type",
                "reversible"):
        config.pop(key, None)
    backbone = keras_albert.AlbertBackbone.from_config(config)
    assert not backbone.encoder.uses_bottleneck_blocks
    assert not any(isinstance(layer, NoNorm) for layer in backbone._flatten_layers())
    assert backbone.count_params() == 1_929_472
    assert backbone.get_config()["embedding_type"] == "factorized"
    # Same weights, same names, same order as before: presets load as ever.
    paths = [w.path for w in backbone.weights]
    assert paths[:5] == [
        "embeddings/position_embeddings", "embeddings/token_embedding/embeddings",
        "embeddings/segment_embedding/embeddings", "embeddings/layer_norm/gamma",
        "embeddings/layer_norm/beta",
    ]


def test_bad_student_options_name_themselves():
    with pytest.raises(ValueError, match="embedding_type"):
        keras_albert.AlbertBackbone(**dict(STUDENT, embedding_type="bigram"))
    with pytest.raises(ValueError, match="normalization"):
        keras_albert.AlbertBackbone(**dict(STUDENT, normalization="rms"))
    with pytest.raises(ValueError, match="bottleneck_dim"):
        keras_albert.AlbertBackbone(**dict(STUDENT, bottleneck_dim=7))
    with pytest.raises(ValueError, match="attention"):
        keras_albert.AlbertBackbone(**dict(STUDENT, attention="lsh"))
