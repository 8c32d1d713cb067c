"""Prose paragraphs of POD (Perl's documentation format), for the corpus.

Debian's `perl-doc` ships Perl's manuals (perlintro, perlfaq, perlre, ...)
as `.pod` sources: long, ordered English exposition. POD marks structure
with command paragraphs (`=head1`, `=item`, `=begin` ... `=end`), code with
indented (verbatim) paragraphs, and inline markup with formatting codes
(`C<code>`, `L<text|target>`, `E<gt>`, `C<< a->b >>`). No Python reader
of POD is on PyPI, and the format is small (perlpodspec), so it is read
here: ordinary paragraphs are kept, everything else left out.
"""

import html
import re

# Formatting codes whose text is kept as it is (bold, italic, code, file,
# non-breaking); X (index entry) and Z (null) are dropped.
_KEPT_CODES = frozenset("BICFS")
_DROPPED_CODES = frozenset("XZ")
_CODE_START = re.compile(r"([A-Z])<")
_NAMED_ESCAPES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/"}
_COMMAND = re.compile(r"^=([a-zA-Z]\w*)\s*(.*)", re.S)
_SPACES = re.compile(r"\s+")


def _escape(name):
    if name in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[name]
    if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", name):
        return chr(int(name, 0) if name.startswith("0x") else int(name))
    return html.unescape(f"&{name};")


def _link(inner):
    """L<text|target> reads `text`; L<name/"section"> reads `section in name`."""
    if "|" in inner:
        return inner.split("|", 1)[0]
    if re.match(r"\w+:[^:\s]\S*$", inner):
        return inner  # a URL
    name, _, section = inner.partition("/")
    section = section.strip('"')
    return f"{section} in {name}" if name and section else section or name


def _closing(text, start, brackets):
    """Where the code opened before `start` ends, and where its text ends."""
    if brackets > 1:
        end = re.compile(r"\s>{%d}" % brackets).search(text, start)
        return (len(text), len(text)) if end is None else (end.end(), end.start())
    depth, position = 1, start
    while position < len(text):
        if _CODE_START.match(text, position):
            depth, position = depth + 1, position + 2
            continue
        if text[position] == ">":
            depth -= 1
            if depth == 0:
                return position + 1, position
        position += 1
    return len(text), len(text)


def expand_codes(text):
    """`text` with POD formatting codes replaced by what they read as.

    Example:
    >>> expand_codes('Use C<< $a->b >> or I<see> L<the docs|perlfunc/open>, E<lt>fooE<gt>.')
    'Use $a->b or see the docs, <foo>.'
    """
    out, position = [], 0
    while True:
        match = _CODE_START.search(text, position)
        if match is None:
            out.append(text[position:])
            return "".join(out)
        out.append(text[position:match.start()])
        start = match.end()
        brackets = 1
        while text.startswith("<", start):
            brackets, start = brackets + 1, start + 1
        if brackets > 1 and not text[start:start + 1].isspace():
            brackets, start = 1, match.end()  # `C<<x>`: one bracket, then text
        resume, end = _closing(text, start, brackets)
        inner = expand_codes(text[start:end].strip() if brackets > 1 else text[start:end])
        code = match.group(1)
        if code in _KEPT_CODES:
            out.append(inner)
        elif code == "E":
            out.append(_escape(inner))
        elif code == "L":
            out.append(_link(inner))
        elif code not in _DROPPED_CODES:
            out.append(match.group(0) + inner + ">")  # not a code: `A<b>` stays
        position = resume


def pod_paragraphs(text):
    """The ordinary (prose) paragraphs of a POD source, codes expanded.

    Left out: command paragraphs (headings, `=item` labels, `=over`,
    `=encoding`), verbatim (indented) paragraphs, which are code,
    `=begin` ... `=end` blocks and `=for` paragraphs (other formats), and
    anything outside POD (before the first command, after `=cut`).

    Args:
        text: str, a POD source (a `.pod` file or Perl code with POD in it).

    Example:
    >>> pod_paragraphs('=head1 NAME\\n\\nperlintro - a brief introduction\\n\\n'
    ...                '    print "hi";\\n\\nThis is B<Perl>.\\n\\n=cut\\n\\n1;\\n')
    ['perlintro - a brief introduction', 'This is Perl.']
    """
    if not isinstance(text, str):
        raise ValueError(f"`text` must be a string of POD. Received: text={text!r:.80}")
    paragraphs = []
    in_pod = False
    skipping = []  # the formats of open =begin blocks
    for block in re.split(r"\n(?:[ \t]*\n)+", text.replace("\r\n", "\n")):
        block = block.strip("\n")
        if not block.strip():
            continue
        command = _COMMAND.match(block)
        if command:
            name, argument = command.group(1), command.group(2).split()
            in_pod = name != "cut"
            if name == "begin":
                skipping.append(argument[0] if argument else "")
            elif name == "end" and skipping:
                skipping.pop()
            continue
        if not in_pod or skipping or block[0] in " \t":
            continue
        paragraph = _SPACES.sub(" ", expand_codes(block)).strip()
        if paragraph:
            paragraphs.append(paragraph)
    return paragraphs
