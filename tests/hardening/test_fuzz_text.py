"""Property-based tests on arbitrary Unicode: tokenizer, preprocessors, QA spans.

Budget: 100 examples per property, 6 properties (600 examples per run),
no deadline (the first examples include graph tracing).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import keras_albert
from keras_albert.models.question_answering_spans import best_answers
from keras_albert.models.question_answering_spans import split_words

BUDGET = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
SEQUENCE_LENGTH = 24
# Every code point except surrogates (not encodable as UTF-8 text).
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
batches = st.lists(texts, min_size=1, max_size=4)


@pytest.fixture(scope="module")
def fuzz_tokenizer():
    return keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")


@pytest.fixture(scope="module")
def classifier_preprocessor(fuzz_tokenizer):
    return keras_albert.AlbertTextClassifierPreprocessor(fuzz_tokenizer, sequence_length=SEQUENCE_LENGTH)


@pytest.fixture(scope="module")
def qa_preprocessor(fuzz_tokenizer):
    return keras_albert.AlbertQuestionAnswererPreprocessor(
        fuzz_tokenizer, sequence_length=SEQUENCE_LENGTH, doc_stride=8, max_question_length=6
    )


@pytest.mark.large
@BUDGET
@given(batch=batches)
def test_tokenizer_ids_stay_in_the_vocabulary(fuzz_tokenizer, batch):
    ids = fuzz_tokenizer(batch)
    assert len(ids) == len(batch)
    size = fuzz_tokenizer.vocabulary_size()
    for row in ids:
        assert all(0 <= i < size for i in row)
    # And back to text without error.
    assert len(fuzz_tokenizer.detokenize(ids)) == len(batch)


@pytest.mark.large
@BUDGET
@given(batch=batches)
def test_classifier_preprocessor_shapes_and_ids(classifier_preprocessor, batch):
    x = classifier_preprocessor(batch)
    token_ids = np.asarray(x["token_ids"])
    assert token_ids.shape == (len(batch), SEQUENCE_LENGTH)
    assert ((token_ids >= 0) & (token_ids < 8000)).all()
    assert (token_ids[:, 0] == 2).all()  # [CLS]
    mask = np.asarray(x["padding_mask"])
    lengths = mask.sum(-1)
    assert (token_ids[np.arange(len(batch)), lengths - 1] == 3).all()  # last kept piece is [SEP]
    assert (np.asarray(x["segment_ids"]) == 0).all()


@pytest.mark.large
@BUDGET
@given(pairs=st.lists(st.tuples(texts, texts), min_size=1, max_size=4))
def test_pair_preprocessor_shapes_and_segments(classifier_preprocessor, pairs):
    first, second = [a for a, _ in pairs], [b for _, b in pairs]
    x = classifier_preprocessor(x=(first, second))
    token_ids = np.asarray(x["token_ids"])
    segments = np.asarray(x["segment_ids"])
    mask = np.asarray(x["padding_mask"])
    assert token_ids.shape == segments.shape == (len(pairs), SEQUENCE_LENGTH)
    assert set(np.unique(segments)) <= {0, 1}
    assert ((token_ids == 3) & (mask == 1)).sum(-1).tolist() == [2] * len(pairs)  # two [SEP]
    # Segment 1 never precedes segment 0.
    assert (np.diff(segments * mask, axis=-1)[mask[:, 1:] == 1] >= 0).all()


@BUDGET
@given(context=texts)
def test_split_words_spans_are_ordered_and_non_blank(context):
    previous_end = 0
    for start, end in split_words(context):
        assert previous_end <= start < end <= len(context)
        assert context[start:end].strip()
        previous_end = end


@pytest.mark.large
@BUDGET
@given(question=texts, context=texts, seed=st.integers(0, 2**31 - 1))
def test_qa_windows_and_answers_are_substrings(qa_preprocessor, question, context, seed):
    windows = qa_preprocessor.windows([question], [context])
    token_ids = windows.features["token_ids"]
    assert token_ids.shape[1] == SEQUENCE_LENGTH and token_ids.shape[0] >= 1
    assert ((token_ids >= 0) & (token_ids < 8000)).all()
    assert (windows.example_index == 0).all()
    words = windows.position_word[windows.position_word >= 0]
    assert (words < len(windows.word_spans[0])).all()
    # Any logits map back to exact substrings of the context.
    rng = np.random.default_rng(seed)
    shape = token_ids.shape
    (answer,) = best_answers(windows, rng.normal(size=shape), rng.normal(size=shape), n_best=5)
    assert context[answer["start"]:answer["end"]] == answer["text"]
    for candidate in answer["n_best"]:
        assert candidate["text"] == context[candidate["start"]:candidate["end"]]
        assert candidate["text"] in context


@pytest.mark.large
@BUDGET
@given(data=st.data())
def test_qa_training_labels_point_at_the_answer(qa_preprocessor, data):
    context = data.draw(texts.filter(lambda t: split_words(t)))
    spans = split_words(context)
    first = data.draw(st.integers(0, len(spans) - 1))
    last = data.draw(st.integers(first, min(first + 2, len(spans) - 1)))
    start, end = spans[first][0], spans[last][1]
    windows = qa_preprocessor.windows(["q"], [context], [(context[start:end], start)])
    for w in range(len(windows.start_positions)):
        s, e = windows.start_positions[w], windows.end_positions[w]
        if s == 0:
            assert e == 0  # [CLS]: not in this window
            continue
        assert s <= e
        word_start = windows.position_word[w, s]
        word_end = windows.position_word[w, e]
        assert spans[word_start][0] == start and spans[word_end][1] == end
