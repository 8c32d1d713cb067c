"""Builds the transfer suite's tasks beyond supersense from Debian packages.

Two text-classification tasks from sources unlike WordNet's glosses, each
split 80 / 10 / 10 into train / validation / test by a stable hash:

  debian_sections  a package's one-line description -> its archive section
                   (14 topical sections of Debian 12 "bookworm" main, from
                   the local apt index, `apt-cache dumpavail`; split by
                   source package, so sibling packages such as `foo-client`
                   and `foo-server` never straddle two splits). Package
                   descriptions are metadata of the Debian archive.
  fortunes         a fortune-cookie quotation -> the fortune file it ships
                   in (14 topical files of Debian `fortunes` 1:1.99.1, BSD
                   licence; split by the quotation's text)

Each task is written as `OUTPUT/TASK/{train,validation,test}.jsonl` (a
`text` and a `label` field per line, read by `keras_albert.data.task_files`) with a
`PROVENANCE.md`. A validation or test text that also occurs in the
training split is dropped, and with `--pretraining_corpus DIR` so is one
found whole inside a line of the corpus's `*.txt` files
(`keras_albert.datasets.heldout.find_contained`): an evaluation text must
not have been pretrained on.

Debian packages are fetched here, at build time, with `apt-get download`
(never at run time); the section index is the machine's apt lists.

    python tools/build_transfer_tasks.py --output runs/transfer_tasks \
        --pretraining_corpus runs/corpus_v2
"""

import argparse
import collections
import json
import pathlib
import subprocess
import sys
import tempfile
import zlib

from keras_albert.datasets.heldout import find_contained
from keras_albert.datasets.heldout import normalize

SPLITS = ("train", "validation", "test")
# Topical sections with a few hundred packages or more; the language
# ecosystems (python, perl, rust...) are left out because a package's
# section there is its language, and the catch-alls (utils, misc, libs,
# doc) because they say what a package is made of, not what it is about.
DEBIAN_SECTIONS = (
    "admin", "database", "editors", "electronics", "games", "graphics", "hamradio",
    "mail", "math", "net", "science", "sound", "video", "web",
)
# Fortune files about a subject; the rest are grab bags ("fortunes",
# "miscellaneous", "cookie"), one author's voice ("zippy") or a format
# ("definitions", "riddles") rather than a topic.
FORTUNE_FILES = (
    "art", "computers", "drugs", "education", "food", "law", "linux", "love",
    "medicine", "men-women", "politics", "science", "sports", "work",
)
FORTUNES_DIRECTORY = "usr/share/games/fortunes"


def split_of(key):
    """train / validation / test for a group key, 80 / 10 / 10 by crc32."""
    bucket = zlib.crc32(key.encode("utf-8")) % 100
    return "train" if bucket < 80 else "validation" if bucket < 90 else "test"


def debian_records(packages_text, sections=DEBIAN_SECTIONS):
    """(text, label, group) per package of `sections` in an apt Packages text."""
    records = []
    for stanza in packages_text.split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if line and not line[0].isspace() and ":" in line:
                name, value = line.split(":", 1)
                fields[name] = value.strip()
        section = fields.get("Section", "").split("/")[-1]
        if section not in sections or not fields.get("Description"):
            continue
        # "Source: foo (1.2-3)" names the source package and maybe a version.
        source = fields.get("Source", fields.get("Package", "")).split(" ")[0]
        records.append((fields["Description"], section, source))
    return records


def fortune_records(directory, files=FORTUNE_FILES):
    """(text, label, group) per quotation in the fortune `files` of `directory`."""
    records = []
    for name in files:
        path = pathlib.Path(directory) / name
        text = path.read_text(encoding="utf-8", errors="replace")
        for quotation in text.split("\n%\n"):
            # A quotation's line breaks are layout; one line per example.
            flat = " ".join(quotation.replace("%", " ").split())
            if flat:
                records.append((flat, name, flat))
    return records


def split_records(records):
    """{split: [(text, label)]}: one copy of each text, none shared with train."""
    splits = {name: [] for name in SPLITS}
    seen = set()
    # Train first, so a text in train and test is kept in train only.
    ordered = sorted(records, key=lambda record: SPLITS.index(split_of(record[2])))
    for text, label, group in ordered:
        key = normalize(text)
        if not key or key in seen:
            continue
        seen.add(key)
        splits[split_of(group)].append((text, label))
    return splits


def drop_pretrained(splits, corpus_lines):
    """Drops validation and test texts found whole inside the corpus lines."""
    evaluated = {name: [text for text, _ in splits[name]] for name in ("validation", "test")}
    found = find_contained(corpus_lines, evaluated, contained_sets=tuple(evaluated))
    dropped = {}
    for name in evaluated:
        copies = found.get(name, set())
        kept = [(text, label) for text, label in splits[name] if normalize(text) not in copies]
        dropped[name] = len(splits[name]) - len(kept)
        splits[name] = kept
    return dropped


def corpus_lines(directory):
    for path in sorted(pathlib.Path(directory).glob("*.txt")):
        with open(path, encoding="utf-8") as lines:
            yield from lines


def write_task(output, name, splits, provenance):
    folder = pathlib.Path(output) / name
    folder.mkdir(parents=True, exist_ok=True)
    counts = []
    for split, rows in splits.items():
        with open(folder / f"{split}.jsonl", "w", encoding="utf-8") as out:
            for text, label in rows:
                out.write(json.dumps({"text": text, "label": label}) + "\n")
        classes = collections.Counter(label for _, label in rows)
        counts.append(f"- {split}: {len(rows)} texts, {len(classes)} classes")
    (folder / "PROVENANCE.md").write_text(provenance.strip() + "\n\n" + "\n".join(counts) + "\n")
    print(f"{name}: " + "; ".join(line[2:] for line in counts), flush=True)


def download_fortunes(workdir):
    """`apt-get download`s Debian `fortunes` and unpacks it; returns its fortune folder."""
    subprocess.run(["apt-get", "download", "fortunes"], cwd=workdir, check=True,
                   stdout=subprocess.DEVNULL)
    package = next(pathlib.Path(workdir).glob("fortunes_*.deb"))
    unpacked = pathlib.Path(workdir) / "fortunes"
    subprocess.run(["dpkg-deb", "-x", str(package), str(unpacked)], check=True)
    return unpacked / FORTUNES_DIRECTORY


DEBIAN_PROVENANCE = """
# debian_sections

Each package's one-line `Description` from the Debian 12 ("bookworm") main
archive index on this machine (`apt-cache dumpavail`), labelled with the
package's `Section`, for the sections: {sections}. Split 80/10/10 by crc32
of the source package's name; a text already in an earlier split is
dropped. Built by tools/build_transfer_tasks.py.
"""

FORTUNES_PROVENANCE = """
# fortunes

The quotations of Debian's `fortunes` package (fortune-mod 1.99.1, BSD
licence; `apt-get download fortunes`), labelled with the fortune file each
is in, for the files: {files}. Split 80/10/10 by crc32 of the quotation's
text. Built by tools/build_transfer_tasks.py.
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/transfer_tasks")
    parser.add_argument("--pretraining_corpus", default=None,
                        help="a folder of *.txt corpus files; evaluation texts found in it are dropped")
    args = parser.parse_args(argv)
    packages = subprocess.run(["apt-cache", "dumpavail"], check=True, capture_output=True,
                              text=True).stdout
    tasks = {"debian_sections": (debian_records(packages),
                                 DEBIAN_PROVENANCE.format(sections=", ".join(DEBIAN_SECTIONS)))}
    with tempfile.TemporaryDirectory() as workdir:
        tasks["fortunes"] = (fortune_records(download_fortunes(workdir)),
                             FORTUNES_PROVENANCE.format(files=", ".join(FORTUNE_FILES)))
    for name, (records, provenance) in tasks.items():
        splits = split_records(records)
        if args.pretraining_corpus:
            dropped = drop_pretrained(splits, corpus_lines(args.pretraining_corpus))
            provenance += ("\nValidation and test texts found inside the pretraining corpus "
                           f"and dropped: {dropped}.\n")
        write_task(args.output, name, splits, provenance)


if __name__ == "__main__":
    sys.exit(main())
