"""tools/build_english_corpus.py: the KJV step writes chapters as documents
and, like every source, drops held-out text before it is written."""

import importlib.util
import pathlib

from keras_albert import datasets
from keras_albert.data.bible_text import kjv_chapters
from keras_albert.datasets.heldout import HeldOutGuard

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("build_english_corpus", ROOT / "tools" / "build_english_corpus.py")
corpus_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpus_tool)


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
                        lambda package, workdir, into: unpacked if package == "python3.11-doc" else None)
    path = tmp_path / "pydoc.txt"
    corpus_tool.write_documents(path, corpus_tool.python_doc_documents(tmp_path), HeldOutGuard())
    assert path.read_text(encoding="utf-8") == (
        "The spam module cooks eggs.\nIt fries them in oil:\nEvery egg is cooked twice over.\n\n"
        "Python is a language you can learn.\nThis tutorial shows you how.\n\n"
    )
    assert "pydoc" in corpus_tool.SOURCES and "pydoc.txt" in corpus_tool.TRAINING_FILES
