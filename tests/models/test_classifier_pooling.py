"""AlbertClassifier(pooling="mean"): the head reads the average of the real
tokens' outputs instead of the pooled [CLS]."""

import keras
import numpy as np
import pytest

import keras_albert
from tests.harness import run_preset_round_trip
from tests.harness import run_serialization_test
from tests.harness import run_task_test


def _inputs(tiny_backbone_config, lengths=(5, 9), width=12, seed=0):
    rng = np.random.default_rng(seed)
    vocabulary = tiny_backbone_config["vocabulary_size"]
    token_ids = np.zeros((len(lengths), width), "int32")
    padding_mask = np.zeros((len(lengths), width), "int32")
    for row, length in enumerate(lengths):
        token_ids[row, :length] = rng.integers(5, vocabulary, length)
        padding_mask[row, :length] = 1
    return {"token_ids": token_ids, "segment_ids": np.zeros_like(token_ids), "padding_mask": padding_mask}


def _classifier(tiny_backbone_config, **kwargs):
    keras.utils.set_random_seed(0)
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config)
    return keras_albert.AlbertClassifier(backbone, num_classes=3, dropout=0.0, **kwargs)


def test_mean_pooling_averages_the_real_tokens_outputs(tiny_backbone_config):
    classifier = _classifier(tiny_backbone_config, pooling="mean")
    x = _inputs(tiny_backbone_config)
    sequence = np.asarray(classifier.backbone(x)["sequence_output"])
    mask = x["padding_mask"][..., None].astype("float32")
    mean = (sequence * mask).sum(1) / mask.sum(1)
    kernel, bias = classifier.output_dense.get_weights()
    np.testing.assert_allclose(np.asarray(classifier(x)), mean @ kernel + bias, atol=1e-5)
    # The default still reads the pooled [CLS] output.
    cls = _classifier(tiny_backbone_config)
    pooled = np.asarray(cls.backbone(x)["pooled_output"])
    kernel, bias = cls.output_dense.get_weights()
    np.testing.assert_allclose(np.asarray(cls(x)), pooled @ kernel + bias, atol=1e-5)


def test_mean_pooling_ignores_padding(tiny_backbone_config):
    classifier = _classifier(tiny_backbone_config, pooling="mean")
    short = _inputs(tiny_backbone_config, lengths=(5,), width=8)
    padded = {name: np.pad(value, ((0, 0), (0, 16))) for name, value in short.items()}
    padded["token_ids"][0, 8:] = 7  # whatever sits under the padding
    np.testing.assert_allclose(np.asarray(classifier(short)), np.asarray(classifier(padded)), atol=1e-5)


def test_pooling_is_saved_in_the_config_and_the_preset(tiny_backbone_config, tmp_path):
    classifier = _classifier(tiny_backbone_config, pooling="mean")
    assert classifier.get_config()["pooling"] == "mean"
    run_serialization_test(classifier)
    restored = run_preset_round_trip(classifier, tmp_path / "preset", _inputs(tiny_backbone_config))
    assert restored.pooling == "mean"


@pytest.mark.parametrize("pooling", ["max", "CLS", None, ["mean"]])
def test_unknown_pooling_is_refused_by_name(tiny_backbone_config, pooling):
    with pytest.raises(ValueError, match=r"`pooling` must be one of \('cls', 'mean'\)"):
        _classifier(tiny_backbone_config, pooling=pooling)


def test_a_mean_pooling_classifier_keeps_the_task_contract(tiny_backbone_config):
    # predict on arrays and datasets, fit, serialization, compile checks.
    backbone = keras_albert.AlbertBackbone(**tiny_backbone_config)
    x = _inputs(tiny_backbone_config, lengths=(5, 9, 12, 3))
    run_task_test(
        keras_albert.AlbertClassifier,
        {"backbone": backbone, "num_classes": 3, "pooling": "mean"},
        (x, np.array([0, 2, 1, 2])),
        expected_output_shape=(4, 3),
    )


def test_training_moves_the_backbone_through_the_mean(tiny_backbone_config):
    classifier = _classifier(tiny_backbone_config, pooling="mean")
    classifier.compile(optimizer=keras.optimizers.SGD(0.5))
    x = _inputs(tiny_backbone_config)
    before = {v.path: np.array(v) for v in classifier.trainable_variables}
    classifier.fit(x, np.array([0, 2]), batch_size=2, epochs=1, verbose=0)
    moved = {v.path for v in classifier.trainable_variables if not np.allclose(np.array(v), before[v.path])}
    # The unused [CLS] pooler stays put, and the key bias, which softmax
    # cancels whatever the pooling.
    still = {path for path in before if path not in moved}
    assert {path for path in before if "pooler" in path} <= still
    assert all("pooler" in path or path.endswith("key/bias") for path in still), still
    assert any("logits" in path for path in moved) and any("embedding" in path for path in moved)
