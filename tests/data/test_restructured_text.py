"""keras_albert.data.restructured_text: only the prose of reST sources reaches
the pretraining corpus, in order, without markup."""

from keras_albert.data.restructured_text import prose_paragraphs
from keras_albert.data.restructured_text import prose_sentences

# Shaped like Python's library reference: a title, module directives, a
# literal block, a prose directive with options, a code directive, a table.
SOURCE = """\
:mod:`spam` --- Eggs and ham
============================

.. module:: spam
   :synopsis: Eggs and ham.

.. index:: single: spam

The :mod:`spam` module cooks ``eggs`` with the help of :func:`~spam.fry`.
Read `the guide <https://example.org>`_ first.  For example::

   >>> spam.fry(2)
   'two eggs'

.. function:: fry(count, *, oil=None)
   :noindex:

   Fry *count* eggs and return a **string**.  See :pep:`8`.

   .. versionadded:: 3.2

   .. code-block:: python

      print("not prose, not kept")

   The result is never empty.

+-------+-------+
| spam  | eggs  |
+-------+-------+

=====  =====
a      b
=====  =====

:param count: how many

* A list item is prose too.
>>> not_kept()

.. This comment is not prose either
   and runs over two lines.

Last words of the page.
"""


def test_only_prose_paragraphs_are_kept_in_order_without_markup():
    assert prose_paragraphs(SOURCE) == [
        "The spam module cooks eggs with the help of spam.fry. "
        "Read the guide first. For example:",
        "Fry count eggs and return a string. See PEP 8.",
        "The result is never empty.",
        "A list item is prose too.",
        "Last words of the page.",
    ]


def test_a_paragraph_that_is_only_a_literal_marker_disappears_with_its_block():
    source = "Intro text here.\n\n::\n\n   code()\n\nAfter the code.\n"
    assert prose_paragraphs(source) == ["Intro text here.", "After the code."]


def test_a_skipped_construct_ends_where_the_indentation_returns():
    source = ".. toctree::\n   :maxdepth: 2\n\n   tutorial\n   library\n\nBack to prose.\n"
    assert prose_paragraphs(source) == ["Back to prose."]


def test_sentences_are_split_and_fragments_dropped():
    source = "The cat sat down.  It was tired.  x = 1 + 2 == 3.\n\nReturns None.\n"
    # "It was tired." and "Returns None." have fewer than four words;
    # "x = 1 + 2 == 3." is mostly symbols.
    assert prose_sentences(source) == ["The cat sat down."]


def test_sentences_of_a_realistic_page_keep_their_order():
    sentences = prose_sentences(SOURCE)
    assert sentences[0] == "The spam module cooks eggs with the help of spam.fry."
    assert sentences[-1] == "Last words of the page."
    assert not any("not prose" in s or "kept" in s or "|" in s for s in sentences)
