"""ALBERT's text-classifier and masked-LM preprocessors: packing,
truncation, masking, configs and presets.

Runs on every backend, with or without TensorFlow (without it they pack
in Python); in tf.data maps: test_albert_preprocessors_tf_data.py.
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_albert_preprocessors.py
"""

import copy

import keras
import keras_hub
import numpy as np
import pytest

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_masked_lm_preprocessor import AlbertMaskedLMPreprocessor
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer

CLS, SEP, PAD, MASK = 2, 3, 0, 4
FIRST = "Emma walks to the garden with her sister"
SECOND = "the dog sleeps"


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return AlbertTokenizer(proto=sentencepiece_proto)


def _dtype(tensor):
    return keras.backend.standardize_dtype(tensor.dtype)


def _ids(tokenizer, text):
    return np.asarray(tokenizer(text)).tolist()


def _packed(a, b, length):
    """Reference packing: [CLS] a [SEP] b [SEP] <pad>..., segments 0/1."""
    tokens = [CLS] + a + [SEP] + (b + [SEP] if b is not None else [])
    segments = [0] * (len(a) + 2) + ([1] * (len(b) + 1) if b is not None else [])
    padding = length - len(tokens)
    return tokens + [PAD] * padding, segments + [0] * padding


# --- AlbertTextClassifierPreprocessor ---------------------------------------


def test_single_text_packed_with_int32_padding_mask(tokenizer):
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=24)
    x = pre(FIRST)
    tokens, segments = _packed(_ids(tokenizer, FIRST), None, 24)
    assert np.asarray(x["token_ids"]).tolist() == tokens
    assert np.asarray(x["segment_ids"]).tolist() == segments
    assert _dtype(x["padding_mask"]) == "int32"
    assert np.asarray(x["padding_mask"]).tolist() == [int(t != PAD) for t in tokens]


def test_pair_packed_as_cls_a_sep_b_sep(tokenizer):
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=32)
    x = pre(x=([FIRST, "Emma"], [SECOND, ""]))
    for row, (a, b) in enumerate([(FIRST, SECOND), ("Emma", "")]):
        tokens, segments = _packed(_ids(tokenizer, a), _ids(tokenizer, b), 32)
        assert np.asarray(x["token_ids"])[row].tolist() == tokens
        assert np.asarray(x["segment_ids"])[row].tolist() == segments
    assert _dtype(x["padding_mask"]) == "int32"


def test_pair_in_label_position_is_read_as_second_segment(tokenizer):
    # keras-hub would take `b` for a label in `pre((a, b))` and `pre(a, b)`.
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=32)
    expected = pre(x=(FIRST, SECOND))
    for x in (pre((FIRST, SECOND)), pre(FIRST, SECOND)):
        assert isinstance(x, dict)
        for key in expected:
            np.testing.assert_array_equal(x[key], expected[key])
    # Numeric labels still pass through as labels.
    x, y = pre(x=(FIRST, SECOND), y=1)
    np.testing.assert_array_equal(x["token_ids"], expected["token_ids"])
    assert int(y) == 1


@pytest.mark.parametrize("truncate", ["round_robin", "waterfall"])
def test_truncation_to_sequence_length(tokenizer, truncate):
    long_a = " ".join(["emma walks to the garden"] * 6)
    long_b = " ".join(["the dog sleeps slowly"] * 6)
    a, b = _ids(tokenizer, long_a), _ids(tokenizer, long_b)
    length = 16
    pre = AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=length, truncate=truncate
    )
    x = pre(x=([long_a], [long_b]))
    tokens = np.asarray(x["token_ids"])[0].tolist()
    assert len(tokens) == length
    assert PAD not in tokens
    assert tokens[0] == CLS and tokens[-1] == SEP
    sep = tokens.index(SEP)
    kept_a, kept_b = tokens[1:sep], tokens[sep + 1 : -1]
    assert len(kept_a) + len(kept_b) == length - 3
    assert kept_a == a[: len(kept_a)] and kept_b == b[: len(kept_b)]
    if truncate == "round_robin":
        assert abs(len(kept_a) - len(kept_b)) <= 1
    else:
        # Waterfall fills the first segment before the second gets any.
        assert kept_a == a[: length - 3] and kept_b == []
    segments = np.asarray(x["segment_ids"])[0].tolist()
    assert segments == [0] * (sep + 1) + [1] * (length - sep - 1)


def test_truncation_of_a_single_long_text(tokenizer):
    text = " ".join(["emma walks to the garden"] * 10)
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=8)
    tokens = np.asarray(pre(text)["token_ids"]).tolist()
    assert tokens == [CLS] + _ids(tokenizer, text)[:6] + [SEP]


def test_empty_strings(tokenizer):
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=6)
    x = pre("")
    assert np.asarray(x["token_ids"]).tolist() == [CLS, SEP, 0, 0, 0, 0]
    assert np.asarray(x["padding_mask"]).tolist() == [1, 1, 0, 0, 0, 0]
    x = pre(x=([""], [""]))
    assert np.asarray(x["token_ids"]).tolist() == [[CLS, SEP, SEP, 0, 0, 0]]
    assert np.asarray(x["segment_ids"]).tolist() == [[0, 0, 1, 0, 0, 0]]


def test_empty_batches_give_zero_rows(tokenizer):
    pre = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=8)
    for x in ([], ([], [])):
        packed = pre(x=x)
        assert {k: tuple(v.shape) for k, v in packed.items()} == {
            "token_ids": (0, 8), "segment_ids": (0, 8), "padding_mask": (0, 8)}


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(sequence_length=1), "sequence_length=1"),
        (dict(sequence_length="16"), "sequence_length='16'"),
        (dict(truncate="left"), "truncate='left'"),
        (dict(tokenizer=None), "tokenizer=None"),
    ],
)
def test_bad_classifier_preprocessor_arguments(tokenizer, kwargs, message):
    kwargs.setdefault("tokenizer", tokenizer)
    with pytest.raises(ValueError, match=message):
        AlbertTextClassifierPreprocessor(**kwargs)


def test_classifier_preprocessor_config_round_trip(tokenizer):
    pre = AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=12, truncate="waterfall"
    )
    config = pre.get_config()
    # keras-hub's `from_config` replaces the tokenizer dict in place.
    clone = AlbertTextClassifierPreprocessor.from_config(copy.deepcopy(config))
    assert clone.get_config() == config
    assert isinstance(clone.tokenizer, AlbertTokenizer)
    assert clone.tokenizer.lowercase is True


def test_preprocessor_preset_round_trip(tmp_path, tokenizer, tiny_backbone_config):
    preset = str(tmp_path / "preset")
    AlbertBackbone(**tiny_backbone_config).save_to_preset(preset)
    pre = AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=12, truncate="waterfall"
    )
    pre.save_to_preset(preset)

    restored = AlbertTextClassifierPreprocessor.from_preset(preset)
    assert (restored.sequence_length, restored.truncate) == (12, "waterfall")
    expected, got = pre(x=(FIRST, SECOND)), restored(x=(FIRST, SECOND))
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key])
    generic = keras_hub.models.TextClassifierPreprocessor.from_preset(preset)
    assert type(generic) is AlbertTextClassifierPreprocessor


# --- AlbertMaskedLMPreprocessor ---------------------------------------------


def _corpus(count=200, seed=0):
    rng = np.random.default_rng(seed)
    words = "emma walks to the garden with her sister dog sleeps ball".split()
    return [
        " ".join(rng.choice(words, size=rng.integers(1, 12))) for _ in range(count)
    ]


def test_masked_lm_outputs_and_never_masks_special_tokens(tokenizer):
    keras.utils.set_random_seed(0)
    length, texts = 24, _corpus()
    pre = AlbertMaskedLMPreprocessor(
        tokenizer,
        sequence_length=length,
        mask_selection_rate=0.5,
        mask_selection_length=length,
    )
    x, y, weights = pre(x=(texts[:100], texts[100:]))
    packed = AlbertTextClassifierPreprocessor(tokenizer, sequence_length=length)(
        x=(texts[:100], texts[100:])
    )
    original = np.asarray(packed["token_ids"])
    np.testing.assert_array_equal(x["segment_ids"], packed["segment_ids"])

    assert _dtype(x["padding_mask"]) == "int32"
    assert _dtype(x["mask_positions"]) == "int32"
    assert x["mask_positions"].shape == y.shape == weights.shape == (100, length)
    np.testing.assert_array_equal(x["padding_mask"], (original != PAD).astype("int32"))

    positions = np.asarray(x["mask_positions"])
    selected = np.asarray(weights) > 0
    rows = np.nonzero(selected)[0]
    chosen = original[rows, positions[selected]]
    assert selected.sum() > 500
    assert not np.isin(chosen, [CLS, SEP, PAD, MASK]).any()
    # Labels are the original ids; special tokens stay where they were.
    np.testing.assert_array_equal(np.asarray(y)[selected], chosen)
    token_ids = np.asarray(x["token_ids"])
    special = np.isin(original, [CLS, SEP, PAD])
    np.testing.assert_array_equal(token_ids[special], original[special])
    # Nothing outside the selected positions changes.
    changed = token_ids != original
    masked = np.zeros_like(changed)
    masked[rows, positions[selected]] = True
    assert not (changed & ~masked).any()


def test_masked_lm_rates_roughly_as_configured(tokenizer):
    keras.utils.set_random_seed(1)
    length, texts = 32, _corpus(400, seed=1)
    pre = AlbertMaskedLMPreprocessor(
        tokenizer, sequence_length=length, mask_selection_length=length
    )
    x, y, weights = pre(texts)
    original = np.asarray(AlbertTextClassifierPreprocessor(tokenizer, sequence_length=length)(
        texts
    )["token_ids"])
    selectable = ~np.isin(original, [CLS, SEP, PAD, MASK])
    selected = np.asarray(weights) > 0
    rate = selected.sum() / selectable.sum()
    assert 0.12 < rate < 0.18, rate

    rows = np.nonzero(selected)[0]
    at = np.asarray(x["token_ids"])[rows, np.asarray(x["mask_positions"])[selected]]
    as_mask = np.mean(at == tokenizer.mask_token_id)
    kept = np.mean(at == np.asarray(y)[selected])
    assert 0.74 < as_mask < 0.86, as_mask
    assert 0.05 < kept < 0.17, kept  # 10% kept, plus random picks that hit.


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(mask_selection_rate=1.5), "mask_selection_rate=1.5"),
        (dict(mask_selection_length=0), "mask_selection_length=0"),
        (dict(mask_token_rate=0.8, random_token_rate=0.3), "random_token_rate=0.3"),
        (dict(sequence_length=0), "sequence_length=0"),
        (dict(truncate="head"), "truncate='head'"),
        (dict(tokenizer="albert"), "tokenizer='albert'"),
    ],
)
def test_bad_masked_lm_preprocessor_arguments(tokenizer, kwargs, message):
    kwargs.setdefault("tokenizer", tokenizer)
    with pytest.raises(ValueError, match=message):
        AlbertMaskedLMPreprocessor(**kwargs)


def test_masked_lm_always_mask_is_allowed(tokenizer):
    pre = AlbertMaskedLMPreprocessor(
        tokenizer,
        sequence_length=12,
        mask_selection_length=3,
        mask_token_rate=1.0,
        random_token_rate=0.0,
    )
    x, _, weights = pre(["emma walks to the garden with her sister"])
    selected = np.asarray(weights)[0] > 0
    positions = np.asarray(x["mask_positions"])[0][selected]
    assert (np.asarray(x["token_ids"])[0][positions] == MASK).all()


def test_masked_lm_config_round_trip(tokenizer):
    pre = AlbertMaskedLMPreprocessor(
        tokenizer, sequence_length=16, mask_selection_rate=0.2,
        mask_selection_length=4,
    )
    config = pre.get_config()
    clone = AlbertMaskedLMPreprocessor.from_config(copy.deepcopy(config))
    assert clone.get_config() == config
