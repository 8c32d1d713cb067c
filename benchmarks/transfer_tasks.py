"""The transfer suite's tasks: train and test splits of three text-
classification tasks from different sources.

  supersense       WordNet 3.0 noun glosses -> 26 supersenses (bundled;
                   `keras_albert.datasets`): trained on the train split,
                   scored on the test split (crc32 buckets 90-99), which
                   nothing was ever chosen on
  debian_sections  a Debian package's one-line description -> one of 14
                   archive sections
  fortunes         a fortune-cookie quotation -> one of 14 fortune files

The last two are built from Debian packages by
`tools/build_transfer_tasks.py` (provenance in each task's PROVENANCE.md).
Sequence lengths are fixed from the texts' lengths, not tuned: glosses and
descriptions are short (95 % of descriptions fit 22 pieces), quotations
longer (median 34 pieces, 75 % within 64).
"""

import dataclasses
import json
import pathlib

import numpy as np

TASK_NAMES = ("supersense", "debian_sections", "fortunes")
BUILT_TASKS_DIR = "runs/transfer_tasks"
SEQUENCE_LENGTHS = {"supersense": 32, "debian_sections": 32, "fortunes": 64}
# Supersense's train split holds about 40,000 noun glosses: a seeded sample
# keeps a CPU run short; the built tasks train on their whole train split.
DEFAULT_TRAIN_SIZES = {"supersense": 12000, "debian_sections": 0, "fortunes": 0}


@dataclasses.dataclass
class TransferTask:
    name: str
    label_names: list
    train_texts: list
    train_labels: np.ndarray
    test_texts: list
    test_labels: np.ndarray
    sequence_length: int


def _read_jsonl(path):
    texts, labels = [], []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                texts.append(record["text"])
                labels.append(record["label"])
    return texts, labels


def _built_task(name, directory):
    folder = pathlib.Path(directory) / name
    if not (folder / "train.jsonl").is_file():
        raise SystemExit(
            f"task {name!r}: {folder}/train.jsonl is missing; build the suite's tasks with "
            f"`python tools/build_transfer_tasks.py --output {directory}`")
    train_texts, train_names = _read_jsonl(folder / "train.jsonl")
    test_texts, test_names = _read_jsonl(folder / "test.jsonl")
    label_names = sorted(set(train_names))
    index = {label: i for i, label in enumerate(label_names)}
    unknown = sorted(set(test_names) - set(index))
    if unknown:
        raise SystemExit(f"task {name!r}: test labels {unknown} never occur in training")
    return label_names, train_texts, [index[n] for n in train_names], test_texts, [
        index[n] for n in test_names]


def load_task(name, train_size=None, seed=0, directory=BUILT_TASKS_DIR):
    """A task with `train_size` training texts drawn with `seed` (0: all;
    None: the task's default) in a seeded order, and its whole test split."""
    if name not in TASK_NAMES:
        raise SystemExit(f"unknown task {name!r}; the suite's tasks: {', '.join(TASK_NAMES)}")
    train_size = DEFAULT_TRAIN_SIZES[name] if train_size is None else train_size
    if name == "supersense":
        from keras_albert import datasets

        # The sample make demo draws with the same seed.
        label_names = datasets.supersense_labels(pos="n")
        train_texts, train_labels, test_texts, test_labels = datasets.supersense_split_sample(
            train_size, 0, seed=seed, held_out="test")
    else:
        label_names, train_texts, train_labels, test_texts, test_labels = _built_task(
            name, directory)
        # Files are ordered by class: every seed trains on its own random order.
        order = np.random.default_rng(seed).permutation(len(train_texts))[:train_size or None]
        train_texts = [train_texts[i] for i in order]
        train_labels = np.asarray(train_labels)[order]
    return TransferTask(
        name=name,
        label_names=list(label_names),
        train_texts=list(train_texts),
        train_labels=np.asarray(train_labels),
        test_texts=list(test_texts),
        test_labels=np.asarray(test_labels),
        sequence_length=SEQUENCE_LENGTHS[name],
    )
