"""tools/build_english_corpus.py: every source is written as documents,
without held-out text or repeated lines; WordNet documents carry no label."""

import collections
import json
import sys

from keras_albert import datasets
from keras_albert.data.bible_text import kjv_chapters
from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED
from keras_albert.datasets.heldout import HeldOutGuard
from tests.scripts import load_script

corpus_tool = load_script("tools/build_english_corpus.py")


def _persuasion_sentence():
    persuasion = datasets.load_austen_documents(names=(datasets.HELD_OUT_NOVEL,), exclude=(), sentences=True)[0]
    return next(s for s in persuasion if len(s.split()) >= 12)


def test_kjv_chapters_are_written_as_documents_without_held_out_lines(tmp_path):
    held_out = _persuasion_sentence()
    # What `bible -f` prints, with a Persuasion sentence slipped into a verse.
    verses = ["Ge1:1 In the beginning God created the heaven and the earth.",
              f"Ge1:2 {held_out}",
              "Ge2:1 Thus the heavens and the earth were finished."]
    path = tmp_path / "kjv.txt"
    corpus_tool.write_documents(path, kjv_chapters(verses), HeldOutGuard())
    text = path.read_text(encoding="utf-8")
    assert text == ("In the beginning God created the heaven and the earth.\n\n"
                    "Thus the heavens and the earth were finished.\n\n")
    HeldOutGuard().check(text.splitlines(), where=str(path))


def test_kjv_is_a_default_source_and_a_checked_training_file():
    assert "kjv" in corpus_tool.SOURCES
    assert "kjv.txt" in corpus_tool.TRAINING_FILES


def test_python_docs_give_one_document_per_source_without_release_notes_or_held_out_text(
    tmp_path, monkeypatch
):
    held_out = _persuasion_sentence()
    unpacked = tmp_path / "pydoc"
    sources = unpacked / "usr" / "share" / "doc" / "python3.11" / "html" / "_sources"
    pages = {
        "library/spam.rst.txt": "Spam\n====\n\nThe spam module cooks eggs.  It fries them in oil::\n\n"
                                f"   spam.fry()\n\n{held_out}\n\nEvery egg is cooked twice over.\n",
        "tutorial/intro.rst.txt": "Python is a language you can learn.  This tutorial shows you how.\n",
        "whatsnew/3.11.rst.txt": "Many things changed in this release.  Here is the list of them.\n",
        "faq/short.rst.txt": "One sentence only here.\n",
    }
    for name, text in pages.items():
        (sources / name).parent.mkdir(parents=True, exist_ok=True)
        (sources / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(corpus_tool, "unpack_debian_package",
                        lambda package, workdir, into, members=(): unpacked if package == "python3.11-doc" else None)
    path = tmp_path / "pydoc.txt"
    corpus_tool.write_documents(path, corpus_tool.python_doc_documents(tmp_path), HeldOutGuard())
    assert path.read_text(encoding="utf-8") == (
        "The spam module cooks eggs.\nIt fries them in oil:\nEvery egg is cooked twice over.\n\n"
        "Python is a language you can learn.\nThis tutorial shows you how.\n\n"
    )
    assert "pydoc" in corpus_tool.SOURCES and "pydoc.txt" in corpus_tool.TRAINING_FILES


def _unpacked_tree(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _page(*paragraphs):
    return "<html><body><h1>Title</h1>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "<pre>$ make</pre></body></html>"


def test_documentation_packages_give_one_document_per_page_without_held_out_text(tmp_path, monkeypatch):
    held_out = _persuasion_sentence()
    trees = {
        "debian-handbook": {
            "usr/share/doc/debian-handbook/html/en-US/apt.html": _page(
                "APT is a vast project with many parts.", f"It said: {held_out}", "Both tools share one library."),
            "usr/share/doc/debian-handbook/html/en-US/index.html": _page("Copyright notice of the book.", "Two."),
            "usr/share/doc/debian-handbook/html/fr-FR/apt.html": _page("Le projet APT est vaste.", "Deux outils."),
        },
        "git-doc": {
            "usr/share/doc/git-doc/git-add.html": _page("This command updates the index.", "It adds new files too."),
            "usr/share/doc/git-doc/howto/fix.html": _page("Sometimes a merge goes wrong.", "Here is how to undo it."),
        },
        "perl-doc": {
            "usr/share/perl/5.36.0/pod/perlintro.pod":
                "=head1 NAME\n\nperlintro - a brief introduction\n\n=head1 DESCRIPTION\n\n"
                "Perl is a general-purpose language.  It runs C<perl> programs.\n\n    print 1;\n",
            "usr/share/perl/5.36.0/pod/perl5360delta.pod": "=pod\n\nWhat changed in this release.  A lot.\n",
            "usr/share/perl/5.36.0/pod/perltoc.pod": "=pod\n\nThe table of contents is long.  Very long.\n",
        },
        "rust-doc": {
            "usr/share/doc/rust-doc/html/book/ch01.html": _page("Rust is a language for systems.", "It is very fast."),
            "usr/share/doc/rust-doc/html/book/print.html": _page("Rust is a language for systems.", "It is very fast."),
            "usr/share/doc/rust-doc/html/book/2018-edition/ch01.html": _page("An old copy here.", "Another one."),
            "usr/share/doc/rust-doc/html/nomicon/intro.html": _page("Unsafe code is a sharp tool.", "Use it with care."),
        },
    }
    trees = {package: _unpacked_tree(tmp_path / package, files) for package, files in trees.items()}
    asked = {}

    def unpack(package, workdir, into, members=()):
        asked[package] = list(members)
        return trees[package]

    monkeypatch.setattr(corpus_tool, "unpack_debian_package", unpack)
    guard = HeldOutGuard()
    written = {}
    for source, reader in [("handbook", corpus_tool.handbook_documents), ("gitdoc", corpus_tool.git_doc_documents),
                           ("perldoc", corpus_tool.perl_doc_documents), ("rustbooks", corpus_tool.rust_book_documents)]:
        path = tmp_path / f"{source}.txt"
        stats = corpus_tool.write_documents(path, reader(tmp_path), guard)
        written[source] = path.read_text(encoding="utf-8")
        assert source in corpus_tool.SOURCES and f"{source}.txt" in corpus_tool.TRAINING_FILES
        if source == "handbook":
            assert stats["held_out_dropped"] == {"persuasion": 1}
    assert written == {
        # English pages only, not the index; the held-out line dropped.
        "handbook": "APT is a vast project with many parts.\nBoth tools share one library.\n\n",
        "gitdoc": "This command updates the index.\nIt adds new files too.\n\n"
                  "Sometimes a merge goes wrong.\nHere is how to undo it.\n\n",
        # No release notes, no table of contents, no code.
        "perldoc": "perlintro - a brief introduction\nPerl is a general-purpose language.\nIt runs perl programs.\n\n",
        # No whole-book page, no old edition.
        "rustbooks": "Rust is a language for systems.\nIt is very fast.\n\nUnsafe code is a sharp tool.\nUse it with care.\n\n",
    }
    # Only the books are unpacked from rust-doc (0.5 GB in all).
    assert asked["rust-doc"] == [f"./usr/share/doc/rust-doc/html/{book}/*" for book in corpus_tool.RUST_BOOKS]


def test_repeated_lines_are_dropped_across_sources(tmp_path):
    repeats = corpus_tool.RepeatedLines()
    guard = HeldOutGuard({})
    first = [["A court for settling claims against a state or government.", "Yes, he said so."]]
    second = [["A court for settling claims against a STATE or government!", "Yes, he said so.", "A new line of text."],
              ["A court for settling claims against a state or government."]]
    corpus_tool.write_documents(tmp_path / "a.txt", first, guard, repeats)
    stats = corpus_tool.write_documents(tmp_path / "b.txt", second, guard, repeats)
    # Short lines repeat naturally and stay; a document left empty is not written.
    assert (tmp_path / "b.txt").read_text() == "Yes, he said so.\nA new line of text.\n\n"
    assert stats == {"documents": 1, "lines": 2, "words": 9, "held_out_dropped": {}, "duplicates_dropped": 2}


def test_wordnet_documents_carry_no_supersense_signal():
    documents = list(corpus_tool.wordnet_synset_documents())
    synsets = [s for document in documents for s in document]
    train = [s for s in datasets.load_wordnet_synsets() if datasets.split_of(s.synset) == "train"]
    assert sorted(s.synset for s in synsets) == sorted(s.synset for s in train)
    assert all(len(d) == corpus_tool.GLOSSES_PER_DOCUMENT for d in documents[:-1])
    shares = collections.Counter(s.supersense for s in train)
    chance = sum((count / len(train)) ** 2 for count in shares.values())
    neighbours = [(a.supersense, b.supersense) for d in documents for a, b in zip(d, d[1:])]
    same = sum(a == b for a, b in neighbours) / len(neighbours)
    # Grouped documents (the old corpus, or offset order) give about 1.0.
    assert same < 1.5 * chance, (same, chance)
    one_class = sum(len({s.supersense for s in d}) == 1 for d in documents)
    assert one_class <= 0.01 * len(documents)
    # The text follows the synset order: a definition, then its examples.
    first = next(corpus_tool.wordnet_documents())
    assert first[0] == documents[0][0].definition.strip().rstrip(".") + "."


def test_austen_documents_leave_out_persuasion_and_the_long_document_test_chapters():
    test_chapters = datasets.split_chapters(seed=LONG_DOCUMENT_SEED)["test"]
    documents = list(corpus_tool.austen_documents())
    written = {sentence for document in documents for sentence in document}
    for novel in datasets.AUSTEN_NOVELS:
        chapters = datasets.load_austen_chapters(novel)
        for index, chapter in enumerate(chapters):
            sentences = {s for p in chapter for s in datasets.split_sentences(p) if len(s.split()) > 12}
            if novel == datasets.HELD_OUT_NOVEL or index in test_chapters[novel]:
                assert not sentences & written, (novel, index)
            else:
                assert sentences <= written, (novel, index)
    # One document per run of kept chapters: at least one per novel.
    assert len(documents) >= 5


def test_main_writes_the_stats_of_each_source(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["build", "--output", str(tmp_path), "--sources", "austen"])
    assert corpus_tool.main() == 0
    stats = json.loads((tmp_path / "corpus_stats.json").read_text())
    austen = stats["sources"]["austen"]
    assert austen["words"] == stats["total_words"] > 400_000
    assert austen["words"] == sum(len(line.split()) for line in (tmp_path / "austen.txt").read_text().splitlines())
    assert set(austen["held_out_dropped"]) <= {"persuasion", "supersense_validation", "supersense_test",
                                               "long_document_test"}
    assert stats["held_out_passages_found_after_writing"] == {"austen.txt": {}}
    assert (tmp_path / "persuasion.txt").exists() and not (tmp_path / "gcide.txt").exists()


def test_dictionary_entries_are_read_once_not_once_per_headword(tmp_path, monkeypatch):
    data = b"Horse: a hoofed quadruped of the genus Equus.\n"
    (tmp_path / "x.dict").write_bytes(data)
    # Two headwords, one entry (offset A = 0, length from the base64 digits).
    length = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[len(data)]
    (tmp_path / "x.index").write_text(f"Horse\tA\t{length}\nHorses\tA\t{length}\n")
    monkeypatch.setattr(corpus_tool, "debian_dictionary", lambda name, workdir: (tmp_path / "x.index", tmp_path / "x.dict"))
    assert list(corpus_tool.dictionary_entries("gcide", tmp_path)) == [("Horse", data.decode())]
