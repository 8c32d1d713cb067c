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
