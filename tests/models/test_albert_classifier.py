import keras
import numpy as np
import pytest

import keras_albert
from tests.harness import run_serialization_test


def _marker_task(count=256, length=12, num_classes=4, seed=0):
    """Label = which of `num_classes` marker tokens (5..8) the text holds."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(10, 60, (count, length)).astype("int32")
    labels = rng.integers(0, num_classes, count).astype("int32")
    positions = rng.integers(1, length, count)
    token_ids[np.arange(count), positions] = 5 + labels
    token_ids[:, 0] = 2
    x = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": np.ones_like(token_ids),
    }
    return x, labels


def _backbone(tiny_backbone_config, **overrides):
    return keras_albert.AlbertBackbone(**dict(tiny_backbone_config, **overrides))


@pytest.mark.large
def test_classifier_learns_a_synthetic_task(tiny_backbone_config):
    keras.utils.set_random_seed(0)
    classifier = keras_albert.AlbertClassifier(
        _backbone(tiny_backbone_config), num_classes=4, dropout=0.0
    )
    classifier.compile(optimizer=keras.optimizers.Adam(3e-3))
    x, y = _marker_task()
    classifier.fit(x, y, batch_size=32, epochs=15, verbose=0)
    accuracy = (np.argmax(classifier.predict(x, verbose=0), -1) == y).mean()
    assert accuracy >= 0.97


@pytest.mark.large
def test_regression_outputs_are_not_squashed(tiny_backbone_config):
    keras.utils.set_random_seed(1)
    regressor = keras_albert.AlbertClassifier(
        _backbone(tiny_backbone_config), num_classes=1, dropout=0.0
    )
    assert regressor.is_regression
    regressor.compile(optimizer=keras.optimizers.Adam(3e-3))
    assert isinstance(regressor.loss, keras.losses.MeanSquaredError)
    x, labels = _marker_task(num_classes=3)
    # STS-B-like targets on a 0..5 scale, far outside any squashing range.
    y = (labels * 2.5).astype("float32")[:, None]
    regressor.fit(x, y, batch_size=32, epochs=20, verbose=0)
    predictions = regressor.predict(x, verbose=0)
    assert predictions.shape == (256, 1)
    assert predictions.max() > 3.0
    assert np.abs(predictions - y).mean() < 0.6


def test_classifier_config_round_trip(tiny_backbone_config):
    classifier = keras_albert.AlbertClassifier(
        _backbone(tiny_backbone_config), num_classes=3, dropout=0.2
    )
    run_serialization_test(classifier)


@pytest.mark.parametrize(
    "kwargs,message",
    [(dict(num_classes=0), "num_classes"), (dict(num_classes=2, dropout=2.0), "dropout")],
)
def test_bad_classifier_arguments(tiny_backbone_config, kwargs, message):
    with pytest.raises(ValueError, match=message):
        keras_albert.AlbertClassifier(_backbone(tiny_backbone_config), **kwargs)


@pytest.mark.large
def test_masked_lm_learns_to_copy_neighbours(tiny_backbone_config):
    keras.utils.set_random_seed(2)
    backbone = _backbone(tiny_backbone_config)
    masked_lm = keras_albert.AlbertMaskedLM(backbone)
    masked_lm.compile(optimizer=keras.optimizers.Adam(3e-3))
    rng = np.random.default_rng(0)
    # Every sequence repeats one token; the masked positions must predict it.
    values = rng.integers(10, 60, 256)
    token_ids = np.repeat(values[:, None], 12, axis=1).astype("int32")
    mask_positions = np.stack([rng.choice(np.arange(1, 12), 2, replace=False) for _ in values])
    targets = token_ids[np.arange(256)[:, None], mask_positions]
    token_ids[np.arange(256)[:, None], mask_positions] = 4  # [MASK]
    x = {
        "token_ids": token_ids,
        "segment_ids": np.zeros_like(token_ids),
        "padding_mask": np.ones_like(token_ids),
        "mask_positions": mask_positions.astype("int32"),
    }
    weights = np.ones_like(targets, "float32")
    history = masked_lm.fit(x, targets, sample_weight=weights, batch_size=16, epochs=15, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    logits = masked_lm.predict(x, verbose=0)
    assert logits.shape == (256, 2, tiny_backbone_config["vocabulary_size"])
    # Chance is 1 in 50; the model must have learned to copy.
    assert (logits.argmax(-1) == targets).mean() > 0.5


@pytest.mark.large
def test_masked_lm_ignores_padded_predictions(tiny_backbone_config):
    masked_lm = keras_albert.AlbertMaskedLM(_backbone(tiny_backbone_config))
    masked_lm.compile()
    x = {
        "token_ids": np.full((2, 8), 7, "int32"),
        "segment_ids": np.zeros((2, 8), "int32"),
        "padding_mask": np.ones((2, 8), "int32"),
        "mask_positions": np.array([[1, 0], [2, 0]], "int32"),
    }
    y = np.array([[7, 0], [7, 0]])
    base = masked_lm.evaluate(x, y, sample_weight=np.array([[1.0, 0.0], [1.0, 0.0]]), verbose=0)
    y_other = np.array([[7, 50], [7, 51]])
    other = masked_lm.evaluate(x, y_other, sample_weight=np.array([[1.0, 0.0], [1.0, 0.0]]), verbose=0)
    # Labels at weight-0 positions change nothing: loss averages real masks only.
    np.testing.assert_allclose(base[0], other[0], rtol=1e-5)
