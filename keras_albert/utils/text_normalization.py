"""ALBERT's text normalisation, in Python (for vocabulary training)."""

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text, lowercase=True):
    """Drops leading byte order marks, collapses whitespace, turns LaTeX
    quotes into `"` and, if `lowercase`, applies NFKD, strips combining
    marks and lowercases, as Google's ALBERT `preprocess_text`.
    `AlbertTokenizer` does the same in the TensorFlow graph."""
    # A leading byte order mark belongs to the file the text came from.
    text = _WHITESPACE.sub(" ", text.lstrip("\ufeff")).strip()
    text = text.replace("``", '"').replace("''", '"')
    if lowercase:
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
        text = text.lower()
    return text
