"""HTML documentation pages to prose paragraphs."""

import pytest

from keras_albert.data.html_text import html_paragraphs

# The shapes of the two generators the corpus reads: Publican (DocBook,
# the Debian handbook) and AsciiDoc (Git's manuals).
HANDBOOK = """<?xml version="1.0" encoding="UTF-8"?>
<html><head><title>6.2. apt Commands</title><style>p { color: red }</style></head>
<body><div class="section"><h2 class="title">6.2. apt Commands</h2>
<div class="para">
  APT is a vast project. It is based on a library, and <code class="command">apt-get</code>
  is the first front end&nbsp;&mdash; command-line based.
</div><a id="id-1.9" class="indexterm"></a>
<div class="sidebar"><p class="title"><strong>TIP</strong></p>
<div class="para">First, retrieve the list of packages:</div>
<pre class="screen"><code>dpkg --get-selections &gt;pkg-list</code></pre>
<div class="para">The <code>pkg-list</code> file then holds the list.</div></div>
<table><tr><td><p>a cell, not prose</p></td></tr></table>
<script>var p = "<p>not text</p>";</script>
</div></body></html>"""

ASCIIDOC = """<html><body><div id="header"><h1>git-add(1) Manual Page</h1></div>
<div class="sectionbody"><div class="paragraph"><p>This command updates the index<br/>
using the current content.</p></div>
<div class="listingblock"><div class="content"><pre><code>$ git add .</code></pre></div></div>
<div class="dlist"><dl><dt class="hdlist1">-n</dt><dd><p>Don't actually add the file(s).</p></dd></dl></div>
</div></body></html>"""


def test_handbook_paragraphs_without_code_tables_scripts_or_titles():
    # The sidebar's title ("TIP") is a <p class="title">: a heading.
    assert html_paragraphs(HANDBOOK) == [
        "APT is a vast project. It is based on a library, and apt-get is the first "
        "front end \u2014 command-line based.",  # no-break space made plain
        "First, retrieve the list of packages:",
        "The pkg-list file then holds the list.",
    ]


def test_asciidoc_paragraphs_and_option_descriptions():
    assert html_paragraphs(ASCIIDOC) == [
        "This command updates the index using the current content.",
        "Don't actually add the file(s).",
    ]


def test_a_paragraph_holding_another_is_cut_there():
    text = '<div class="para">Before the list: <ul><li><p>an item</p></li></ul> and after.</div>'
    assert html_paragraphs(text) == ["Before the list:", "an item", "and after."]


def test_stray_end_tags_and_unclosed_paragraphs():
    assert html_paragraphs("</div><p>One</span> two.<p>Three") == ["One two.", "Three"]


@pytest.mark.parametrize("kwargs, message", [
    ({"text": b"<p>bytes</p>"}, "`text` must be a string"),
    ({"text": "", "paragraph_classes": "para"}, "`paragraph_classes` must be a list"),
    ({"text": "", "paragraph_classes": ["para", ""]}, "`paragraph_classes` must be a list"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        html_paragraphs(**kwargs)
