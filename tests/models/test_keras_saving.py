"""`model.save` and `keras.saving.load_model` resume training: each task
model comes back compiled with its own optimizer (state included), losses
and metrics, and its next step equals the saved model's.

Runs on every backend, TensorFlow not needed:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_keras_saving.py
"""

import warnings

import keras
import numpy as np
import pytest

import keras_albert


def _features(rows=2, length=8):
    rng = np.random.default_rng(0)
    return {"token_ids": rng.integers(5, 60, (rows, length)), "segment_ids": np.zeros((rows, length), "int32"),
            "padding_mask": np.ones((rows, length), "int32")}


def _classifier(backbone):
    return keras_albert.AlbertClassifier(backbone, num_classes=3, label_names=["a", "b", "c"], dropout=0.0), _features(), \
        np.array([0, 2])


def _masked_lm(backbone):
    x = dict(_features(), mask_positions=np.array([[1, 2], [3, 4]]))
    return keras_albert.AlbertMaskedLM(backbone), x, np.array([[7, 8], [9, 10]])


def _token_classifier(backbone):
    return keras_albert.AlbertTokenClassifier(backbone, num_classes=2, dropout=0.0), _features(), np.ones((2, 8), "int32")


@pytest.mark.parametrize("make", [_classifier, _masked_lm, _token_classifier])
def test_a_loaded_task_trains_on_as_the_saved_one(make, tmp_path, tiny_backbone_config):
    keras.utils.set_random_seed(0)
    model, x, y = make(keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=64, dropout=0.0)))
    model.compile(optimizer=keras.optimizers.AdamW(1e-2), loss="sparse_categorical_crossentropy",
                  weighted_metrics=["sparse_categorical_accuracy"])
    model.train_on_batch(x, y)
    model.save(tmp_path / "task.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "compile() was not called", "Skipping variable loading"
        loaded = keras.saving.load_model(tmp_path / "task.keras")
    assert type(loaded.optimizer).__name__ == "AdamW"
    assert int(loaded.optimizer.iterations) == 1
    after = model.train_on_batch(x, y, return_dict=True)
    resumed = loaded.train_on_batch(x, y, return_dict=True)
    assert set(resumed) == set(after)
    for name in after:
        np.testing.assert_allclose(resumed[name], after[name], rtol=1e-5, atol=1e-6)
    for saved, restored in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_allclose(restored, saved, rtol=1e-5, atol=1e-6)
