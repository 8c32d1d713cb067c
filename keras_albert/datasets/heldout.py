"""The held-out texts that no pretraining corpus may contain.

Persuasion (the held-out novel) and the WordNet glosses of the supersense
validation and test splits are what the project evaluates on. A corpus
builder passes its text through `HeldOutGuard` before writing it:
`drop` removes lines that repeat a held-out text, `check` refuses a corpus
that still holds one. Comparison is on a normalised form (lowercase,
letters and digits only, single spaces), so punctuation or spacing
changes do not hide a copy.
"""

import functools
import re

from keras_albert.datasets.austen import HELD_OUT_NOVEL
from keras_albert.datasets.austen import load_austen_documents
from keras_albert.datasets.wordnet_supersense import load_wordnet_synsets
from keras_albert.datasets.wordnet_supersense import split_of

HELD_OUT_SPLITS = ("validation", "test")
# Shorter held-out pieces ("a horse", "go away") are common phrases, not
# copies of an evaluation text; ignore them when matching.
MIN_WORDS = 4

_NOT_WORD = re.compile(r"[^0-9a-z]+")
_CLAUSE_END = re.compile(r"[;.!?:\n]")


def normalize(text):
    """Lowercase words joined by single spaces: the form texts are compared in."""
    return _NOT_WORD.sub(" ", text.lower()).strip()


def _pieces(text):
    """The whole text and each of its clauses, normalised."""
    for piece in [text, *_CLAUSE_END.split(text)]:
        piece = normalize(piece)
        if len(piece.split()) >= MIN_WORDS:
            yield piece


@functools.lru_cache(maxsize=1)
def heldout_pieces():
    """Normalised held-out sentences and gloss clauses (a frozenset)."""
    pieces = set()
    for synset in load_wordnet_synsets():
        if split_of(synset.synset) in HELD_OUT_SPLITS:
            for text in (synset.definition, *synset.examples):
                pieces.update(_pieces(text))
    for document in load_austen_documents(
        names=(HELD_OUT_NOVEL,), exclude=(), sentences=True
    ):
        for sentence in document:
            pieces.update(_pieces(sentence))
    return frozenset(pieces)


class HeldOutGuard:
    """Finds held-out text inside corpus lines.

    A line is held out when the whole line, or one of its clauses (split
    at ';', '.', '!', '?', ':'), equals a held-out text or clause.

    Example:
    >>> guard = HeldOutGuard(pieces={"a feeling of deep sadness"})
    >>> guard.contains("Grief: a feeling of deep sadness.")
    True
    >>> guard.drop(["a horse is an animal", "A feeling of deep sadness"])
    ['a horse is an animal']
    """

    def __init__(self, pieces=None):
        self.pieces = heldout_pieces() if pieces is None else frozenset(pieces)

    def contains(self, line):
        return any(piece in self.pieces for piece in _pieces(line))

    def drop(self, lines):
        return [line for line in lines if not self.contains(line)]

    def check(self, lines, where="the corpus"):
        """Raises ValueError naming the first held-out line found."""
        for number, line in enumerate(lines, 1):
            if self.contains(line):
                raise ValueError(
                    f"{where} line {number} repeats held-out evaluation text "
                    f"(Persuasion or a supersense validation/test gloss): "
                    f"{line[:120]!r}. Held-out text must never be pretrained on; "
                    "drop it with HeldOutGuard.drop."
                )
