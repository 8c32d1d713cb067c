"""Texts that exactly fill a length bucket (16, 32, 64, 128 pieces) and one
piece more give the same outputs bucketed as padded to the full length, for
every embedding, attention and block type."""

import numpy as np
import pytest

import keras_albert
from keras_albert.models.length_buckets import predict_packed
from keras_albert.models.length_buckets import unbucketed
from keras_albert.models.preprocessor_inputs import padded_to
from tests.conftest import synthetic_sentences

EDGES = (16, 32, 64, 128)
# Packed lengths ([CLS] and [SEP] included): each edge and one piece more.
LENGTHS = tuple(sorted(EDGES + tuple(n + 1 for n in EDGES)))
SEQUENCE_LENGTH = 160  # buckets 16, 32, 64, 128 and 160

BACKBONES = {
    "albert_full_attention": {},
    "lsh_attention": dict(
        attention="lsh", lsh_num_hashes=2, lsh_num_buckets=4, lsh_chunk_length=8, lsh_seed=3
    ),
    "student_trigram_bottleneck": dict(
        embedding_type="trigram", bottleneck_dim=8, num_feedforward_stacks=2,
        normalization="no_norm", activation="relu",
    ),
    "student_trigram_layer_norm": dict(embedding_type="trigram", bottleneck_dim=8),
    "bottleneck_factorized": dict(bottleneck_dim=8, num_feedforward_stacks=2),
    "groups_not_shared": dict(num_layers=4, num_groups=2, num_inner_repetitions=2, sharing="none"),
}


def text_of_pieces(tokenizer, words, pieces):
    """A text that packs to exactly `pieces` positions ([CLS] ... [SEP])."""
    unique = sorted(set(words))
    counts = {word: len(ids) for word, ids in zip(unique, tokenizer(unique))}
    chosen, room = [], pieces - 2
    for word in words * (1 + pieces):
        if room == 0:
            break
        if counts[word] <= room:
            chosen.append(word)
            room -= counts[word]
    assert room == 0, f"no words fill {pieces} pieces"
    return " ".join(chosen)


def edge_texts(tokenizer, words):
    texts = [text_of_pieces(tokenizer, words[i:] + words[:i], n) for i, n in enumerate(LENGTHS)]
    # Short texts between the edges, so buckets mix exact and padded rows.
    return texts + synthetic_sentences(3, seed=11)


def packed_lengths(preprocessor, texts):
    return np.asarray(preprocessor(texts)["padding_mask"]).astype(bool).sum(-1)


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


@pytest.fixture(scope="module")
def texts(tokenizer):
    words = " ".join(synthetic_sentences(40, seed=7)).replace(".", "").split()
    return edge_texts(tokenizer, words)


def backbone(name, vocabulary_size):
    config = dict(
        vocabulary_size=vocabulary_size, num_layers=2, num_heads=2, embedding_dim=16,
        hidden_dim=32, intermediate_dim=64, max_sequence_length=SEQUENCE_LENGTH,
        # Larger random weights than training's 0.02: a difference at the
        # last position reaches the pooled output well above the tolerance.
        initializer_range=0.2,
    )
    config.update(BACKBONES[name])
    return keras_albert.AlbertBackbone(**config)


def test_texts_sit_exactly_on_and_just_past_each_edge(tokenizer, texts):
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=SEQUENCE_LENGTH)
    assert tuple(packed_lengths(pre, texts)[: len(LENGTHS)]) == LENGTHS


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(BACKBONES))
def test_classifier_bucketed_equals_unbucketed(name, tokenizer, texts):
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=SEQUENCE_LENGTH)
    model = keras_albert.AlbertClassifier(
        backbone(name, tokenizer.vocabulary_size()), num_classes=3, preprocessor=pre, dropout=0.0
    )
    got = model.predict(texts, batch_size=4, verbose=0)
    with unbucketed(model):
        expected = model.predict(texts, batch_size=4, verbose=0)
    assert np.abs(expected).max() > 1e-2  # outputs far from zero: the check has teeth
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ["student_trigram_bottleneck", "lsh_attention"])
def test_per_position_outputs_bucketed_equal_unbucketed(name, tokenizer, texts):
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=SEQUENCE_LENGTH)
    features = {key: np.asarray(value) for key, value in pre(texts).items()}
    model = keras_albert.AlbertTokenClassifier(
        backbone(name, tokenizer.vocabulary_size()), num_classes=3, dropout=0.0
    )
    got = predict_packed(model, features, batch_size=4, per_position_fill=0.0)
    expected = model.predict(features, batch_size=4, verbose=0)  # all at full length
    real = features["padding_mask"].astype(bool)
    np.testing.assert_allclose(got[real], expected[real], atol=1e-5, rtol=1e-5)


@pytest.mark.large
def test_bundled_student_at_every_edge():
    """The trained MobileBERT-style student, at up to 128 positions."""
    from keras_albert import datasets

    model = keras_albert.AlbertClassifier.from_preset("albert_tiny_en_student_supersense")
    glosses, _ = datasets.load_supersense("validation", pos="n")
    words = " ".join(glosses[:60]).split()
    texts = edge_texts(model.preprocessor.tokenizer, words)
    with padded_to(model.preprocessor, 128):  # the preset packs to 32
        lengths = packed_lengths(model.preprocessor, texts)
        assert tuple(lengths[: len(LENGTHS)]) == LENGTHS[:-1] + (128,)  # 129 pieces cut to 128
        got = model.predict(texts, batch_size=4, verbose=0)
        with unbucketed(model):
            expected = model.predict(texts, batch_size=4, verbose=0)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-5)
