"""The bundled albert_tiny_en preset loads offline and is a trained model."""

import json

import pytest

import keras_albert
from keras_albert.presets.preset_resolution import bundled_presets
from keras_albert.presets.preset_resolution import bundled_presets_dir

PRESET = bundled_presets_dir() / "albert_tiny_en"


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


def test_recorded_held_out_scores():
    metrics = json.loads((PRESET / "pretraining_metrics.json").read_text())
    heldout = metrics["heldout"]
    vocabulary = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en").vocabulary_size()
    assert heldout["mlm_accuracy"] > 50 / vocabulary
    assert heldout["sentence_order_accuracy"] > 0.55


@pytest.mark.large
def test_bundled_mlm_head_fills_masks_in_held_out_text():
    """The bundled heads are trained: on Persuasion (never seen in
    pretraining) the masked-LM beats the same model with random weights."""
    import keras

    from keras_albert import datasets

    paragraphs = [p for p in datasets.load_austen_novel("persuasion") if len(p.split()) >= 8][:96]

    def masked_accuracy(masked_lm):
        keras.utils.set_random_seed(0)  # the same masks for both models
        masked_lm.compile(weighted_metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
        return masked_lm.evaluate(paragraphs, batch_size=32, verbose=0, return_dict=True)["accuracy"]

    pretrained = keras_albert.AlbertMaskedLM.from_preset("albert_tiny_en")
    config = pretrained.backbone.get_config()
    random_init = keras_albert.AlbertMaskedLM(
        keras_albert.AlbertBackbone.from_config(config),
        preprocessor=keras_albert.AlbertMaskedLMPreprocessor.from_preset("albert_tiny_en"),
    )
    trained, untrained = masked_accuracy(pretrained), masked_accuracy(random_init)
    assert trained > 0.08 and trained > 5 * untrained, (trained, untrained)
