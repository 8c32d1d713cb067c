"""Builds the English pretraining corpus of the bundled presets.

Sources (provenance and licences: keras_albert/datasets/data/PROVENANCE.md):
  austen.txt    the bundled Austen novels except Persuasion, without the
                long-document task's test chapters (public domain); each
                run of consecutive kept chapters is a document
  wordnet.txt   WordNet 3.0 glosses and examples of the supersense *train*
                split, all parts of speech, in a seeded random order,
                GLOSSES_PER_DOCUMENT synsets per document: neither grouped
                by supersense nor in offset order, which is grouped by
                supersense too, so no document says which glosses share a
                class (WordNet licence)
  gcide.txt     Webster's 1913 text of GCIDE (Debian `dict-gcide`, GPL-2+;
                the 1913 text itself is in the public domain), one entry
                per document (once, not once per headword); paragraphs
                GCIDE took from WordNet, alone or merged with Webster's,
                are dropped
  foldoc.txt    the Free On-line Dictionary of Computing (Debian
                `dict-foldoc`, GPL-2+)
  kjv.txt       the King James Bible, one chapter per document (Debian
                `bible-kjv-text`, read with `bible-kjv`'s program; the 1611
                text is in the public domain, the program GPL-2+)
  pydoc.txt     the prose of Python 3.11's documentation, one source file
                per document, code and markup removed (Debian
                `python3.11-doc`'s reST sources; PSF License)
  handbook.txt  The Debian Administrator's Handbook (Debian
                `debian-handbook`, English HTML; GPL-2+ or CC-BY-SA-3.0),
                one page per document
  gitdoc.txt    Git's manuals, user manual, tutorials and how-tos (Debian
                `git-doc`, HTML; GPL-2), one page per document
  perldoc.txt   Perl's manuals (perlintro, perlfaq, perlre, ...; Debian
                `perl-doc`, POD sources; GPL-1+ or Artistic), one manual
                per document; release notes, the table of contents and the
                translations left out
  rustbooks.txt The Rust Programming Language, The Rust Reference and The
                Rustonomicon (Debian `rust-doc`, HTML; MIT or Apache-2.0),
                one page per document
  persuasion.txt  the held-out evaluation corpus, never trained on

Debian packages are fetched here, at build time, with `apt-get download`
(never at run time); the KJV step runs the amd64 `bible` program they
contain. HTML and POD are reduced to prose by `keras_albert.data.html_text`
and `keras_albert.data.pod_text`: paragraphs only, no code blocks, titles
or tables.

Every training line passes `HeldOutGuard` (containment of Persuasion, the
supersense validation/test glosses and the long-document test chapters;
see keras_albert/datasets/heldout.py), then an exact-duplicate filter
across all sources (a line of DEDUP_MIN_WORDS or more words already
written, in any source, is dropped). The written files are checked again,
by the guard and by an independent search for whole held-out passages.
`corpus_stats.json` records, per source, the words and lines kept, the
lines dropped per held-out set and as duplicates, and the Debian package
files used.

Usage:
    python tools/build_english_corpus.py --output runs/corpus
"""

import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np

from keras_albert import datasets
from keras_albert.data.bible_text import kjv_chapters
from keras_albert.data.dictionary_text import distinct_entries
from keras_albert.data.dictionary_text import foldoc_documents
from keras_albert.data.dictionary_text import gcide_documents
from keras_albert.data.dictionary_text import read_dictd
from keras_albert.data.html_text import html_paragraphs
from keras_albert.data.pod_text import pod_paragraphs
from keras_albert.data.prose_sentences import prose_sentences_of
from keras_albert.data.restructured_text import prose_sentences
from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED
from keras_albert.datasets.heldout import HeldOutGuard
from keras_albert.datasets.heldout import find_contained
from keras_albert.datasets.heldout import normalize

PACKAGES = {"gcide": "dict-gcide", "foldoc": "dict-foldoc"}
# Synsets per WordNet document, and the seed of their order.
GLOSSES_PER_DOCUMENT = 16
WORDNET_ORDER_SEED = 0
SOURCES = (
    "austen", "wordnet", "gcide", "foldoc", "kjv", "pydoc",
    "handbook", "gitdoc", "perldoc", "rustbooks",
)
# Release notes are lists of unrelated changes: no discourse order.
PYDOC_SKIPPED = ("whatsnew",)
# The handbook's index page is its legal notice and table of contents.
HANDBOOK_SKIPPED = ("index.html",)
# Perl's release notes (perl5360delta, ...), generated references (the
# table of contents, the C API, the Unicode property tables), licences and
# the introductions in Chinese, Japanese and Korean.
PERLDOC_SKIPPED = re.compile(
    r"^perl(\d*delta|toc|api|intern|uniprops|hist|artistic|gpl|cn|jp|ko|tw)$"
)
RUST_BOOKS = ("book", "reference", "nomicon")
# print.html is a whole book on one page; 2018-edition/ repeats the book.
RUST_SKIPPED = ("print.html", "toc.html", "404.html", "2018-edition")
# Shorter lines repeat naturally ("And he said unto them,"); a longer
# exact repeat is a copy (a dictionary entry listed twice, an option
# description included in several manual pages).
DEDUP_MIN_WORDS = 6
TRAINING_FILES = tuple(f"{source}.txt" for source in SOURCES)


def unpack_debian_package(package, workdir, into, members=()):
    """`apt-get download`s a package into workdir and unpacks it into `into`.

    `members`, if given, are the archive paths (shell patterns) to unpack,
    e.g. `./usr/share/doc/rust-doc/html/book/*`: rust-doc is 0.5 GB
    unpacked, of which the books are a few MB.
    """
    subprocess.run(["apt-get", "download", package], cwd=workdir, check=True)
    deb = next(pathlib.Path(workdir).glob(f"{package}_*.deb"))
    pathlib.Path(into).mkdir(parents=True, exist_ok=True)
    if members:
        archive = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(into), "--wildcards", *members], stdin=archive.stdout, check=True)
        archive.stdout.close()
        if archive.wait():
            raise RuntimeError(f"dpkg-deb could not read {deb}")
    else:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(into)], check=True)
    return pathlib.Path(into)


def debian_dictionary(name, workdir):
    """Downloads and unpacks a dictd package; returns (index, dict) paths."""
    unpacked = unpack_debian_package(PACKAGES[name], workdir, pathlib.Path(workdir) / name)
    dictd = unpacked / "usr" / "share" / "dictd"
    return dictd / f"{name}.index", dictd / f"{name}.dict.dz"


def dictionary_entries(name, workdir):
    """Each distinct entry of a dictd dictionary once, not once per headword."""
    return distinct_entries(read_dictd(*debian_dictionary(name, workdir)))


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


def _page_documents(paths, paragraphs_of):
    """One document of prose sentences per page, pages of one sentence left out."""
    for path in paths:
        sentences = prose_sentences_of(paragraphs_of(path.read_text(encoding="utf-8", errors="replace")))
        if len(sentences) >= 2:  # a pair needs two
            yield sentences


def handbook_documents(workdir):
    """Each page of The Debian Administrator's Handbook (English) as a document."""
    unpacked = unpack_debian_package("debian-handbook", workdir, pathlib.Path(workdir) / "handbook")
    pages = unpacked / "usr" / "share" / "doc" / "debian-handbook" / "html" / "en-US"
    paths = [path for path in sorted(pages.glob("*.html")) if path.name not in HANDBOOK_SKIPPED]
    return _page_documents(paths, html_paragraphs)


def git_doc_documents(workdir):
    """Each HTML page of Git's documentation (manuals, how-tos, technical notes)."""
    unpacked = unpack_debian_package("git-doc", workdir, pathlib.Path(workdir) / "gitdoc")
    pages = unpacked / "usr" / "share" / "doc" / "git-doc"
    return _page_documents(sorted(pages.rglob("*.html")), html_paragraphs)


def perl_doc_documents(workdir):
    """Each of Perl's manuals (`pod/*.pod`) but release notes and references."""
    unpacked = unpack_debian_package("perl-doc", workdir, pathlib.Path(workdir) / "perldoc")
    paths = sorted((unpacked / "usr" / "share" / "perl").glob("*/pod/*.pod"))
    return _page_documents([p for p in paths if not PERLDOC_SKIPPED.match(p.stem)], pod_paragraphs)


def rust_book_documents(workdir):
    """Each page of the Rust books in RUST_BOOKS."""
    html = "./usr/share/doc/rust-doc/html"
    unpacked = unpack_debian_package(
        "rust-doc", workdir, pathlib.Path(workdir) / "rustbooks",
        members=[f"{html}/{book}/*" for book in RUST_BOOKS],
    )
    paths = []
    for book in RUST_BOOKS:
        root = unpacked / html / book
        paths += [
            path for path in sorted(root.rglob("*.html"))
            if not set(path.relative_to(root).parts) & set(RUST_SKIPPED)
        ]
    return _page_documents(paths, html_paragraphs)


def austen_documents(seed=LONG_DOCUMENT_SEED):
    """The novels but Persuasion, without the long-document test chapters.

    Each run of consecutive chapters left is a document of sentences, so
    no sentence pair spans a removed chapter.
    """
    test_chapters = datasets.split_chapters(seed=seed)["test"]
    for novel in datasets.AUSTEN_NOVELS:
        if novel == datasets.HELD_OUT_NOVEL:
            continue
        run = []
        for index, chapter in enumerate(datasets.load_austen_chapters(novel)):
            if index in test_chapters[novel]:
                if run:
                    yield run
                run = []
            else:
                run += [s for paragraph in chapter for s in datasets.split_sentences(paragraph)]
        if run:
            yield run


def wordnet_synset_documents(seed=WORDNET_ORDER_SEED):
    """The training synsets in a seeded random order, GLOSSES_PER_DOCUMENT a document.

    Not in offset order: WordNet's data files list synsets one
    lexicographer file (supersense) after another.
    """
    synsets = [s for s in datasets.load_wordnet_synsets() if datasets.split_of(s.synset) == "train"]
    order = np.random.default_rng(seed).permutation(len(synsets))
    for start in range(0, len(order), GLOSSES_PER_DOCUMENT):
        yield [synsets[i] for i in order[start:start + GLOSSES_PER_DOCUMENT]]


def wordnet_documents(seed=WORDNET_ORDER_SEED):
    """Each synset's definition, then its examples, for each document."""
    for synsets in wordnet_synset_documents(seed):
        lines = []
        for synset in synsets:
            lines.append(synset.definition.strip().rstrip(".") + ".")
            lines += [example.strip() for example in synset.examples if example.strip()]
        yield lines


class RepeatedLines:
    """Remembers every line written; says whether a line was written before.

    Lines are compared normalised (see `heldout.normalize`), by hash.
    Lines shorter than `min_words` are never repeats.
    """

    def __init__(self, min_words=DEDUP_MIN_WORDS):
        self.min_words = min_words
        self._seen = set()

    def repeated(self, line):
        """True if `line` was seen before; else remembers it and returns False."""
        words = normalize(line).split()
        if len(words) < self.min_words:
            return False
        key = hash(tuple(words))
        if key in self._seen:
            return True
        self._seen.add(key)
        return False


def write_documents(path, documents, guard, repeats=None):
    """One sentence per line, a blank line between documents.

    Lines that hold held-out text are dropped, then lines `repeats` has
    seen (in this or an earlier source).

    Returns:
        {"documents", "lines", "words", "held_out_dropped": {set: lines},
         "duplicates_dropped"}.
    """
    repeats = RepeatedLines() if repeats is None else repeats
    stats = {"documents": 0, "lines": 0, "words": 0, "held_out_dropped": {}, "duplicates_dropped": 0}
    with open(path, "w", encoding="utf-8") as file:
        for document in documents:
            clean = []
            for line in (" ".join(line.split()) for line in document):
                if not line:
                    continue
                held_out = guard.match(line)
                if held_out:
                    stats["held_out_dropped"][held_out] = stats["held_out_dropped"].get(held_out, 0) + 1
                elif repeats.repeated(line):
                    stats["duplicates_dropped"] += 1
                else:
                    clean.append(line)
            if clean:
                file.write("\n".join(clean) + "\n\n")
                stats["documents"] += 1
                stats["lines"] += len(clean)
                stats["words"] += sum(len(line.split()) for line in clean)
    print(f"{path.name}: {stats['words']} words, {stats['lines']} lines; dropped "
          f"{sum(stats['held_out_dropped'].values())} held-out lines {stats['held_out_dropped']} "
          f"and {stats['duplicates_dropped']} repeated lines", flush=True)
    return stats


def _debian_package_files(workdir):
    return sorted(path.name for path in pathlib.Path(workdir).glob("*.deb"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/corpus")
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=SOURCES)
    args = parser.parse_args()
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    guard, repeats = HeldOutGuard(), RepeatedLines()
    stats = {}

    def write(source, documents):
        stats[source] = write_documents(output / f"{source}.txt", documents, guard, repeats)

    # Written in SOURCES order: the first copy of a repeated line is kept.
    with tempfile.TemporaryDirectory() as workdir:
        readers = {
            "austen": austen_documents,
            "wordnet": wordnet_documents,
            "gcide": lambda: gcide_documents(dictionary_entries("gcide", workdir)),
            "foldoc": lambda: foldoc_documents(dictionary_entries("foldoc", workdir)),
            "kjv": lambda: kjv_chapters(kjv_verse_lines(workdir)),
            "pydoc": lambda: python_doc_documents(workdir),
            "handbook": lambda: handbook_documents(workdir),
            "gitdoc": lambda: git_doc_documents(workdir),
            "perldoc": lambda: perl_doc_documents(workdir),
            "rustbooks": lambda: rust_book_documents(workdir),
        }
        for source in SOURCES:
            if source in args.sources:
                write(source, readers[source]())
        packages = _debian_package_files(workdir)
    persuasion = datasets.load_austen_documents(
        names=(datasets.HELD_OUT_NOVEL,), exclude=(), sentences=True)[0]
    (output / "persuasion.txt").write_text("\n".join(persuasion) + "\n", encoding="utf-8")
    # Belt and braces: read back what was written, refuse held-out text,
    # and search it for whole held-out passages another way.
    contained = {}
    for name in TRAINING_FILES:
        path = output / name
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            guard.check(lines, where=str(path))
            found = find_contained(lines)
            contained[name] = {held_out: len(passages) for held_out, passages in found.items()}
            if found:
                raise ValueError(f"{path} holds whole held-out passages: {found}")
    summary = {
        "sources": stats,
        "total_words": sum(s["words"] for s in stats.values()),
        "debian_packages": packages,
        "held_out_passages_found_after_writing": contained,
        "wordnet": {"glosses_per_document": GLOSSES_PER_DOCUMENT, "order_seed": WORDNET_ORDER_SEED},
        "dedup_min_words": DEDUP_MIN_WORDS,
        "guard": {"ngram_words": guard.ngram_words, "min_contained_words": guard.min_contained_words,
                  "long_document_seed": LONG_DOCUMENT_SEED},
    }
    (output / "corpus_stats.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"total: {summary['total_words']} words", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
