"""Plain-text documents from dictd dictionaries (GCIDE, FOLDOC).

Debian ships GCIDE (Webster's 1913 with later additions) and FOLDOC in the
dictd format: an `.index` file of `headword<TAB>offset<TAB>length` lines
(base64 numbers) and a `.dict` or dictzip-compressed `.dict.dz` file of
entries. No maintained Python reader for it exists on PyPI, so the format
is read here; it is a dozen lines.

`gcide_documents` keeps only what GCIDE marks as coming from Webster's 1913
(definitions, usage notes and quotations) and drops paragraphs marked as
WordNet's, including those marked as both ("[1913 Webster + WordNet 1.5]":
GCIDE's editors merged a WordNet gloss into Webster's text), so the
supersense task's glosses cannot enter a corpus through the dictionary.
"""

import gzip
import re

_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _decode_number(text):
    value = 0
    for char in text:
        value = value * 64 + _BASE64.index(char)
    return value


def read_dictd(index_path, dict_path):
    """Yields `(headword, entry_text)` for each entry, in index order."""
    opener = gzip.open if str(dict_path).endswith(".dz") else open
    with opener(dict_path, "rb") as file:
        data = file.read()
    with open(index_path, encoding="utf-8") as index:
        for number, line in enumerate(index, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3:
                raise ValueError(
                    f"{index_path} line {number}: expected headword, offset and "
                    f"length separated by tabs, got {line[:80]!r}"
                )
            headword, offset, length = fields
            if headword.startswith("00-database"):
                continue  # the dictionary's own description
            start = _decode_number(offset)
            yield headword, data[start:start + _decode_number(length)].decode(
                "utf-8", errors="replace"
            )


def distinct_entries(entries):
    """Yields each `(headword, entry_text)` whose text was not yielded before.

    A dictd index lists an entry under each of its headwords (variant
    spellings, the words of a phrase): GCIDE's 203,645 index lines point
    at 126,240 distinct entries. Read as they are, most of the dictionary
    would be written two to three times.

    Example:
    >>> list(distinct_entries([("Colour", "a hue"), ("Color", "a hue"), ("Hue", "a color")]))
    [('Colour', 'a hue'), ('Hue', 'a color')]
    """
    seen = set()
    for headword, text in entries:
        if text not in seen:
            seen.add(text)
            yield headword, text


_SOURCE_TAG = re.compile(r"\[(1913 Webster|WordNet[^\]]*|PJC|[^\]]*Webster[^\]]*)\]\s*$")
_SPACES = re.compile(r"\s+")


def source_tag(paragraph):
    """The source note that ends a GCIDE paragraph, or "" if it has none.

    The note may be wrapped over two lines ("[1913\\n  Webster + WordNet 1.5]").

    Example:
    >>> source_tag("A hoofed quadruped.\\n   [1913\\n   Webster + WordNet 1.5]")
    '1913 Webster + WordNet 1.5'
    """
    match = _SOURCE_TAG.search(_SPACES.sub(" ", paragraph).strip())
    return match.group(1) if match else ""


def is_websters_only(tag):
    """True for a Webster's tag that names no WordNet text."""
    return "Webster" in tag and "WordNet" not in tag


_SENSE_NUMBER = re.compile(r"^\s*(\d+\.|\([a-z]\)|[a-z]\.)\s+")
_BRACKETS = re.compile(r"\[[^\]]*\]")
_PARENTHESISED_LABEL = re.compile(r"^\s*\((?:[A-Z][A-Za-z.]*\s*)+\)\s*")
_ATTRIBUTION = re.compile(r"\s--\s?[A-Z][^.]*\.?\s*$|\s--[A-Z][\w.]*(?:\s[A-Z][\w.]*)*\.?")


def _clean(text):
    text = _BRACKETS.sub(" ", text)
    text = text.replace("{", "").replace("}", "").replace("`", "'")
    text = _ATTRIBUTION.sub(" ", text)
    text = _SENSE_NUMBER.sub("", text)
    text = _PARENTHESISED_LABEL.sub("", text)
    text = _SPACES.sub(" ", text).strip(" ;,")
    return text


_HEADWORD = re.compile(r"^[^\\]*\\[^\\]*\\\s*(\([^)]*\))?[^\[]*?(?=\[|\s\d+\.\s|$)")


def _without_header(paragraph):
    """The first paragraph minus headword, pronunciation, part of speech and etymology."""
    text = " ".join(line.strip() for line in paragraph.splitlines())
    match = _HEADWORD.match(text)
    if not match:
        return text
    rest = text[match.end():].lstrip()
    if rest.startswith("["):  # the etymology, which may nest brackets
        depth = 0
        for position, char in enumerate(rest):
            depth += {"[": 1, "]": -1}.get(char, 0)
            if depth == 0:
                return rest[position + 1:]
        return ""
    return rest


def gcide_documents(entries, min_words=3):
    """One document (a list of sentences) per GCIDE entry, Webster's only.

    Every paragraph tagged as Webster's (`[1913 Webster]`, `[Webster 1913
    Suppl.]`, ...) and not as WordNet's becomes a sentence, with the
    entry's header (headword, pronunciation, etymology), sense numbers,
    field labels such as `(Zool.)`, bracketed notes and quotation
    attributions removed.
    """
    for _, entry in entries:
        paragraphs = [p for p in re.split(r"\n\s*\n", entry) if p.strip()]
        sentences = []
        for number, paragraph in enumerate(paragraphs):
            if not is_websters_only(source_tag(paragraph)):
                continue
            text = _clean(_without_header(paragraph) if number == 0 else " ".join(paragraph.split()))
            if text.startswith(("Syn:", "Note:")):
                text = text.split(":", 1)[1].strip()
            if len(text.split()) >= min_words:
                sentences.append(text)
        if sentences:
            yield sentences


def foldoc_documents(entries, min_words=3):
    """One document per FOLDOC entry: its paragraphs, cross-references unbraced."""
    for _, entry in entries:
        paragraphs = [p for p in re.split(r"\n\s*\n", entry) if p.strip()]
        sentences = []
        for paragraph in paragraphs[1:]:
            text = _SPACES.sub(" ", paragraph.replace("{", "").replace("}", "")).strip()
            if text.startswith(("(", "http", "See also")) and len(text) < 40:
                continue
            if len(text.split()) >= min_words:
                sentences.append(text)
        if sentences:
            yield sentences
