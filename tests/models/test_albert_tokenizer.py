"""AlbertTokenizer: ALBERT's normalisation, ids, vocabulary checks,
configs, assets and presets.

Runs on every backend, with or without TensorFlow (without it, Python
SentencePiece after the Python normalisation); the in-graph normalisation,
tf.function and tf.data: test_albert_tokenizer_tf_text.py.
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/models/test_albert_tokenizer.py
"""

import io

import keras_hub
import numpy as np
import pytest
import sentencepiece

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.utils.text_normalization import normalize_text

# Whitespace RE2 does not know, ligatures, full-width letters, accents,
# Greek final sigma, LaTeX quotes, NUL, Devanagari marks with combining
# class 0 (kept) and > 0 (stripped), Turkish dotted I.
TRICKY_TEXTS = [
    "",
    " ",
    "\u3000\u00a0\t\n",
    "  The  Quick\tbrown\n\nFOX  ",
    "Emma\u00a0Woodhouse\u2003was\u202fhandsome\x1cclever",
    "Café naïve résumé Ångström",
    "ﬁne ﬂower Ｅｍｍａ ½",
    "ΟΔΟΣ ΣΑΣ",
    "``Quoted'' and ```three''' ",
    "a\x00B\x00\x00C",
    "हिंदी क्षत्रिय",
    "İstanbul",
]


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return AlbertTokenizer(proto=sentencepiece_proto)


def _text(value):
    """A normalised text as `str`: TensorFlow's path gives a string tensor."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        return [_text(item) for item in value.tolist()]
    if isinstance(value, list):
        return [_text(item) for item in value]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _plain_sentencepiece(**ids):
    """A vocabulary trained without (or with misplaced) ALBERT tokens."""
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["the cat sat on the mat", "a dog ran"] * 50),
        model_writer=model,
        vocab_size=30,
        hard_vocab_limit=False,
        minloglevel=2,
        **ids,
    )
    return model.getvalue()


def test_lowercases_and_strips_accents_by_default(tokenizer):
    assert tokenizer.lowercase is True
    ids = tokenizer("Émma  WALKS\tto the Ball")
    np.testing.assert_array_equal(ids, tokenizer("emma walks to the ball"))
    assert tokenizer.detokenize(ids) == "emma walks to the ball"
    assert tokenizer.unk_token_id not in np.asarray(ids)


def test_lowercase_false_keeps_case_and_accents(sentencepiece_proto):
    cased = AlbertTokenizer(proto=sentencepiece_proto, lowercase=False)
    assert _text(cased.normalize("  Émma   WALKS ")) == "Émma WALKS"
    # The vocabulary was trained lowercased: capitals are unknown.
    assert cased.unk_token_id in np.asarray(cased("EMMA"))
    uncased = AlbertTokenizer(proto=sentencepiece_proto)
    np.testing.assert_array_equal(cased("emma"), uncased("EMMA"))


@pytest.mark.parametrize("lowercase", [True, False])
def test_normalize_matches_python_normalize_text(sentencepiece_proto, lowercase):
    # In-graph where TensorFlow is installed, in Python where it is not.
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto, lowercase=lowercase)
    expected = [normalize_text(t, lowercase=lowercase) for t in TRICKY_TEXTS]
    assert _text(tokenizer.normalize(TRICKY_TEXTS)) == expected
    for text, want in zip(TRICKY_TEXTS, expected):
        assert _text(tokenizer.normalize(text)) == want


def test_ids_match_sentencepiece_on_normalized_text(tokenizer, sentencepiece_proto):
    processor = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_proto)
    for text in TRICKY_TEXTS + ["Emma visits her Sister in the évening."]:
        expected = processor.encode(normalize_text(text))
        assert np.asarray(tokenizer(text)).tolist() == expected


def test_special_token_ids(tokenizer):
    assert tokenizer.pad_token_id == 0
    assert tokenizer.unk_token_id == 1
    assert tokenizer.cls_token_id == tokenizer.start_token_id == 2
    assert tokenizer.sep_token_id == tokenizer.end_token_id == 3
    assert tokenizer.mask_token_id == 4
    # <unk> may be masked (as in Google's pretraining data), the rest not.
    assert sorted(tokenizer.special_token_ids) == [0, 2, 3, 4]


def test_vocabulary_without_albert_tokens_is_rejected():
    with pytest.raises(ValueError) as error:
        AlbertTokenizer(proto=_plain_sentencepiece())
    message = str(error.value)
    for problem in (
        "'<pad>' is missing",
        "'[CLS]' is missing",
        "'[SEP]' is missing",
        "'[MASK]' is missing",
        "'<unk>' is at id 0, not 1",
    ):
        assert problem in message
    assert "<pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4" in message


def test_vocabulary_with_misplaced_albert_tokens_is_rejected():
    proto = _plain_sentencepiece(
        pad_id=1, unk_id=0, bos_id=2, eos_id=3, pad_piece="<pad>",
        unk_piece="<unk>", bos_piece="[CLS]", eos_piece="[SEP]",
        user_defined_symbols="[MASK]",
    )
    expected = r"'<pad>' is at id 1, not 0; '<unk>' is at id 0, not 1"
    with pytest.raises(ValueError, match=expected):
        AlbertTokenizer(proto=proto)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(lowercase="yes"), "lowercase='yes'"),
        (dict(lowercase=None), "lowercase=None"),
        (dict(proto=b"not a sentencepiece model"), "proto"),
        (dict(proto=123), "proto of type int"),
    ],
)
def test_bad_arguments(sentencepiece_proto, kwargs, message):
    kwargs.setdefault("proto", sentencepiece_proto)
    with pytest.raises(ValueError, match=message):
        AlbertTokenizer(**kwargs)


def test_config_round_trip(sentencepiece_proto):
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto, lowercase=False)
    config = tokenizer.get_config()
    assert config["lowercase"] is False
    assert config["proto"] is None  # The vocabulary travels as an asset.
    clone = AlbertTokenizer.from_config(config)
    assert clone.get_config() == config
    clone.set_proto(sentencepiece_proto)
    text = ["Emma Sees the Ball", ""]
    assert clone(text) == tokenizer(text)


def test_save_and_load_assets(tmp_path, sentencepiece_proto):
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto)
    tokenizer.save_assets(str(tmp_path))
    restored = AlbertTokenizer.from_config(tokenizer.get_config())
    restored.load_assets(str(tmp_path))
    assert restored.proto == sentencepiece_proto
    assert restored.mask_token_id == 4
    np.testing.assert_array_equal(restored("Darcy"), tokenizer("Darcy"))


def test_preset_round_trip(tmp_path, sentencepiece_proto, tiny_backbone_config):
    preset = str(tmp_path / "preset")
    AlbertBackbone(**tiny_backbone_config).save_to_preset(preset)
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto, lowercase=False)
    tokenizer.save_to_preset(preset)

    restored = AlbertTokenizer.from_preset(preset)
    assert isinstance(restored, AlbertTokenizer)
    assert restored.lowercase is False
    np.testing.assert_array_equal(restored("Emma"), tokenizer("Emma"))
    # keras-hub's generic entry point finds our class through `backbone_cls`.
    generic = keras_hub.tokenizers.Tokenizer.from_preset(preset)
    assert type(generic) is AlbertTokenizer


def test_empty_strings(tokenizer):
    assert np.asarray(tokenizer("")).shape == (0,)
    assert np.asarray(tokenizer("  \t ")).shape == (0,)
    assert tokenizer(["", "emma"])[0] == []
    assert [len(ids) for ids in tokenizer(["", "emma", ""])][0::2] == [0, 0]


@pytest.mark.parametrize(
    "raw, replaced",
    [(b"\xff\xfe emma", "\ufffd\ufffd emma"), (b"caf\xc3\xa9 \xe2\x82", "caf\u00e9 \ufffd")],
)
def test_invalid_utf8_reads_as_replacement_characters(tokenizer, raw, replaced):
    # The TF-text path reads a bad byte as U+FFFD; the Python path (no
    # TensorFlow) decodes with "replace" to give the same ids.
    assert [int(i) for i in tokenizer(raw)] == [int(i) for i in tokenizer(replaced)]
    # Beside a str in one batch (NumPy cannot join such bytes with str).
    assert [int(i) for i in tokenizer([raw, "emma"])[0]] == [int(i) for i in tokenizer(replaced)]


def test_dense_output_with_sequence_length(sentencepiece_proto):
    tokenizer = AlbertTokenizer(proto=sentencepiece_proto, sequence_length=6)
    ids = np.asarray(tokenizer(["emma", "", "the cat sees the dog"]))
    assert ids.shape == (3, 6)
    assert ids[1].tolist() == [0] * 6  # Padded with <pad> = 0.
