"""A SentencePiece model whose own normaliser does ALBERT's text preprocessing.

`AlbertTokenizer` runs ALBERT's preprocessing (whitespace collapsing,
LaTeX quotes, NFKD, accent stripping, lowercasing) as TensorFlow string ops
before SentencePiece. TFLite has no kernels for those ops, but tensorflow-
text's `FastSentencepieceTokenizer` (which has one) applies the model's own
character map. Every step of the preprocessing except the two-character
quote rule acts on one code point at a time, so the whole pipeline folds
into that map: each code point is sent through the real in-graph
preprocessing (and then the model's original normaliser), and every one
that changes becomes a rule. Tokens then match `AlbertTokenizer` exactly,
with no string op left to run.
"""

import functools
import os
import sys
import tempfile

import numpy as np
import sentencepiece
import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2

from keras_albert.models.albert_tokenizer import albert_normalize_text

# Multi-character rules of ALBERT's preprocessing: LaTeX quotes become '"'.
_QUOTE_RULES = (("``", '"'), ("''", '"'))
_SURROGATES = range(0xD800, 0xE000)


def _code_points():
    return np.concatenate([
        np.arange(_SURROGATES.start, dtype="int64"),
        np.arange(_SURROGATES.stop, sys.maxunicode + 1, dtype="int64"),
    ])


@functools.lru_cache(maxsize=2)
def _preprocessed_code_points(lowercase):
    """{code point: what ALBERT's in-graph preprocessing makes of it}.

    Each point is framed as "a" + point + "a" so that whitespace is not
    stripped as a string end and the frame can be cut off afterwards ("a"
    is unchanged by every step and composes with nothing under NFKD).
    """
    points = _code_points()
    framed = tf.strings.unicode_encode(
        np.stack([np.full_like(points, ord("a")), points, np.full_like(points, ord("a"))], 1)
        .astype("int32"),
        "UTF-8",
    )
    results = albert_normalize_text(framed, lowercase=lowercase).numpy()
    # Compared as bytes, in one pass: only the few thousand points that
    # change are decoded (all 1.1M took about 1 s).
    changed = np.flatnonzero(results != framed.numpy())
    return {int(points[i]): results[i].decode("utf-8")[1:-1] for i in changed}


def _original_normalizer(model):
    """Applies the model's own character map to a list of strings (no
    whitespace handling: ALBERT's preprocessing owns that)."""
    if model.normalizer_spec.name == "identity":
        return lambda texts: list(texts)
    spec = sentencepiece_model_pb2.NormalizerSpec()
    spec.CopyFrom(model.normalizer_spec)
    spec.add_dummy_prefix = False
    spec.remove_extra_whitespaces = False
    spec.escape_whitespaces = False
    normalizer = sentencepiece.SentencePieceNormalizer(
        normalizer_spec=spec.SerializeToString()
    )
    return lambda texts: normalizer.normalize(list(texts))


def _rules(model, lowercase):
    """Lines of a SentencePiece normalisation-rule TSV (hex code points)."""
    original = _original_normalizer(model)
    preprocessed = _preprocessed_code_points(lowercase)
    sources = [chr(point) for point in _code_points().tolist()]
    if model.normalizer_spec.name == "identity":
        pairs = [(chr(point), target) for point, target in sorted(preprocessed.items())]
    else:
        # The original map applies after the preprocessing, to every point.
        targets = original([preprocessed.get(ord(s), s) for s in sources])
        pairs = [(s, t) for s, t in zip(sources, targets) if s != t]
    quote_targets = original([target for _, target in _QUOTE_RULES])
    pairs += [(source, t) for (source, _), t in zip(_QUOTE_RULES, quote_targets)]

    def hexes(text):
        return " ".join(f"{ord(char):X}" for char in text)

    return [f"{hexes(source)}\t{hexes(target)}" for source, target in pairs]


def _compiled_charsmap(rules):
    """SentencePiece's precompiled character map for rule lines.

    The builder is only reachable through the trainer: a throwaway
    character model is trained on two lines and its map is kept.
    """
    with tempfile.TemporaryDirectory() as directory:
        rule_file = os.path.join(directory, "rules.tsv")
        corpus_file = os.path.join(directory, "corpus.txt")
        with open(rule_file, "w", encoding="utf-8") as handle:
            handle.write("\n".join(rules) + "\n")
        with open(corpus_file, "w", encoding="utf-8") as handle:
            handle.write("abc def\nghi jkl\n")
        prefix = os.path.join(directory, "rules")
        sentencepiece.SentencePieceTrainer.train(
            input=corpus_file,
            model_prefix=prefix,
            model_type="char",
            vocab_size=16,
            hard_vocab_limit=False,
            normalization_rule_tsv=rule_file,
            minloglevel=2,
        )
        model = sentencepiece_model_pb2.ModelProto()
        with open(prefix + ".model", "rb") as handle:
            model.ParseFromString(handle.read())
    return model.normalizer_spec.precompiled_charsmap


def folded_sentencepiece_proto(proto, lowercase=True):
    """`proto` with ALBERT's preprocessing folded into its normaliser.

    Args:
        proto: serialized SentencePiece model (`AlbertTokenizer.proto`).
        lowercase: the tokenizer's `lowercase` setting.

    Returns:
        Serialized model bytes: SentencePiece (or tensorflow-text's
        `FastSentencepieceTokenizer`) on raw text then gives the ids that
        `AlbertTokenizer` gives.
    """
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(proto)
    charsmap = _compiled_charsmap(_rules(model, lowercase))
    model.normalizer_spec.name = "albert_preprocessing"
    model.normalizer_spec.precompiled_charsmap = charsmap
    # Collapsing and stripping whitespace is part of ALBERT's preprocessing.
    model.normalizer_spec.remove_extra_whitespaces = True
    return model.SerializeToString()
