"""`bible -f` output (Debian bible-kjv) to one document per chapter."""

import pytest

from keras_albert.data.bible_text import kjv_chapters

# The program's unformatted output, as the corpus builder reads it
# (real verses; book numbers and multi-letter abbreviations included).
OUTPUT = """Ge1:1 In the beginning God created the heaven and the earth.
Ge1:2 And the earth was without form, and void.

Ge2:1 Thus the heavens and the earth were finished, and all the host of them.
1Sm1:1 Now there was a certain man of Ramathaimzophim.
1Sm1:2 And he had two wives.
Rev22:21 The grace of our Lord Jesus Christ be with you all. Amen.
"""


def test_each_chapter_is_a_document_with_its_verses_in_order():
    chapters = list(kjv_chapters(OUTPUT.splitlines()))
    assert chapters == [
        ["In the beginning God created the heaven and the earth.",
         "And the earth was without form, and void."],
        ["Thus the heavens and the earth were finished, and all the host of them."],
        ["Now there was a certain man of Ramathaimzophim.", "And he had two wives."],
        ["The grace of our Lord Jesus Christ be with you all. Amen."],
    ]


def test_the_same_chapter_number_in_another_book_starts_a_new_document():
    chapters = list(kjv_chapters(["1Jn1:1 That which was.", "2Jn1:1 The elder."]))
    assert chapters == [["That which was."], ["The elder."]]


def test_a_line_that_is_not_a_verse_stops_the_build_naming_it():
    with pytest.raises(ValueError, match=r"line 2 .*Genesis Chapter 1"):
        list(kjv_chapters(["Ge1:1 In the beginning.", "Genesis Chapter 1"]))


def test_no_output_gives_no_documents():
    assert list(kjv_chapters([])) == []
