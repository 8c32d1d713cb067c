"""Jane Austen's six novels as documents of paragraphs (and sentences)."""

import functools
import re

from keras_albert.datasets.bundled_files import read_bundled_text

AUSTEN_NOVELS = (
    "emma",
    "mansfieldpark",
    "northangerabbey",
    "persuasion",
    "prideprejudice",
    "sensesensibility",
)
# Kept out of pretraining to measure masked-LM and sentence order on unseen
# prose.
HELD_OUT_NOVEL = "persuasion"

# Chapter and volume headings, title lines and author lines are layout, not
# prose: they would teach sentence order nothing.
_HEADING = re.compile(
    r"^(CHAPTER|VOLUME|Chapter|Volume)\b|^By Jane Austen$|^[A-Z0-9 .,&']+$"
)
# "Mr. Knightley" must not end a sentence.
_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "St", "Col", "Capt", "Sir", "Rev")
_SENTENCE_END = re.compile(
    r"(?<!\b" + r")(?<!\b".join(_ABBREVIATIONS) + r")"
    r"([.!?][\"'_)]*)\s+(?=[\"'_(]*[A-Z])"
)


def _check_novel(name):
    if name not in AUSTEN_NOVELS:
        raise ValueError(
            f"Unknown novel: name={name!r}. Accepted: {AUSTEN_NOVELS}."
        )


@functools.lru_cache(maxsize=None)
def load_austen_novel(name):
    """Returns one novel as a tuple of paragraphs (headings dropped).

    Printed lines of a paragraph are joined with single spaces.

    Example:
    >>> paragraphs = load_austen_novel("emma")
    >>> paragraphs[0][:24]
    'Emma Woodhouse, handsome'
    """
    _check_novel(name)
    text = read_bundled_text(f"austen_{name}.txt.xz")
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        paragraph = " ".join(line.strip() for line in block.splitlines()).strip()
        if paragraph and not _HEADING.search(paragraph):
            paragraphs.append(paragraph)
    return tuple(paragraphs)


def split_sentences(paragraph):
    """Splits a paragraph into sentences; deterministic and dependency-free.

    Example:
    >>> split_sentences("Mr. Knightley came. She smiled!")
    ['Mr. Knightley came.', 'She smiled!']
    """
    marked = _SENTENCE_END.sub(lambda m: m.group(1) + "\n", paragraph)
    return [s.strip() for s in marked.split("\n") if s.strip()]


def load_austen_documents(names=None, exclude=(HELD_OUT_NOVEL,), sentences=False):
    """Returns novels as documents, each a list of paragraphs (or sentences).

    Args:
        names: novels to load (default: all six).
        exclude: novels to leave out (default: the held-out Persuasion).
        sentences: if True, each document is a list of sentences instead of
            paragraphs, which is what pretraining-instance creation reads.

    Example:
    >>> documents = load_austen_documents()  # five novels, Persuasion held out
    >>> len(documents)
    5
    """
    names = AUSTEN_NOVELS if names is None else tuple(names)
    exclude = tuple(exclude or ())
    for name in names + exclude:
        _check_novel(name)
    documents = []
    for name in names:
        if name in exclude:
            continue
        paragraphs = load_austen_novel(name)
        if sentences:
            documents.append(
                [s for paragraph in paragraphs for s in split_sentences(paragraph)]
            )
        else:
            documents.append(list(paragraphs))
    return documents
