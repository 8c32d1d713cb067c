"""AlbertTokenClassifier: sub-word alignment and learning word labels.

Runs on every backend, with or without TensorFlow (without it the
preprocessor packs in Python and `word_label_dataset` is a grain dataset):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_albert_token_classifier.py
"""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.models.albert_token_classifier_preprocessor import word_label_dataset
from keras_albert.utils.backend import optional_tensorflow
from tests.conftest import _WORDS

# Where TensorFlow is installed the preprocessor runs its tf.ragged path,
# which checks the label counts with a TF assertion; the Python path raises
# ValueError.
_tf = optional_tensorflow()[0]
LABEL_COUNT_ERROR = ValueError if _tf is None else _tf.errors.InvalidArgumentError

ANIMALS = {"cat", "dog", "bird", "fish", "horse", "mouse"}
COLOURS = {"red", "green", "blue"}


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


def tagger(tokenizer, config, sequence_length=24):
    backbone = keras_albert.AlbertBackbone(**dict(config, vocabulary_size=tokenizer.vocabulary_size()))
    pre = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=sequence_length)
    return keras_albert.AlbertTokenClassifier(backbone, num_classes=3, preprocessor=pre, dropout=0.0)


def label_of(word):
    return 1 if word in ANIMALS else 2 if word in COLOURS else 0


def synthetic(count, seed):
    rng = np.random.default_rng(seed)
    sentences = [list(rng.choice(_WORDS, rng.integers(3, 9))) for _ in range(count)]
    return sentences, [[label_of(w) for w in s] for s in sentences]


def test_first_piece_carries_the_label(tokenizer, tiny_backbone_config):
    pre = tagger(tokenizer, tiny_backbone_config, sequence_length=10).preprocessor
    words = [["the", "horses", "walk"], ["emma"]]
    pieces = [len(tokenizer.tokenize([w])[0]) for w in words[0]]
    assert max(pieces) > 1  # a word split into several pieces is covered
    x, y, w = pre(words, [[1, 2, 0], [1]])
    starts = np.cumsum([1] + pieces[:-1])
    np.testing.assert_array_equal(np.flatnonzero(np.asarray(w[0])), starts)
    np.testing.assert_array_equal(np.asarray(y[0])[starts], [1, 2, 0])
    assert np.asarray(w[0]).sum() == 3 and np.asarray(w[1]).sum() == 1
    word_ids = np.asarray(pre.word_ids(words))
    np.testing.assert_array_equal(word_ids[0][starts], [0, 1, 2])
    assert (word_ids[0][[0, sum(pieces) + 1]] == -1).all()  # [CLS], [SEP]
    # Whole texts are split on whitespace.
    np.testing.assert_array_equal(pre(["the horses walk"])["token_ids"], x["token_ids"][:1])


def test_truncated_words_get_no_label_and_bad_labels_are_refused(tokenizer, tiny_backbone_config):
    model = tagger(tokenizer, tiny_backbone_config, sequence_length=6)
    words = [["the", "cat", "sees", "a", "dog", "in", "the", "garden"]]
    predicted = model.predict_word_labels(words)
    assert len(predicted[0]) == 8 and predicted[0][-1] == -1 and predicted[0][0] >= 0
    with pytest.raises(LABEL_COUNT_ERROR, match="one label per word"):
        model.preprocessor([["a", "b"]], [[1]])


@pytest.mark.large
def test_learns_word_labels(tokenizer, tiny_backbone_config):
    keras.utils.set_random_seed(0)
    model = tagger(tokenizer, tiny_backbone_config)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    x, y = synthetic(600, seed=1)
    model.fit(word_label_dataset(x, y, batch_size=32), epochs=4, verbose=0)
    x_test, y_test = synthetic(100, seed=2)
    predicted = model.predict_word_labels(x_test)
    flat_true = np.concatenate(y_test)
    flat_pred = np.concatenate(predicted)
    assert (flat_pred == flat_true).mean() >= 0.95
