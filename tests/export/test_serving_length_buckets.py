"""The bucketed serving SavedModel returns the fixed-length outputs."""

import numpy as np
import pytest
import tensorflow as tf

import keras_albert
from keras_albert.export import export_serving_saved_model
from keras_albert.models.length_buckets import unbucketed
from tests.conftest import synthetic_sentences


@pytest.fixture(scope="module")
def parts(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    config = dict(tiny_backbone_config, vocabulary_size=80, max_sequence_length=64)
    return tokenizer, config


def mixed_texts():
    texts = synthetic_sentences(9, seed=7)
    texts.insert(4, " ".join(synthetic_sentences(12, seed=8)))  # past 64 pieces
    texts.insert(2, "")
    return texts


@pytest.mark.large
def test_classifier_serves_the_fixed_length_logits(tmp_path, parts):
    tokenizer, config = parts
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=64)
    task = keras_albert.AlbertClassifier(keras_albert.AlbertBackbone(**config), num_classes=4, preprocessor=pre)
    texts = mixed_texts()
    assert export_serving_saved_model(task, tmp_path / "s", check_texts=texts) <= 1e-5
    serve = tf.saved_model.load(str(tmp_path / "s")).signatures["serving_default"]
    with unbucketed(task):
        expected = task.predict(texts, verbose=0)
    lengths = np.asarray(pre(texts)["padding_mask"]).sum(-1)
    assert lengths.min() <= 16 and lengths.max() == 64  # several buckets in one batch
    np.testing.assert_allclose(serve(text=tf.constant(texts))["logits"].numpy(), expected, atol=1e-5)
    # One text, and only long texts: a single bucket, the others empty.
    np.testing.assert_allclose(serve(text=tf.constant(texts[:1]))["logits"].numpy(), expected[:1], atol=1e-5)
    np.testing.assert_allclose(serve(text=tf.constant(texts[5:6]))["logits"].numpy(), expected[5:6], atol=1e-5)
    assert serve(text=tf.constant([], tf.string))["logits"].shape == (0, 4)


@pytest.mark.large
def test_multiple_choice_serves_the_fixed_length_logits(tmp_path, parts):
    tokenizer, config = parts
    pre = keras_albert.AlbertMultipleChoicePreprocessor(tokenizer, sequence_length=64)
    task = keras_albert.AlbertMultipleChoice(keras_albert.AlbertBackbone(**config), preprocessor=pre)
    texts = mixed_texts()
    assert export_serving_saved_model(task, tmp_path / "mc", check_texts=texts) <= 1e-5
    serve = tf.saved_model.load(str(tmp_path / "mc")).signatures["serving_default"]
    x = {"context": texts, "question": ["who?"] * len(texts), "choices": [["a dog", t[-9:]] for t in texts]}
    with unbucketed(task):
        expected = task.predict(x, verbose=0)
    got = serve(**{k: tf.constant(v) for k, v in x.items()})["logits"].numpy()
    np.testing.assert_allclose(got, expected, atol=1e-5)
