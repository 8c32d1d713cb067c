import keras
import keras_hub
import numpy as np
import pytest

import keras_albert
from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights
from keras_albert.convert.tf1_names import set_backbone_weights
from tests.harness import run_backbone_test


def _inputs(batch=3, length=12, vocabulary_size=100, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch, length), "int32")
    mask[1, length // 2 :] = 0
    return {
        "token_ids": rng.integers(0, vocabulary_size, (batch, length)).astype("int32"),
        "segment_ids": rng.integers(0, 2, (batch, length)).astype("int32"),
        "padding_mask": mask,
    }


@pytest.mark.parametrize(
    "name",
    [
        # Building the two largest (59M and 223M parameters) takes seconds.
        pytest.param(name, marks=pytest.mark.large) if "extra" in name else name
        for name in sorted(keras_albert.OFFICIAL_PRESETS)
    ],
)
def test_official_configs_have_published_parameter_counts(name):
    preset = keras_albert.OFFICIAL_PRESETS[name]
    backbone = keras_albert.AlbertBackbone(**preset["config"])
    assert backbone.count_params() == preset["params"]


def test_outputs_and_shapes(tiny_backbone_config):
    # Serialization, predict on arrays and tf.data, shorter sequences, a
    # from_config clone with the same weights, mixed precision (float16 and
    # bfloat16 outputs, float32 weights, finite values).
    backbone = run_backbone_test(
        keras_albert.AlbertBackbone,
        tiny_backbone_config,
        _inputs(vocabulary_size=100),
        {
            "sequence_output": (3, 12, 32),
            "pooled_output": (3, 32),
            "encoder_outputs": [(3, 12, 32)] * 2,
        },
    )
    outputs = backbone(_inputs(vocabulary_size=100))
    np.testing.assert_array_equal(
        outputs["encoder_outputs"][-1], outputs["sequence_output"]
    )


def test_config_round_trip_rebuilds_identical_model(tiny_backbone_config):
    config = dict(tiny_backbone_config, num_layers=5, num_groups=2, sharing="attention")
    run_backbone_test(
        keras_albert.AlbertBackbone,
        config,
        _inputs(),
        {
            "sequence_output": (3, 12, 32),
            "pooled_output": (3, 32),
            "encoder_outputs": [(3, 12, 32)] * 5,
        },
        run_precision_check=False,
    )


@pytest.mark.parametrize(
    "sharing,blocks,attention,ffn",
    [("all", 1, 1, 1), ("none", 12, 12, 12), ("attention", None, 1, 12), ("ffn", None, 12, 1)],
)
def test_weight_counts_per_sharing_strategy(sharing, blocks, attention, ffn):
    config = dict(
        vocabulary_size=50, num_layers=12, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, sharing=sharing,
    )
    backbone = keras_albert.AlbertBackbone(**config)
    encoder = backbone.encoder
    assert len(encoder.attention_sublayers) == attention
    assert len(encoder.feed_forward_sublayers) == ffn
    attention_params = encoder.attention_sublayers[next(iter(encoder.attention_sublayers))].count_params()
    ffn_params = encoder.feed_forward_sublayers[next(iter(encoder.feed_forward_sublayers))].count_params()
    outside = backbone.embeddings.count_params() + backbone.pooler.count_params()
    assert backbone.count_params() == outside + attention * attention_params + ffn * ffn_params


def test_uneven_groups_route_like_google():
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=50, num_layers=12, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, num_groups=5,
    )
    routed = [owners[0][0] for owners in backbone.encoder.plan]
    assert routed == [f"group_{int(l / 12 * 5)}_inner_0" for l in range(12)]
    assert len(backbone.encoder.attention_sublayers) == 5


@pytest.mark.parametrize("num_groups,inner", [(1, 1), (2, 2)])
def test_parity_with_keras_hub_on_copied_weights(num_groups, inner):
    config = dict(
        vocabulary_size=100, num_layers=4, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, num_groups=num_groups,
        num_inner_repetitions=inner, max_sequence_length=16,
    )
    theirs = keras_hub.models.AlbertBackbone(**config)
    ours = keras_albert.AlbertBackbone(**config)
    set_backbone_weights(ours, keras_hub_backbone_weights(theirs))
    x = _inputs()
    a, b = theirs(x), ours(x)
    for key in ("sequence_output", "pooled_output"):
        assert np.abs(np.asarray(a[key]) - np.asarray(b[key])).max() <= 1e-5


def test_bert_is_a_config():
    bert = keras_albert.AlbertBackbone(
        vocabulary_size=50, num_layers=3, num_heads=2, embedding_dim=16,
        hidden_dim=16, intermediate_dim=32, sharing="none",
    )
    assert len(bert.encoder.attention_sublayers) == 3
    assert bert(_inputs(vocabulary_size=50))["sequence_output"].shape[-1] == 16


@pytest.mark.large
def test_train_step_compiles_with_xla(tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, dropout=0.1))
    pooled = backbone.output["pooled_output"]
    model = keras.Model(backbone.input, keras.layers.Dense(1)(pooled))
    model.compile("adam", "mse", jit_compile=True)
    x = _inputs(batch=4)
    history = model.fit(x, np.ones((4, 1)), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize(
    "override,message",
    [
        (dict(hidden_dim=30, num_heads=4), "divisible by `num_heads`"),
        (dict(num_groups=3), "num_groups"),
        (dict(sharing="half"), "sharing"),
        (dict(dropout=-0.1), "dropout"),
        (dict(vocabulary_size=0), "vocabulary_size"),
    ],
)
def test_bad_backbone_arguments(tiny_backbone_config, override, message):
    with pytest.raises(ValueError, match=message):
        keras_albert.AlbertBackbone(**dict(tiny_backbone_config, **override))


def test_too_long_sequences_fail_clearly(tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config)
    with pytest.raises(ValueError, match="max_sequence_length=32"):
        backbone(_inputs(length=40))

