"""Tokenizer and preprocessors: odd but valid text works, wrong input fails clearly.

Runs on every backend, with the same messages with TensorFlow (its string
ops) and without it (the Python path):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/hardening/test_text_inputs.py
"""

import numpy as np
import pytest

import keras_albert
from tests.hardening.conftest import assert_names

ONE_MEGABYTE = "word " * 200_000 + "end"
# (id, a batch of one text): all valid input that must simply work.
ODD_TEXTS = [
    ("empty", [""]),
    ("whitespace_only", [" \t\n\u3000\u00a0 "]),
    ("one_megabyte", [ONE_MEGABYTE]),
    ("invalid_utf8", [b"caf\xc3 \xff\xfe abc \x80"]),
    ("mixed_script", ["Héllo мир 世界 مرحبا שלום नमस्ते 🙂 e\u0301"]),
    ("control_characters", ["a\x00b\x07c\u200bd\ufeff"]),
]


@pytest.fixture(scope="module")
def preprocessors(tokenizer):
    return {
        "classifier": keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
        "masked_lm": keras_albert.AlbertMaskedLMPreprocessor(tokenizer, sequence_length=16),
        "token_classifier": keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=16),
    }


@pytest.mark.entry_point("tokenizer")
@pytest.mark.parametrize("text", [case[1] for case in ODD_TEXTS], ids=[case[0] for case in ODD_TEXTS])
def test_tokenizer_takes_odd_text(tokenizer, text):
    ids = tokenizer(text)  # eager: a list of id lists
    assert len(ids) == 1
    flat = np.asarray(ids[0], "int64")
    assert ((flat >= 0) & (flat < tokenizer.vocabulary_size())).all()
    if text[0] == ONE_MEGABYTE:
        assert flat.size > 100_000  # nothing dropped before packing


@pytest.mark.entry_point("preprocessors")
@pytest.mark.parametrize("kind", ["classifier", "masked_lm"])
@pytest.mark.parametrize("text", [case[1] for case in ODD_TEXTS], ids=[case[0] for case in ODD_TEXTS])
def test_preprocessor_takes_odd_text(preprocessors, kind, text):
    outputs = preprocessors[kind](text)
    x = outputs[0] if isinstance(outputs, tuple) else outputs
    assert x["token_ids"].shape == (1, 16)
    assert int(x["token_ids"][0, 0]) == 2  # [CLS]


@pytest.mark.entry_point("preprocessors")
@pytest.mark.parametrize("text", [case[1] for case in ODD_TEXTS], ids=[case[0] for case in ODD_TEXTS])
def test_pair_preprocessor_takes_odd_text(preprocessors, text):
    x = preprocessors["classifier"](x=(text, ["a second text"]))
    assert x["token_ids"].shape == (1, 16)
    assert set(np.unique(x["segment_ids"])) <= {0, 1}


def test_tokenizer_empty_batch_has_no_rows(tokenizer):
    assert len(tokenizer([])) == 0


# (id, input, needles) for the tokenizer's call.
BAD_TOKENIZER_INPUTS = [
    ("integers", [1, 2], ["`text` must be a string tensor", "dtype=int32"]),
    ("floats", np.zeros(2, "float32"), ["string tensor", "dtype=float32"]),
    ("none", None, ["takes a string or a list/array/tensor of strings", "Received: None"]),
    ("dict", {"text": "a"}, ["takes a string or a list", "{'text': 'a'}"]),
    ("nested_3d", [[["a"]]], ["must be 0 or 1 dimensional", "(1, 1, 1)"]),
    ("mixed", [1, "a"], ["takes a string or a list/array/tensor of strings", "[1, 'a']"]),
    ("ragged", [["a"], ["b", "c"]], ["takes a string or a list/array/tensor of strings", "[['a'], ['b', 'c']]"]),
]


@pytest.mark.entry_point("tokenizer")
@pytest.mark.parametrize(
    "value, needles", [case[1:] for case in BAD_TOKENIZER_INPUTS], ids=[case[0] for case in BAD_TOKENIZER_INPUTS]
)
def test_tokenizer_refuses_non_text(tokenizer, value, needles):
    with pytest.raises(ValueError) as error:
        tokenizer(value)
    assert_names(error, *needles)


BAD_IDS = [
    ("past_vocabulary", [[5, 99999]], ["outside [0, 8000)", "99999"]),
    ("negative", np.array([[-1, 5]]), ["outside [0, 8000)", "-1"]),
    ("float_ids", [[1.5]], ["integer token ids", "float64"]),
]


@pytest.mark.entry_point("tokenizer")
@pytest.mark.parametrize("ids, needles", [case[1:] for case in BAD_IDS], ids=[case[0] for case in BAD_IDS])
def test_detokenize_refuses_bad_ids(tokenizer, ids, needles):
    with pytest.raises(ValueError) as error:
        tokenizer.detokenize(ids)
    assert_names(error, "`detokenize`", *needles)


# (id, preprocessor kind, call, needles)
BAD_PREPROCESSOR_CALLS = [
    ("pair_batch_mismatch_x", "classifier", lambda p: p(x=(["a", "b"], ["c"])), ["Text pairs", "[2, 1]"]),
    ("pair_batch_mismatch_positional", "classifier", lambda p: p(["a", "b", "c"], ["d"]), ["Text pairs", "[3, 1]"]),
    ("feature_dict", "classifier", lambda p: p({"token_ids": np.zeros((1, 4), "int32")}), ["takes raw strings", "['token_ids']", "preprocessor = None"]),
    ("integers", "classifier", lambda p: p([1, 2]), ["string tensor", "dtype=int32"]),
    ("none", "masked_lm", lambda p: p(None), ["takes a string", "None"]),
    ("integers", "masked_lm", lambda p: p(np.arange(3)), ["string tensor", "dtype=int64"]),
]


@pytest.mark.entry_point("preprocessors")
@pytest.mark.parametrize(
    "kind, call, needles", [case[1:] for case in BAD_PREPROCESSOR_CALLS], ids=[case[0] for case in BAD_PREPROCESSOR_CALLS]
)
def test_preprocessor_refuses_bad_input(preprocessors, kind, call, needles):
    with pytest.raises(ValueError) as error:
        call(preprocessors[kind])
    assert_names(error, *needles)


# (id, class, kwargs, needles): constructor arguments.
BAD_CONSTRUCTIONS = [
    ("sequence_length_one", keras_albert.AlbertTextClassifierPreprocessor, {"sequence_length": 1}, ["sequence_length", "1", "int >= 2"]),
    ("sequence_length_str", keras_albert.AlbertTextClassifierPreprocessor, {"sequence_length": "16"}, ["sequence_length", "'16'"]),
    ("truncate_unknown", keras_albert.AlbertTextClassifierPreprocessor, {"truncate": "middle"}, ["truncate", "'middle'", "round_robin"]),
    ("doc_stride_zero", keras_albert.AlbertQuestionAnswererPreprocessor, {"doc_stride": 0}, ["doc_stride", "0", "positive int"]),
]


@pytest.mark.entry_point("preprocessors")
@pytest.mark.parametrize(
    "cls, kwargs, needles", [case[1:] for case in BAD_CONSTRUCTIONS], ids=[case[0] for case in BAD_CONSTRUCTIONS]
)
def test_preprocessor_refuses_bad_arguments(tokenizer, cls, kwargs, needles):
    with pytest.raises(ValueError) as error:
        cls(tokenizer, **kwargs)
    assert_names(error, *needles)


@pytest.mark.entry_point("tokenizer")
def test_tokenizer_refuses_a_non_albert_proto():
    with pytest.raises(ValueError) as error:
        keras_albert.AlbertTokenizer(proto=b"not a sentencepiece model")
    assert_names(error, "`proto`", "not a valid SentencePiece model", "bytes")


@pytest.mark.entry_point("tokenizer")
def test_a_byte_order_mark_changes_nothing(tokenizer, classifier):
    from keras_albert.utils.text_normalization import normalize_text

    texts = ["Hello world", " hello  world"]
    marked = ["\ufeff" + texts[0], "\ufeff\ufeff" + texts[1]]
    assert [normalize_text(t) for t in marked] == [normalize_text(t) for t in texts]
    assert [list(ids) for ids in tokenizer(marked)] == [list(ids) for ids in tokenizer(texts)]
    np.testing.assert_array_equal(classifier.predict(marked, verbose=0), classifier.predict(texts, verbose=0))
    # Inside a text too: the raw-string TFLite export can only drop it
    # everywhere, and every path tokenizes alike.
    assert list(tokenizer("hello \ufeffworld")) == list(tokenizer("hello world"))
    assert normalize_text("hello \ufeffworld") == "hello world"
