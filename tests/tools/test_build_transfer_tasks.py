"""tools/build_transfer_tasks.py: the suite's Debian-built tasks are parsed,
split by group with no text in two splits, and evaluation texts found in a
pretraining corpus are dropped."""

import json

from tests.scripts import load_script

tool = load_script("tools/build_transfer_tasks.py")

PACKAGES = """Package: chess3d
Version: 1.0
Section: games
Description: Play chess across 3 boards!
Description-md5: 0

Package: chess3d-data
Source: chess3d (1.0-1)
Section: games
Description: Play chess across 3 boards! (data)

Package: pymod
Section: python
Description: Python module for something

Package: mutt
Section: contrib/mail
Description: text-based mailreader
Tag: mail::user,
 role::program
"""


def test_debian_records_keep_the_chosen_sections_grouped_by_source():
    records = tool.debian_records(PACKAGES)
    assert records == [
        ("Play chess across 3 boards!", "games", "chess3d"),
        ("Play chess across 3 boards! (data)", "games", "chess3d"),
        ("text-based mailreader", "mail", "mutt"),
    ]


def test_fortune_records_flatten_each_quotation(tmp_path):
    (tmp_path / "food").write_text("Eat your\n\tgreens.\n%\nA second\nquote.\n%\n")
    (tmp_path / "law").write_text("Objection!\n%\n")
    records = tool.fortune_records(tmp_path, files=("food", "law"))
    assert [(text, label) for text, label, _ in records] == [
        ("Eat your greens.", "food"), ("A second quote.", "food"), ("Objection!", "law")]


def test_splits_follow_the_group_hash_and_share_no_text():
    records = [(f"text number {i}", "a" if i % 2 else "b", f"group{i // 3}") for i in range(300)]
    # The same text again in another group: kept once, where train has it.
    records += [("text number 0", "b", "other group")]
    splits = tool.split_records(records)
    assert sum(len(rows) for rows in splits.values()) == 300
    groups = {text: f"group{int(text.split()[-1]) // 3}" for text, _, _ in records[:300]}
    for name, rows in splits.items():
        for text, _ in rows:
            assert tool.split_of(groups[text]) == name
    texts = [text for rows in splits.values() for text, _ in rows]
    assert len(texts) == len(set(texts))
    assert 0.7 < len(splits["train"]) / 300 < 0.9


def test_evaluation_texts_inside_the_corpus_are_dropped_and_training_texts_kept():
    splits = {"train": [("the quick brown fox jumps", "a")],
              "validation": [("Colorless green ideas sleep furiously tonight", "a"),
                             ("nothing like this appears anywhere", "b")],
              "test": [("a stitch in time saves nine", "b")]}
    corpus = ["He said that colorless GREEN ideas sleep furiously, tonight.",
              "the quick brown fox jumps", "A stitch in time"]
    dropped = tool.drop_pretrained(splits, corpus)
    assert dropped == {"validation": 1, "test": 0}
    assert splits["validation"] == [("nothing like this appears anywhere", "b")]
    assert splits["test"] == [("a stitch in time saves nine", "b")]
    assert splits["train"] == [("the quick brown fox jumps", "a")]


def test_write_task_writes_json_lines_and_provenance(tmp_path):
    splits = {"train": [("x", "a"), ("y", "b")], "validation": [("z", "a")], "test": [("w", "b")]}
    tool.write_task(tmp_path, "toy", splits, "# toy\nMade here.")
    lines = (tmp_path / "toy" / "train.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"text": "x", "label": "a"},
                                                    {"text": "y", "label": "b"}]
    provenance = (tmp_path / "toy" / "PROVENANCE.md").read_text()
    assert "Made here." in provenance and "- train: 2 texts, 2 classes" in provenance
