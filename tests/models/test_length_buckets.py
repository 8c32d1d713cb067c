"""Length-bucketed predict: the unbucketed outputs, in the original order."""

import numpy as np
import pytest

import keras_albert
from keras_albert.models.length_buckets import bucket_lengths
from keras_albert.models.length_buckets import needed_lengths
from tests.conftest import synthetic_sentences


@pytest.fixture(scope="module")
def classifier(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80, max_sequence_length=128))
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=128)
    return keras_albert.AlbertClassifier(backbone, num_classes=3, preprocessor=pre)


def unbucketed(classifier, x):
    saved, classifier.length_buckets = classifier.length_buckets, None
    try:
        return classifier.predict(x, batch_size=8, verbose=0)
    finally:
        classifier.length_buckets = saved


def test_one_long_text_among_many_short_ones(classifier):
    texts = synthetic_sentences(40, seed=4)
    texts.insert(17, " ".join(synthetic_sentences(30, seed=5)))  # longer than 128 pieces
    expected = unbucketed(classifier, texts)
    got = classifier.predict(texts, batch_size=8, verbose=0)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    lengths = needed_lengths(classifier.preprocessor.tokenizer, texts)
    assert lengths[17] > 128 and np.median(lengths) < 32  # the buckets were used
    # Pairs keep their order too.
    pairs = (texts, texts[::-1])
    np.testing.assert_allclose(
        classifier.predict(pairs, batch_size=8, verbose=0), unbucketed(classifier, pairs), atol=1e-5
    )


def test_padded_shapes_stay_within_the_bucket_set(classifier):
    assert bucket_lengths(128) == [16, 32, 64, 128]
    assert bucket_lengths(100) == [16, 32, 64, 100]
    seen = []
    original = classifier.preprocessor.call

    def spy(*args, **kwargs):
        outputs = original(*args, **kwargs)
        features = outputs[0] if isinstance(outputs, tuple) else outputs
        seen.append(int(features["token_ids"].shape[-1]))
        return outputs

    classifier.preprocessor.call = spy
    try:
        texts = [" ".join(["dog"] * n) for n in (1, 3, 9, 20, 33, 60, 90, 200)] * 3
        classifier.predict(texts, batch_size=4, verbose=0)
    finally:
        del classifier.preprocessor.call
    assert set(seen) <= {16, 32, 64, 128} and len(set(seen)) >= 3
