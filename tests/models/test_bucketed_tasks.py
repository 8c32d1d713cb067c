"""Length buckets in the other task models give the unbucketed results."""

import keras
import numpy as np
import pytest

import keras_albert
from tests.conftest import synthetic_sentences


@pytest.fixture(scope="module")
def parts(sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    config = dict(tiny_backbone_config, vocabulary_size=80, max_sequence_length=64)
    return tokenizer, config


def unbucketed(task, method, *args, **kwargs):
    saved, task.length_buckets = task.length_buckets, None
    try:
        return getattr(task, method)(*args, **kwargs)
    finally:
        task.length_buckets = saved


def mixed_texts(count, seed):
    texts = synthetic_sentences(count, seed=seed)
    texts[count // 2] = " ".join(synthetic_sentences(12, seed=seed + 1))  # one past 64 pieces
    return texts


@pytest.mark.large
def test_multiple_choice_predict_and_evaluate(parts):
    tokenizer, config = parts
    pre = keras_albert.AlbertMultipleChoicePreprocessor(tokenizer, sequence_length=64)
    model = keras_albert.AlbertMultipleChoice(keras_albert.AlbertBackbone(**config), preprocessor=pre)
    contexts = mixed_texts(11, seed=2)
    x = {
        "context": contexts,
        "question": ["who _ ?"] * 11,
        "choices": [[t[:10], t[-8:], "a dog"] for t in contexts],
    }
    np.testing.assert_allclose(
        model.predict(x, batch_size=4, verbose=0), unbucketed(model, "predict", x, batch_size=4, verbose=0), atol=1e-5
    )
    y = np.arange(11) % 3
    got = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
    expected = unbucketed(model, "evaluate", x, y, batch_size=4, verbose=0, return_dict=True)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], atol=1e-5)


def test_token_classifier_word_labels(parts):
    tokenizer, config = parts
    pre = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=64)
    model = keras_albert.AlbertTokenClassifier(keras_albert.AlbertBackbone(**config), num_classes=5, preprocessor=pre)
    words = [text.split() for text in mixed_texts(13, seed=3)]
    got = model.predict_word_labels(words, batch_size=4)
    assert got == unbucketed(model, "predict_word_labels", words, batch_size=4)
    assert any(label == -1 for label in got[13 // 2])  # the long one was truncated


def test_question_answerer_answers(parts, monkeypatch):
    tokenizer, config = parts
    pre = keras_albert.AlbertQuestionAnswererPreprocessor(
        tokenizer, sequence_length=64, doc_stride=16, max_question_length=8
    )
    model = keras_albert.AlbertQuestionAnswerer(keras_albert.AlbertBackbone(**config), preprocessor=pre)
    contexts = mixed_texts(9, seed=5)
    questions = ["who walks ?"] * 9
    got = model.answer(questions, contexts, batch_size=4, allow_no_answer=True)
    expected = unbucketed(model, "answer", questions, contexts, batch_size=4, allow_no_answer=True)
    assert [r["text"] for r in got] == [r["text"] for r in expected]
    for ours, theirs in zip(got, expected):
        np.testing.assert_allclose(ours["score"], theirs["score"], atol=1e-5)
        np.testing.assert_allclose(ours["null_score"], theirs["null_score"], atol=1e-5)
    # Short windows really ran shorter than 64 positions.
    seen = []
    original_keras = keras.Model.predict_on_batch
    monkeypatch.setattr(
        keras.Model, "predict_on_batch", lambda self, x: (seen.append(x["token_ids"].shape[-1]), original_keras(self, x))[1]
    )
    model.answer(questions, contexts, batch_size=4)
    assert min(seen) < 64 and max(seen) == 64
