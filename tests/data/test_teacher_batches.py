"""Teacher embeddings as NumPy batches by index (the off-TensorFlow stream):
batch i is a function of (seed, i), joins pretraining batch i, and carries
the inputs and targets `embedding_batch` gives the tf.data path."""

import numpy as np
import pytest

from keras_albert.data.pretraining_batches import PretrainingBatches
from keras_albert.data.teacher_embeddings import HELDOUT_TEXTS
from keras_albert.data.teacher_embeddings import TeacherBatches
from keras_albert.data.teacher_embeddings import TeacherEmbeddings
from keras_albert.models.albert_pretrainer import embedding_batch
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from tests.conftest import synthetic_sentences

DIM = 5


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    path = tmp_path_factory.mktemp("teacher")
    texts = [f"{text} {i}" for i, text in enumerate(synthetic_sentences(2 * HELDOUT_TEXTS + 40, seed=2))]
    (path / "texts.txt").write_text("\n".join(texts) + "\n")
    vectors = np.random.default_rng(1).normal(size=(len(texts), DIM)).astype("float32")
    np.save(path / "vectors.npy", vectors)
    return TeacherEmbeddings(path, seed=3), dict(zip(texts, vectors, strict=True))


@pytest.fixture(scope="module")
def preprocessor(sentencepiece_proto):
    return AlbertTextClassifierPreprocessor(AlbertTokenizer(proto=sentencepiece_proto), sequence_length=12)


def _pretraining(count=40, batch_size=8, **kwargs):
    rng = np.random.default_rng(0)
    arrays = {
        "input_ids": rng.integers(5, 80, (count, 16)).astype("int32"),
        "input_mask": np.ones((count, 16), "int32"),
        "segment_ids": np.zeros((count, 16), "int32"),
        "masked_lm_positions": np.ones((count, 3), "int32"),
        "masked_lm_ids": np.full((count, 3), 7, "int32"),
        "masked_lm_weights": np.ones((count, 3), "float32"),
        "next_sentence_labels": np.zeros((count, 1), "int32"),
    }
    return PretrainingBatches(arrays, batch_size, seed=1, **kwargs)


def test_batches_are_a_function_of_the_index_with_their_own_vectors(teacher, preprocessor):
    embeddings, vector_of = teacher
    batches = TeacherBatches(*embeddings.train, preprocessor, 64, seed=3)
    again = TeacherBatches(*embeddings.train, preprocessor, 64, seed=3)
    packed, vectors = batches.batch(5)
    other_packed, other_vectors = again.batch(5)
    np.testing.assert_array_equal(packed["token_ids"], other_packed["token_ids"])
    np.testing.assert_array_equal(vectors, other_vectors)
    assert packed["token_ids"].shape == (64, 12) and packed["token_ids"][:, 0].tolist() == [2] * 64
    for text, vector in zip(embeddings.train[0][batches.rows(5)], vectors, strict=True):
        np.testing.assert_array_equal(vector, vector_of[text])
    # Each epoch is a new order of every training text, none held out.
    per_epoch = batches.batches_per_epoch
    first = np.concatenate([batches.rows(i) for i in range(per_epoch)])
    second = np.concatenate([batches.rows(i) for i in range(per_epoch, 2 * per_epoch)])
    assert len(set(first.tolist())) == len(first) == per_epoch * 64
    assert not np.array_equal(first, second)
    assert not set(embeddings.train[0].tolist()) & set(embeddings.heldout[0].tolist())


def test_added_to_pretraining_batches_as_embedding_batch_adds_them(teacher, preprocessor):
    embeddings, _ = teacher
    plain = _pretraining()
    joined = embeddings.add_to(plain, preprocessor, 8, training=True)
    batches = TeacherBatches(*embeddings.train, preprocessor, 8, seed=embeddings.seed)
    x, y, sample_weight = joined.batch(11)
    packed, vectors = batches.batch(11)
    ex, ey, eweight = embedding_batch(packed, vectors)(*plain.batch(11))
    assert (set(x), set(y), set(sample_weight)) == (set(ex), set(ey), set(eweight))
    for ours, theirs in ((x, ex), (y, ey), (sample_weight, eweight)):
        for name in theirs:
            np.testing.assert_array_equal(ours[name], np.asarray(theirs[name]), err_msg=name)
            assert ours[name].dtype == np.asarray(theirs[name]).dtype, name
    # The plain stream is untouched; a resumed stream joins the same batches.
    assert "embedding_token_ids" not in plain.batch(11)[0]
    resumed = embeddings.add_to(_pretraining(skip_batches=11), preprocessor, 8, training=True)
    first = next(iter(resumed))
    np.testing.assert_array_equal(first[0]["embedding_token_ids"], x["embedding_token_ids"])


def test_held_out_texts_in_order_and_cut_to_a_short_last_batch(teacher, preprocessor):
    embeddings, _ = teacher
    heldout = embeddings.add_to(_pretraining(count=20, is_training=False), preprocessor, 8, training=False)
    x, y, weights = heldout.batch(2)
    assert len(x["token_ids"]) == 4 == len(x["embedding_token_ids"]) == len(y["sentence_embedding"])
    np.testing.assert_array_equal(y["sentence_embedding"], embeddings.heldout[1][16:20])
    assert weights["sentence_embedding"].tolist() == [1.0] * 4


def test_a_batch_larger_than_the_texts_is_refused(teacher, preprocessor):
    embeddings, _ = teacher
    with pytest.raises(ValueError, match=r"`batch_size=4096` is larger than the 2048 teacher texts"):
        TeacherBatches(*embeddings.heldout, preprocessor, 4096)
