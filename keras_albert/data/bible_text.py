"""Chapters of the King James Bible, from the `bible` program's plain output.

Debian's `bible-kjv-text` keeps the text in the compressed format of the
Bible Retrieval System, which only that system's `bible` program (Debian
`bible-kjv`) reads; no Python reader exists. The corpus builder runs the
program at build time and this module turns its unformatted output
(`bible -f`: one verse a line, `Ge1:1 In the beginning ...`) into one
document per chapter, verses in order: the discourse order that
sentence-order prediction learns from.
"""

import re

# `1Sm3:4 text`: an optional book number, the abbreviated book, chapter:verse.
_VERSE = re.compile(r"^(?P<book>[1-3]?[A-Za-z]+)(?P<chapter>\d+):\d+ (?P<text>.+)$")


def kjv_chapters(lines):
    """Yields each chapter as a list of its verse texts, in the given order.

    Blank lines are skipped. A line that is not a verse raises ValueError
    naming it: a changed output format must stop the build, not slip
    references or headings into the corpus.

    Example:
    >>> list(kjv_chapters(["Ge1:1 In the beginning.", "Ge1:2 And the earth.",
    ...                    "Ge2:1 Thus the heavens."]))
    [['In the beginning.', 'And the earth.'], ['Thus the heavens.']]
    """
    chapter, verses = None, []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        match = _VERSE.match(line)
        if match is None:
            raise ValueError(
                f"line {number} is not a verse of `bible -f` output "
                f"(expected `Book<chapter>:<verse> text`, e.g. `Ge1:1 In the beginning`): {line[:80]!r}"
            )
        key = (match["book"], int(match["chapter"]))
        if key != chapter and verses:
            yield verses
            verses = []
        chapter = key
        verses.append(match["text"].strip())
    if verses:
        yield verses
