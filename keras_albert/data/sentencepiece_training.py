"""Train a SentencePiece vocabulary with ALBERT's special tokens and ids."""

import io

import sentencepiece

# ALBERT's special pieces at the ids Google's vocabularies give them.
ALBERT_SPECIAL_PIECES = dict(
    pad_id=0,
    unk_id=1,
    bos_id=2,
    eos_id=3,
    pad_piece="<pad>",
    unk_piece="<unk>",
    bos_piece="[CLS]",
    eos_piece="[SEP]",
    user_defined_symbols="[MASK]",
)

# ALBERT's fixed ids: the model, the MLM masking and the packers rely on them.
ALBERT_SPECIAL_TOKENS = {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}
_MODEL_TYPES = ("unigram", "bpe", "word", "char")


def train_sentencepiece(
    texts,
    vocabulary_size,
    model_type="unigram",
    lowercase=True,
    character_coverage=0.9999,
    max_sentence_length=8192,
    seed_sentencepiece_size=200000,
    size_name="vocabulary_size",
):
    """Trains a SentencePiece model and returns its serialized proto.

    The special tokens get ALBERT's ids: `<pad>`=0, `<unk>`=1, `[CLS]`=2,
    `[SEP]`=3, `[MASK]`=4. Texts are normalised as ALBERT's tokenizer does
    at run time (lowercase, NFKD, accents stripped) when `lowercase=True`, so
    the pieces match what the tokenizer will see.

    Args:
        texts: iterable of strings, one sentence or line each.
        vocabulary_size: int, number of pieces including the special tokens.
        model_type: one of `"unigram"` (ALBERT's choice), `"bpe"`, `"word"`,
            `"char"`.
        lowercase: bool, normalise the training text like `AlbertTokenizer`.
        character_coverage: float in (0, 1], share of characters covered.
        max_sentence_length: int, longer lines are skipped by SentencePiece.
        seed_sentencepiece_size: int, unigram seed vocabulary size.
        size_name: how messages about a size the text cannot give name
            `vocabulary_size` (`pretrain` passes its flag, `--vocab_size`).

    Returns:
        bytes: the serialized SentencePiece model, ready for
        `keras_albert.AlbertTokenizer(proto=...)`.

    Example:
    >>> proto = train_sentencepiece(["the cat sat", "the dog ran"] * 50, 18)
    """
    if not isinstance(vocabulary_size, int) or vocabulary_size <= len(
        ALBERT_SPECIAL_TOKENS
    ):
        raise ValueError(
            "`vocabulary_size` must be an int larger than the "
            f"{len(ALBERT_SPECIAL_TOKENS)} special tokens. "
            f"Received: vocabulary_size={vocabulary_size!r}"
        )
    if model_type not in _MODEL_TYPES:
        raise ValueError(
            f"`model_type` must be one of {_MODEL_TYPES}. "
            f"Received: model_type={model_type!r}"
        )
    from keras_albert.utils.text_normalization import normalize_text

    # SentencePiece wraps exceptions from the iterator in RuntimeError, so a
    # bad item is remembered here and re-raised as itself afterwards.
    bad_items = []
    count = [0]

    def sentences():
        for text in texts:
            if not isinstance(text, str):
                bad_items.append(text)
                return
            text = normalize_text(text, lowercase=lowercase)
            if text:
                count[0] += 1
                yield text

    model = io.BytesIO()
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=sentences(),
            model_writer=model,
            vocab_size=vocabulary_size,
            model_type=model_type,
            character_coverage=character_coverage,
            max_sentence_length=max_sentence_length,
            seed_sentencepiece_size=seed_sentencepiece_size,
            **ALBERT_SPECIAL_PIECES,
            # Normalisation is ours (see normalize_text); keep SentencePiece's
            # identity so training and run time agree byte for byte.
            normalization_rule_name="identity",
            minloglevel=2,
        )
    except RuntimeError as error:
        if bad_items:
            raise _not_a_string(bad_items[0]) from None
        if not count[0]:
            raise ValueError(
                "`texts` is empty: it holds no non-blank text to train a "
                "vocabulary on."
            ) from None
        message = str(error)
        if "too high" in message:
            raise ValueError(
                f"`{size_name}={vocabulary_size}` is larger than the "
                "training text supports; lower it or give more text. "
                f"SentencePiece said: {message}"
            ) from error
        if "smaller than required_chars" in message:
            raise ValueError(
                f"`{size_name}={vocabulary_size}` is smaller than the "
                "number of distinct characters in the text plus the special "
                "tokens; raise it (or lower `character_coverage`). "
                f"SentencePiece said: {message}"
            ) from error
        raise
    if bad_items:
        raise _not_a_string(bad_items[0])
    return model.getvalue()


def _not_a_string(item):
    return ValueError(
        "`texts` must yield strings. "
        f"Received an item of type {type(item).__name__}: {item!r:.80}"
    )
