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
# A chapter starts at its heading line ("CHAPTER IV", "Chapter 12").
_CHAPTER = re.compile(r"^(?:CHAPTER|Chapter) [0-9IVXLC]+[ \t]*$", re.M)
# The novel's text ends here: what follows is an editor's note, not Austen.
_END_OF_TEXT = re.compile(r"^(?:THE END|FINIS|Finis|A NOTE ON THE TEXT)[ \t]*$", re.M)
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


def _paragraphs(text):
    """Printed lines joined into paragraphs; headings dropped."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        paragraph = " ".join(line.strip() for line in block.splitlines()).strip()
        if paragraph and not _HEADING.search(paragraph):
            paragraphs.append(paragraph)
    return tuple(paragraphs)


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
    return _paragraphs(read_bundled_text(f"austen_{name}.txt.xz"))


@functools.lru_cache(maxsize=None)
def load_austen_chapters(name):
    """Returns one novel's chapters, each a tuple of paragraphs, in order.

    Only the novel's text: front matter before the first chapter heading
    (title, Northanger Abbey's "Advertisement") and anything after the end
    mark ("THE END", "FINIS", Northanger Abbey's editor's note) are left
    out; volume headings inside are dropped like other headings.

    Example:
    >>> chapters = load_austen_chapters("prideprejudice")
    >>> len(chapters), chapters[0][0][:38]
    (61, 'It is a truth universally acknowledged')
    """
    _check_novel(name)
    text = read_bundled_text(f"austen_{name}.txt.xz")
    end = _END_OF_TEXT.search(text)
    if end:
        text = text[: end.start()]
    # split() yields the front matter, then one body per heading.
    bodies = _CHAPTER.split(text)[1:]
    return tuple(_paragraphs(body) for body in bodies)


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
