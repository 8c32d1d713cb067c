"""The bundled albert_tiny_en preset loads offline and is a trained model."""

import json
import pathlib

import keras_albert
from keras_albert.models.preset_resolution import bundled_presets

PRESET = pathlib.Path(__file__).resolve().parents[2] / "saved_models" / "albert_tiny_en"


def test_albert_tiny_en_is_bundled():
    assert "albert_tiny_en" in bundled_presets()
    assert "albert_tiny_en" in keras_albert.list_presets()


def test_loads_by_name_without_network(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "create_connection", no_network)
    classifier = keras_albert.AlbertClassifier.from_preset("albert_tiny_en", num_classes=3)
    probabilities = classifier.predict(["Anne Elliot walked to Uppercross."], verbose=0)
    assert probabilities.shape == (1, 3)


def test_masked_lm_predicts_better_than_chance_on_held_out_text():
    """Pretrained weights, not random ones: the MLM head scores real text."""
    metrics = json.loads((PRESET / "pretraining_metrics.json").read_text())
    heldout = metrics["heldout"]
    vocabulary = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en").vocabulary_size()
    assert heldout["mlm_accuracy"] > 50 / vocabulary
    assert heldout["sentence_order_accuracy"] > 0.55
