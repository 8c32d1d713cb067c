"""Prose paragraphs of HTML documentation, for the pretraining corpus.

Debian ships manuals as HTML: the Debian Administrator's Handbook (DocBook
rendered by Publican: paragraphs are `<div class="para">`) and Git's
documentation (AsciiDoc: paragraphs are `<p>`). Between the paragraphs
stand code listings, tables, titles and navigation, which are not English
sentences. This keeps the text of paragraph elements only, minus the code
blocks, tables, scripts and styles inside them. Python's own
`html.parser` does the parsing, so no dependency is added; what counts as
a paragraph is the few lines below.
"""

import html.parser
import re

# Elements whose text is never prose, even inside a paragraph.
SKIPPED_ELEMENTS = frozenset({"pre", "script", "style", "table", "head", "svg"})
# Classes of titles (of a sidebar, figure or table: DocBook's
# `<p class="title">`), which are headings, not sentences.
SKIPPED_CLASSES = frozenset({"title"})
# Elements that have no end tag: they open nothing.
_VOID_ELEMENTS = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link",
    "meta", "param", "source", "track", "wbr",
})
_SPACES = re.compile(r"\s+")


class _ParagraphParser(html.parser.HTMLParser):
    def __init__(self, paragraph_classes):
        super().__init__(convert_charrefs=True)
        self.paragraph_classes = paragraph_classes
        self.paragraphs = []
        self._open = []  # (tag, is_paragraph, is_skipped) of open elements
        self._text = []
        self._paragraphs_open = 0
        self._skipped_open = 0

    def _flush(self):
        text = _SPACES.sub(" ", "".join(self._text)).strip()
        if text:
            self.paragraphs.append(text)
        self._text = []

    def handle_starttag(self, tag, attrs):
        if tag in _VOID_ELEMENTS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        is_paragraph = tag == "p" or (tag == "div" and bool(classes & self.paragraph_classes))
        is_skipped = tag in SKIPPED_ELEMENTS or bool(classes & SKIPPED_CLASSES)
        if is_paragraph:
            self._flush()  # a paragraph nested in another ends the text before it
        self._open.append((tag, is_paragraph, is_skipped))
        self._paragraphs_open += is_paragraph
        self._skipped_open += is_skipped

    def handle_startendtag(self, tag, attrs):
        pass  # <br/>, <a id="..."/>: nothing opens

    def handle_endtag(self, tag):
        if not any(open_tag == tag for open_tag, _, _ in self._open):
            return  # a stray end tag
        while self._open:
            open_tag, is_paragraph, is_skipped = self._open.pop()
            self._paragraphs_open -= is_paragraph
            self._skipped_open -= is_skipped
            if is_paragraph:
                self._flush()
            if open_tag == tag:
                return

    def handle_data(self, data):
        if self._paragraphs_open and not self._skipped_open:
            self._text.append(data)


def html_paragraphs(text, paragraph_classes=("para", "paragraph")):
    """The text of each paragraph of an HTML page, in order.

    A paragraph is a `<p>` element or a `<div>` with one of
    `paragraph_classes`; its inline markup is dropped and its spaces
    collapsed. Text inside `<pre>`, `<table>`, `<script>`, `<style>`,
    `<head>` and elements of class `title` is left out, and so is text outside any paragraph (titles,
    navigation, list labels). A paragraph holding another is cut there:
    the text before and after the inner one are paragraphs of their own.

    Args:
        text: str, an HTML page.
        paragraph_classes: the `class` values that make a `<div>` a
            paragraph.

    Example:
    >>> html_paragraphs('<h1>Intro</h1><div class="para">Use <code>ls</code>'
    ...                 ' &amp; see.<pre>$ ls</pre></div><p>Done.</p>')
    ['Use ls & see.', 'Done.']
    """
    if not isinstance(text, str):
        raise ValueError(f"`text` must be a string of HTML. Received: text={text!r:.80}")
    if isinstance(paragraph_classes, str) or not all(
        isinstance(name, str) and name for name in paragraph_classes
    ):
        raise ValueError(
            "`paragraph_classes` must be a list of non-empty class names. "
            f"Received: paragraph_classes={paragraph_classes!r}"
        )
    parser = _ParagraphParser(frozenset(paragraph_classes))
    parser.feed(text)
    parser.close()
    parser._flush()  # a paragraph left open at the end of the page
    return parser.paragraphs
