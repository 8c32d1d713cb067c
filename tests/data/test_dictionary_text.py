"""dictd dictionaries (GCIDE, FOLDOC) to plain-text documents."""

import gzip

import pytest

from keras_albert.data.dictionary_text import distinct_entries
from keras_albert.data.dictionary_text import foldoc_documents
from keras_albert.data.dictionary_text import gcide_documents
from keras_albert.data.dictionary_text import is_websters_only
from keras_albert.data.dictionary_text import read_dictd
from keras_albert.data.dictionary_text import source_tag

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

HORSE = """Horse \\Horse\\ (h[^o]rs), n. [AS. hors; akin to OS. hros.]
   1. (Zool.) A hoofed quadruped of the genus {Equus};
      especially, the domestic horse, used for drawing. --Shak.
      [1913 Webster]

            A horse! a horse! my kingdom for a horse! --Shak.
      [1913 Webster]

   2. solid-hoofed herbivorous quadruped domesticated since
      prehistoric times
      [WordNet 1.5]
"""
ENTRIES = {"00-database-info": "about this dictionary\n", "Horse": HORSE}


def _number(value):
    digits = ""
    while True:
        digits = _B64[value % 64] + digits
        value //= 64
        if not value:
            return digits


def _write_dictd(directory, entries, compress=True):
    data, index = b"", []
    for word, text in entries.items():
        encoded = text.encode()
        index.append(f"{word}\t{_number(len(data))}\t{_number(len(encoded))}\n")
        data += encoded
    dict_path = directory / ("x.dict.dz" if compress else "x.dict")
    # Closed before reading: Python 3.12 leaves an unclosed GzipFile's data
    # unwritten (the device machine's Python read an empty dictionary).
    with (gzip.open if compress else open)(dict_path, "wb") as file:
        file.write(data)
    (directory / "x.index").write_text("".join(index))
    return directory / "x.index", dict_path


@pytest.mark.parametrize("compress", [True, False])
def test_read_dictd_skips_the_database_description(tmp_path, compress):
    entries = list(read_dictd(*_write_dictd(tmp_path, ENTRIES, compress)))
    assert entries == [("Horse", HORSE)]


def test_gcide_keeps_websters_text_and_drops_wordnets(tmp_path):
    documents = list(gcide_documents(read_dictd(*_write_dictd(tmp_path, ENTRIES))))
    assert documents == [[
        "A hoofed quadruped of the genus Equus; especially, the domestic horse, "
        "used for drawing.",
        "A horse! a horse! my kingdom for a horse!",
    ]]
    assert not any("prehistoric" in s for d in documents for s in d)


def test_foldoc_documents(tmp_path):
    entry = "ALGOL\n\n   <language> An early {programming language} for\n   algorithms.\n\n   (1995-01-01)\n"
    documents = list(foldoc_documents(read_dictd(*_write_dictd(tmp_path, {"ALGOL": entry}))))
    assert documents == [["<language> An early programming language for algorithms."]]


def test_malformed_index_line_is_named(tmp_path):
    index, dict_path = _write_dictd(tmp_path, ENTRIES)
    index.write_text("Horse\tA\n")
    with pytest.raises(ValueError, match="line 1: expected headword"):
        list(read_dictd(index, dict_path))


def test_gcide_drops_paragraphs_tagged_webster_and_wordnet(tmp_path):
    # GCIDE merged WordNet glosses into some Webster's paragraphs and tags
    # them with both sources; a held-out gloss could enter that way.
    entry = HORSE + (
        "\n   3. A frame with legs, used to support something.\n"
        "      [1913 Webster + WordNet 1.5]\n"
        "\n   4. An animal that pulls a cart on a farm.\n"
        "      [WordNet 1.5 + 1913 Webster]\n"
        "\n   5. Cavalry; horsemen; as, a regiment of horse.\n"
        "      [1913\n      Webster]\n"
    )
    sentences = [s for d in gcide_documents(read_dictd(*_write_dictd(tmp_path, {"Horse": entry}))) for s in d]
    assert not any("frame with legs" in s or "pulls a cart" in s for s in sentences)
    # A tag wrapped over two lines is still read.
    assert "Cavalry; horsemen; as, a regiment of horse." in sentences


@pytest.mark.parametrize("paragraph, tag, websters_only", [
    ("text\n [1913 Webster]", "1913 Webster", True),
    ("text\n [Webster 1913 Suppl.]", "Webster 1913 Suppl.", True),
    ("text\n [1913 Webster + WordNet 1.5]", "1913 Webster + WordNet 1.5", False),
    ("text\n [WordNet 1.5]", "WordNet 1.5", False),
    ("text without a note", "", False),
])
def test_source_tag(paragraph, tag, websters_only):
    assert source_tag(paragraph) == tag
    assert is_websters_only(tag) is websters_only


def test_distinct_entries_reads_an_entry_listed_under_two_headwords_once(tmp_path):
    index, dict_path = _write_dictd(tmp_path, ENTRIES)
    horse_line = index.read_text().splitlines()[1]
    index.write_text(index.read_text() + horse_line.replace("Horse", "Horses", 1) + "\n")
    assert [word for word, _ in read_dictd(index, dict_path)] == ["Horse", "Horses"]
    assert list(distinct_entries(read_dictd(index, dict_path))) == [("Horse", HORSE)]
