"""Builds the English pretraining corpus of the bundled presets.

Sources (provenance and licences: keras_albert/datasets/data/PROVENANCE.md):
  austen.txt    the bundled Austen novels except Persuasion (public domain)
  wordnet.txt   WordNet 3.0 glosses and examples of the supersense *train*
                split, all parts of speech, grouped by supersense (WordNet
                licence)
  gcide.txt     Webster's 1913 text of GCIDE (Debian `dict-gcide`, GPL-2+;
                the 1913 text itself is in the public domain), one entry
                per document; paragraphs GCIDE took from WordNet are dropped
  foldoc.txt    the Free On-line Dictionary of Computing (Debian
                `dict-foldoc`, GPL-2+)
  kjv.txt       the King James Bible, one chapter per document (Debian
                `bible-kjv-text`, read with `bible-kjv`'s program; the 1611
                text is in the public domain, the program GPL-2+)
  pydoc.txt     the prose of Python 3.11's documentation, one source file
                per document, code and markup removed (Debian
                `python3.11-doc`'s reST sources; PSF License)
  persuasion.txt  the held-out evaluation corpus, never trained on

Debian packages are fetched here, at build time, with `apt-get download`
(never at run time); the KJV step runs the amd64 `bible` program they
contain. Every training line passes `HeldOutGuard`: lines that
repeat Persuasion or a supersense validation/test gloss are dropped, and
the written files are checked again.

Usage:
    python tools/build_english_corpus.py --output runs/corpus
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile

from keras_albert import datasets
from keras_albert.data.bible_text import kjv_chapters
from keras_albert.data.dictionary_text import foldoc_documents
from keras_albert.data.dictionary_text import gcide_documents
from keras_albert.data.dictionary_text import read_dictd
from keras_albert.data.restructured_text import prose_sentences
from keras_albert.datasets.heldout import HeldOutGuard

PACKAGES = {"gcide": "dict-gcide", "foldoc": "dict-foldoc"}
# Glosses of one supersense, this many synsets per document.
SYNSETS_PER_DOCUMENT = 16
SOURCES = ("austen", "wordnet", "gcide", "foldoc", "kjv", "pydoc")
# Release notes are lists of unrelated changes: no discourse order.
PYDOC_SKIPPED = ("whatsnew",)
TRAINING_FILES = tuple(f"{source}.txt" for source in SOURCES)


def unpack_debian_package(package, workdir, into):
    """`apt-get download`s a package into workdir and unpacks it into `into`."""
    subprocess.run(["apt-get", "download", package], cwd=workdir, check=True)
    deb = next(pathlib.Path(workdir).glob(f"{package}_*.deb"))
    subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    return pathlib.Path(into)


def debian_dictionary(name, workdir):
    """Downloads and unpacks a dictd package; returns (index, dict) paths."""
    unpacked = unpack_debian_package(PACKAGES[name], workdir, pathlib.Path(workdir) / name)
    dictd = unpacked / "usr" / "share" / "dictd"
    return dictd / f"{name}.index", dictd / f"{name}.dict.dz"


def kjv_verse_lines(workdir):
    """The whole King James Bible as `bible -f` prints it, one verse a line."""
    unpacked = pathlib.Path(workdir) / "kjv"
    for package in ("bible-kjv", "bible-kjv-text"):
        unpack_debian_package(package, workdir, unpacked)
    program = unpacked / "usr" / "bin" / "bible"
    # -f turns pretty-printing off: a reference before each verse, no
    # wrapping. -p names the directory of bible.data (-d takes a bare
    # file name and looks for it on that path).
    result = subprocess.run([str(program), "-f", "-p", str(unpacked / "usr" / "lib"), "gen1:1-rev22:21"],
                            capture_output=True, text=True, check=True)
    return result.stdout.splitlines()


def python_doc_documents(workdir):
    """Each reST source of the Python documentation as a list of its prose sentences."""
    unpacked = unpack_debian_package("python3.11-doc", workdir, pathlib.Path(workdir) / "pydoc")
    sources = unpacked / "usr" / "share" / "doc" / "python3.11" / "html" / "_sources"
    for path in sorted(sources.rglob("*.rst.txt")):
        if path.relative_to(sources).parts[0] not in PYDOC_SKIPPED:
            sentences = prose_sentences(path.read_text(encoding="utf-8"))
            if len(sentences) >= 2:  # a pair needs two
                yield sentences


def wordnet_documents():
    by_supersense = {}
    for synset in datasets.load_wordnet_synsets():
        if datasets.split_of(synset.synset) == "train":
            lines = [synset.definition.strip().rstrip(".") + "."]
            lines += [example.strip() for example in synset.examples if example.strip()]
            by_supersense.setdefault(synset.supersense, []).append(lines)
    for supersense in sorted(by_supersense):
        synsets = by_supersense[supersense]
        for start in range(0, len(synsets), SYNSETS_PER_DOCUMENT):
            chunk = synsets[start:start + SYNSETS_PER_DOCUMENT]
            yield [line for lines in chunk for line in lines]


def write_documents(path, documents, guard):
    """One sentence per line, a blank line between documents; held-out lines dropped."""
    kept = dropped = 0
    with open(path, "w", encoding="utf-8") as file:
        for document in documents:
            lines = [" ".join(line.split()) for line in document if line.strip()]
            clean = guard.drop(lines)
            dropped += len(lines) - len(clean)
            if len(clean) >= 1:
                file.write("\n".join(clean) + "\n\n")
                kept += len(clean)
    print(f"{path.name}: {kept} lines ({dropped} held-out lines dropped)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/corpus")
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=SOURCES)
    args = parser.parse_args()
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    guard = HeldOutGuard()
    if "austen" in args.sources:
        write_documents(output / "austen.txt", datasets.load_austen_documents(sentences=True), guard)
    if "wordnet" in args.sources:
        write_documents(output / "wordnet.txt", wordnet_documents(), guard)
    with tempfile.TemporaryDirectory() as workdir:
        if "gcide" in args.sources:
            entries = read_dictd(*debian_dictionary("gcide", workdir))
            write_documents(output / "gcide.txt", gcide_documents(entries), guard)
        if "foldoc" in args.sources:
            entries = read_dictd(*debian_dictionary("foldoc", workdir))
            write_documents(output / "foldoc.txt", foldoc_documents(entries), guard)
        if "kjv" in args.sources:
            write_documents(output / "kjv.txt", kjv_chapters(kjv_verse_lines(workdir)), guard)
        if "pydoc" in args.sources:
            write_documents(output / "pydoc.txt", python_doc_documents(workdir), guard)
    persuasion = datasets.load_austen_documents(
        names=(datasets.HELD_OUT_NOVEL,), exclude=(), sentences=True)[0]
    (output / "persuasion.txt").write_text("\n".join(persuasion) + "\n", encoding="utf-8")
    # Belt and braces: read back what was written and refuse held-out text.
    for name in TRAINING_FILES:
        path = output / name
        if path.exists():
            guard.check(path.read_text(encoding="utf-8").splitlines(), where=str(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
