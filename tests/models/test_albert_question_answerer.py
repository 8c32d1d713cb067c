"""Span QA: windows, exact original-text answers, SQuAD v2 no-answer, learning."""

import warnings

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.models.question_answering_spans import best_answers
from keras_albert.models.question_answering_spans import split_words
from tests.conftest import _WORDS


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


def preprocessor(tokenizer, sequence_length=32, doc_stride=8):
    return keras_albert.AlbertQuestionAnswererPreprocessor(
        tokenizer, sequence_length=sequence_length, doc_stride=doc_stride, max_question_length=8
    )


def one_hot_logits(windows):
    """Logits that put all mass on each window's labels."""
    shape = windows.features["token_ids"].shape
    starts, ends = np.full(shape, -10.0), np.full(shape, -10.0)
    starts[np.arange(shape[0]), windows.start_positions] = 10.0
    ends[np.arange(shape[0]), windows.end_positions] = 10.0
    return starts, ends


def round_trip(tokenizer, contexts, answers, **kwargs):
    pre = preprocessor(tokenizer, **kwargs)
    windows = pre.windows(["where?"] * len(contexts), contexts, answers)
    return windows, best_answers(windows, *one_hot_logits(windows))


def test_answers_are_exact_substrings_of_accented_and_cjk_text(tokenizer):
    decomposed = "Cafe\u0301 de Flore, where Émile met Zoë."
    cjk = "東京は日本の首都です。the cat sleeps"
    contexts = [decomposed, decomposed, cjk, cjk]
    answers = [("Cafe\u0301", 0), ("Zoë", decomposed.index("Zoë")), ("日本", 3), ("cat sleeps", cjk.index("cat"))]
    _, results = round_trip(tokenizer, contexts, answers, sequence_length=48)
    for (text, start), result, context in zip(answers, results, contexts):
        assert result["text"] == text
        assert context[result["start"]:result["end"]] == text
    assert ["a,b 東京"[s:e] for s, e in split_words("a,b 東京")] == ["a", ",", "b", "東", "京"]


def test_answers_across_window_boundaries(tokenizer):
    words = [_WORDS[i % len(_WORDS)] for i in range(60)]
    context = " ".join(words)
    answer_words = words[20:24]
    answer = " ".join(answer_words)
    start = context.index(" " + answer + " ") + 1
    windows, results = round_trip(tokenizer, [context], [(answer, start)], sequence_length=32, doc_stride=8)
    assert len(windows.start_positions) > 3
    # Only windows that hold the whole answer point at it; the rest at [CLS].
    holding = np.flatnonzero(windows.start_positions > 0)
    assert 0 < len(holding) < len(windows.start_positions)
    assert results[0]["text"] == answer


def test_no_answer_follows_the_null_threshold(tokenizer):
    pre = preprocessor(tokenizer)
    windows = pre.windows(["where?"], ["the cat sleeps in the garden"])
    starts, ends = np.zeros((1, 32)), np.zeros((1, 32))
    starts[0, 0] = ends[0, 0] = 3.0  # [CLS]: null score 6
    position = np.flatnonzero(windows.position_word[0] >= 0)[1]
    starts[0, position] = ends[0, position] = 2.0  # best span: score 4
    assert best_answers(windows, starts, ends, allow_no_answer=True)[0]["text"] == ""
    assert best_answers(windows, starts, ends, allow_no_answer=True, null_threshold=5.0)[0]["text"] == "cat"
    assert best_answers(windows, starts, ends)[0]["text"] == "cat"  # SQuAD v1 always answers


def test_bad_answers_are_named(tokenizer):
    pre = preprocessor(tokenizer)
    with pytest.raises(ValueError, match="example 1: answer_start=3"):
        pre.windows(["q", "q"], ["the cat", "the cat"], [("cat", 4), ("cat", 3)])
    with pytest.raises(ValueError, match="same length"):
        pre.windows(["q"], ["a", "b"])


ANIMALS = ["cat", "dog", "bird", "fish", "horse", "mouse"]


def synthetic(count, seed):
    rng = np.random.default_rng(seed)
    fillers = [w for w in _WORDS if w not in ANIMALS]
    contexts, answers = [], []
    for _ in range(count):
        words = list(rng.choice(fillers, rng.integers(4, 10)))
        animal = str(rng.choice(ANIMALS))
        position = int(rng.integers(len(words) + 1))
        words.insert(position, animal)
        context = " ".join(words)
        start = len(" ".join(words[:position])) + (1 if position else 0)
        contexts.append(context)
        answers.append((animal, start))
    return ["which animal?"] * count, contexts, answers


@pytest.mark.large
def test_learns_a_synthetic_span_task(tokenizer, tiny_backbone_config):
    keras.utils.set_random_seed(0)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    model = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=preprocessor(tokenizer))
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    questions, contexts, answers = synthetic(600, seed=1)
    windows = model.preprocessor.windows(questions, contexts, answers)
    model.fit(
        windows.features,
        {"start_logits": windows.start_positions, "end_logits": windows.end_positions},
        batch_size=32, epochs=5, verbose=0,
    )
    questions, contexts, answers = synthetic(100, seed=2)
    predicted = model.answer(questions, contexts)
    exact = np.mean([p["text"] == a[0] for p, a in zip(predicted, answers)])
    assert exact >= 0.9


def test_predicting_windows_warns_of_no_unbuilt_preprocessor(tokenizer, tiny_backbone_config):
    # Keras warned on every `fit` and `predict` that the preprocessor "does
    # not have a `build()` method ... and has unbuilt state".
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    model = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=preprocessor(tokenizer))
    questions, contexts, _ = synthetic(4, seed=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.predict(model.preprocessor.windows(questions, contexts).features, verbose=0)
    assert not [w for w in caught if "build()" in str(w.message)]


def test_fit_and_evaluate_take_questions_contexts_and_answers(tokenizer, tiny_backbone_config):
    # The raw form `answer` takes, windowed as `preprocessor.windows` does;
    # answers as (text, start) pairs or SQuAD dicts.
    keras.utils.set_random_seed(0)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    model = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=preprocessor(tokenizer))
    model.compile(optimizer="sgd")
    questions, contexts, answers = synthetic(12, seed=4)
    windows = model.preprocessor.windows(questions, contexts, answers)
    on_windows = model.evaluate(
        windows.features, {"start_logits": windows.start_positions, "end_logits": windows.end_positions},
        batch_size=4, verbose=0, return_dict=True)
    squad = [{"text": text, "answer_start": start} for text, start in answers]
    for given in (answers, squad):
        raw = model.evaluate((questions, contexts), given, batch_size=4, verbose=0, return_dict=True)
        np.testing.assert_allclose(raw["loss"], on_windows["loss"], rtol=1e-6)
    history = model.fit((questions, contexts), squad, batch_size=4, epochs=1,
                        validation_data=((questions, contexts), answers), verbose=0)
    assert {"loss", "val_loss"} <= set(history.history)
    with pytest.raises(ValueError, match=r"`y\[1\]` must be an answer: \(answer_text, answer_start\)"):
        model.fit((questions[:2], contexts[:2]), [answers[0], "cat"], verbose=0)
