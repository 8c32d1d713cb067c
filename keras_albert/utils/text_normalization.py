"""ALBERT's text normalisation, in Python (for vocabulary training)."""

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text, lowercase=True):
    """Drops byte order marks (U+FEFF), collapses whitespace, turns LaTeX
    quotes into `"` and, if `lowercase`, applies NFKD, strips combining
    marks and lowercases, as Google's ALBERT `preprocess_text`.
    `AlbertTokenizer` does the same in the TensorFlow graph."""
    # A byte order mark belongs to the file the text came from, and inside a
    # text U+FEFF is an invisible no-break: neither is a word. Dropped
    # wherever it is, because the raw-string TFLite tokenizer's character
    # map (export/folded_sentencepiece.py) can only drop a character
    # everywhere, and every path must tokenize alike.
    text = _WHITESPACE.sub(" ", text.replace("\ufeff", "")).strip()
    text = text.replace("``", '"').replace("''", '"')
    if lowercase:
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
        text = text.lower()
    return text
