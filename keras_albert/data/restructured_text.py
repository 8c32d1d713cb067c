"""Prose paragraphs of reStructuredText, for the pretraining corpus.

Python's documentation (Debian `python3.11-doc` ships its reST sources as
`_sources/**/*.rst.txt`) is a large body of ordered English exposition:
paragraphs that build on the one before, which is what sentence-order
prediction needs. The sources also hold code, tables, titles and markup
that are not English sentences, so this keeps only prose. docutils parses
reST fully, but not Sphinx's roles and directives without Sphinx itself;
for text extraction a line-level reading of the few constructs that carry
non-prose (literal blocks, directives, tables, titles) is enough.
"""

import re

from keras_albert.datasets.austen import split_sentences

# Directives whose whole body is code, data or navigation, never prose.
NON_PROSE_DIRECTIVES = frozenset({
    "code-block", "sourcecode", "code", "doctest", "testcode", "testsetup",
    "testcleanup", "testoutput", "productionlist", "highlight", "literalinclude",
    "toctree", "list-table", "csv-table", "table", "tabularcolumns", "index",
    "include", "image", "figure", "raw", "only", "opcode", "pdbcommand",
    "audit-event", "audit-event-table", "availability", "c:macro", "c:var",
    "c:type", "c:member", "c:function", "c:struct", "c:enum", "c:enumerator",
    "cmdoption", "option", "envvar", "describe",
})
_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::")
_ADORNMENT = re.compile(r"^([=\-~^\"'#*+`:.])\1{2,}\s*$")
_TABLE_RULE = re.compile(r"^=+(\s+=+)+\s*$")
# :role:`text`, :role:`title <target>`, ``literal``, `text <url>`_, *em*.
_ROLE = re.compile(r":[\w:-]+:`([^`]*)`")
_TARGET = re.compile(r"^[!~]?(.*?)\s*<[^>]*>$")
_LITERAL = re.compile(r"``([^`]*)``")
_LINK = re.compile(r"`([^`]*)`__?")
_EMPHASIS = re.compile(r"\*{1,2}([^*\s][^*]*?)\*{1,2}")
_BULLET = re.compile(r"^([*+-]|#\.|\d+\.|\(?[a-z0-9]\))\s+")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _blocks(text):
    """(indent, lines) for each run of non-blank lines."""
    block = []
    for line in text.expandtabs(8).splitlines() + [""]:
        if line.strip():
            block.append(line.rstrip())
        elif block:
            yield _indent(block[0]), block
            block = []


def _inline_text(text):
    def role(match):
        inner = match.group(1)
        if match.group(0).startswith((":pep:", ":rfc:")):
            return f"{match.group(0)[1:4].upper()} {inner}"
        target = _TARGET.match(inner)
        return (target.group(1) if target else inner).lstrip("!~")

    text = _ROLE.sub(role, text)
    text = _LITERAL.sub(r"\1", text)
    text = _LINK.sub(lambda m: _TARGET.sub(r"\1", m.group(1)), text)
    text = _EMPHASIS.sub(r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _is_prose(sentence):
    words = sentence.split()
    wordlike = sum(bool(_WORD.search(word)) for word in words)
    return len(words) >= 4 and wordlike >= 0.6 * len(words)


def prose_paragraphs(text):
    """The prose paragraphs of one reST source, inline markup removed.

    Skipped: literal blocks (after a paragraph ending in `::`), directives
    whose body is code or data (NON_PROSE_DIRECTIVES) with their bodies,
    comments and targets, directive options, section titles, tables,
    doctest lines and field lists. Bodies of other directives (`function`,
    `note`, ...) are prose and kept. A paragraph ending in `::` keeps one
    colon, as it reads.

    Example:
    >>> source = '''Title
    ... =====
    ...
    ... Use :func:`len` on ``x``.  For example::
    ...
    ...    len(x)
    ...
    ... .. note::
    ...
    ...    The *result* is an int.
    ... '''
    >>> prose_paragraphs(source)
    ['Use len on x. For example:', 'The result is an int.']
    """
    paragraphs = []
    skip_deeper_than = None  # the indent of a skipped construct's header
    for indent, lines in _blocks(text):
        if skip_deeper_than is not None:
            if indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        # A doctest ends the paragraph it follows without a blank line.
        doctest = [n for n, line in enumerate(lines) if line.strip().startswith(">>>")]
        lines = lines[:doctest[0]] if doctest else lines
        if not lines:
            continue
        first = lines[0].strip()
        directive = _DIRECTIVE.match(first)
        if first.startswith(".."):
            if directive is None or directive.group(1) in NON_PROSE_DIRECTIVES:
                # A comment, a target or a non-prose directive: drop its body.
                skip_deeper_than = indent
            continue  # a prose directive's header and options; its body follows
        if first.startswith(("+-", "|")):
            continue
        if any(_ADORNMENT.match(line.strip()) or _TABLE_RULE.match(line.strip()) for line in lines):
            continue  # a section title, or a simple table
        if first.startswith(":") and re.match(r"^:[^:]+:", first):
            continue  # a field list
        paragraph = " ".join(_BULLET.sub("", line.strip()) for line in lines)
        if paragraph.endswith("::"):
            skip_deeper_than = indent
            paragraph = paragraph[:-1].rstrip(" :") + ":" if paragraph[:-2].strip() else ""
        paragraph = _inline_text(paragraph)
        if paragraph:
            paragraphs.append(paragraph)
    return paragraphs


def prose_sentences(text):
    """The sentences of a reST source's prose, in order, for one document.

    Sentences of fewer than four words or mostly non-words (symbols,
    numbers, code left in running text) are dropped.

    Example:
    >>> prose_sentences("The cat sat down.  It was tired of the day.\\n")
    ['The cat sat down.', 'It was tired of the day.']
    """
    return [
        sentence
        for paragraph in prose_paragraphs(text)
        for sentence in split_sentences(paragraph)
        if _is_prose(sentence)
    ]
