"""The serving SavedModel outputs class names beside the probabilities when
the task has `label_names`, and class ids only when it has none (presets
saved before names existed)."""

import json

import numpy as np
import pytest
import tensorflow as tf

import keras_albert
from keras_albert.export import export_serving_saved_model
from keras_albert.publishing.task_loading import load_task

TEXTS = ["the cat sleeps.", "Emma walks slowly to the garden", "", "dog " * 40]
NAMES = ["animal", "person", "place", "time"]


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


def _backbone(tokenizer, config):
    return keras_albert.AlbertBackbone(**dict(config, vocabulary_size=tokenizer.vocabulary_size()))


def _serve(path):
    return tf.saved_model.load(str(path)).signatures["serving_default"]


@pytest.mark.large
def test_classifier_serves_the_argmax_name(tmp_path, tokenizer, tiny_backbone_config):
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    classifier = keras_albert.AlbertClassifier(
        _backbone(tokenizer, tiny_backbone_config), num_classes=4, preprocessor=preprocessor,
        label_names=NAMES,
    )
    export_serving_saved_model(classifier, tmp_path / "serving", check_texts=TEXTS)
    out = _serve(tmp_path / "serving")(text=tf.constant(TEXTS))
    expected = [NAMES[i] for i in classifier.predict(TEXTS, verbose=0).argmax(-1)]
    assert [name.decode() for name in out["labels"].numpy()] == expected
    assert out["labels"].dtype == tf.string
    assert [NAMES[i] for i in out["probabilities"].numpy().argmax(-1)] == expected


@pytest.mark.large
def test_a_preset_without_names_exports_ids_only(tmp_path, tokenizer, tiny_backbone_config):
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    keras_albert.AlbertClassifier(
        _backbone(tokenizer, tiny_backbone_config), num_classes=3, preprocessor=preprocessor
    ).save_to_preset(str(tmp_path / "preset"))
    task_file = tmp_path / "preset" / "task.json"
    task = json.loads(task_file.read_text())
    del task["config"]["label_names"]  # as written before the argument existed
    task_file.write_text(json.dumps(task))
    export_serving_saved_model(load_task(tmp_path / "preset"), tmp_path / "serving", check_texts=TEXTS)
    out = _serve(tmp_path / "serving")(text=tf.constant(TEXTS))
    assert set(out) == {"logits", "probabilities"}


@pytest.mark.large
def test_token_classifier_names_each_word(tmp_path, tokenizer, tiny_backbone_config):
    preprocessor = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=16)
    tagger = keras_albert.AlbertTokenClassifier(
        _backbone(tokenizer, tiny_backbone_config), num_classes=4, preprocessor=preprocessor,
        label_names=NAMES,
    )
    export_serving_saved_model(tagger, tmp_path / "serving", check_texts=TEXTS)
    out = _serve(tmp_path / "serving")(text=tf.constant(TEXTS[:2]))
    labels = out["labels"].numpy()
    word_ids = out["word_ids"].numpy()
    predictions = out["predictions"].numpy()
    assert np.all(labels[word_ids < 0] == b"")
    starts = word_ids >= 0
    assert starts.sum() == 3 + 6  # every word of both texts is named
    assert [n.decode() for n in labels[starts]] == [NAMES[i] for i in predictions[starts]]
    expected_words = tagger.predict_word_labels(TEXTS[:2])
    for row, words in enumerate(expected_words):
        by_word = {word_ids[row, p]: labels[row, p].decode() for p in np.flatnonzero(word_ids[row] >= 0)}
        assert [by_word[w] for w in range(len(words))] == [NAMES[i] for i in words]
