"""Task, preprocessor, tokenizer and backbone through one preset directory."""

import json

import numpy as np
import pytest

import keras_albert
from tests.harness import run_preset_round_trip
from tests.harness import run_task_test


@pytest.fixture(scope="module")
def classifier(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=16
    )
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
    )
    model = keras_albert.AlbertClassifier(backbone, num_classes=3, preprocessor=preprocessor)
    model.compile()
    model.fit(["the cat sleeps", "a dog runs", "emma walks"], [0, 1, 2], epochs=1, verbose=0)
    return model


TEXTS = ["The cat sleeps in the garden.", "", "Émma's  letter"]


def test_classifier_preset_round_trip(tmp_path, classifier):
    classifier.save_to_preset(str(tmp_path))
    files = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    assert {"config.json", "task.json", "preprocessor.json", "tokenizer.json"} <= files
    assert json.loads((tmp_path / "task.json").read_text())["registered_name"] == (
        "keras_albert>AlbertClassifier"
    )
    restored = keras_albert.AlbertClassifier.from_preset(str(tmp_path))
    assert isinstance(restored.preprocessor, keras_albert.AlbertTextClassifierPreprocessor)
    assert isinstance(restored.preprocessor.tokenizer, keras_albert.AlbertTokenizer)
    np.testing.assert_allclose(
        restored.predict(TEXTS, verbose=0), classifier.predict(TEXTS, verbose=0), atol=1e-6
    )
    # Each role also loads on its own from the same directory.
    assert keras_albert.AlbertBackbone.from_preset(str(tmp_path)).num_layers == 2
    tokenizer = keras_albert.AlbertTokenizer.from_preset(str(tmp_path))
    assert tokenizer.vocabulary_size() == classifier.preprocessor.tokenizer.vocabulary_size()
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(str(tmp_path))
    assert preprocessor.sequence_length == 16


def test_new_head_from_a_preset(tmp_path, classifier):
    classifier.save_to_preset(str(tmp_path))
    fresh = keras_albert.AlbertClassifier.from_preset(str(tmp_path), num_classes=5)
    assert fresh.predict(TEXTS, verbose=0).shape == (3, 5)
    np.testing.assert_array_equal(
        fresh.backbone.token_embedding.embeddings.numpy(),
        classifier.backbone.token_embedding.embeddings.numpy(),
    )


def test_pairs_and_empty_strings_predict(classifier):
    pairs = classifier.predict((["the cat", ""], ["a dog", ""]), verbose=0)
    singles = classifier.predict(["the cat", ""], verbose=0)
    assert pairs.shape == singles.shape == (2, 3)
    assert np.isfinite(pairs).all()
    assert not np.allclose(pairs[0], singles[0])


def test_masked_lm_preset_round_trip(tmp_path, sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    preprocessor = keras_albert.AlbertMaskedLMPreprocessor(tokenizer, sequence_length=16)
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
    )
    masked_lm = keras_albert.AlbertMaskedLM(backbone, preprocessor=preprocessor)
    x = {
        "token_ids": np.array([[2, 10, 4, 11, 3]], "int32"),
        "segment_ids": np.zeros((1, 5), "int32"),
        "padding_mask": np.ones((1, 5), "int32"),
        "mask_positions": np.array([[2]], "int32"),
    }
    run_preset_round_trip(masked_lm, tmp_path, x)


@pytest.mark.large
def test_classifier_task_contract(sentencepiece_proto, tiny_backbone_config):
    # predict/fit on raw strings, on tf.data and with preprocessing split
    # out; serialization; compile=False refuses to fit.
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    init_kwargs = dict(
        backbone=keras_albert.AlbertBackbone(
            **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
        ),
        num_classes=3,
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
    )
    train_data = (["the cat sleeps", "a dog runs", "emma walks", ""], np.array([0, 1, 2, 0]))
    run_task_test(keras_albert.AlbertClassifier, init_kwargs, train_data, (4, 3))
