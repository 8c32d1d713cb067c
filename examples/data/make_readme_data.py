"""Writes the small files the README's commands run on (see README.md here).

    python examples/data/make_readme_data.py [--output examples/data]

Everything comes from the corpora bundled with keras_albert, and never from
what the project evaluates on: the labelled glosses and the unlabelled
texts are from the supersense *train* split only, and the corpus is from
the training chapters of Emma (not Persuasion, not the long-document test
chapters). Every line passes `HeldOutGuard`. The output is deterministic:
tests/test_readme_blocks.py rebuilds it and compares it with the files.
"""

import argparse
import json
import pathlib
import random

from keras_albert.datasets import austen
from keras_albert.datasets import heldout
from keras_albert.datasets import long_documents
from keras_albert.datasets import wordnet_supersense

# Four noun supersenses that glosses tell apart well: a small task a tiny
# model learns something of in one epoch.
LABELS = ("noun.animal", "noun.food", "noun.person", "noun.plant")
TRAIN_PER_LABEL = 60
DEV_PER_LABEL = 15
UNLABELLED_PER_LABEL = 50
CORPUS_NOVEL = "emma"
CORPUS_CHAPTERS = 4
SEED = 0
# A MobileBERT-style student of the bundled teacher's width: 2 layers,
# each learning one teacher layer (--layer_map), the teacher's 4 heads (for
# attention transfer) and hidden size 128 around a 64-wide bottleneck.
STUDENT_CONFIG = {
    "num_layers": 2,
    "num_heads": 4,
    "embedding_dim": 32,
    "hidden_dim": 128,
    "intermediate_dim": 256,
    "bottleneck_dim": 64,
    "num_feedforward_stacks": 2,
    "embedding_type": "trigram",
    "normalization": "layer_norm",
    "activation": "relu",
}


def _clean(text):
    return " ".join(text.split())


def supersense_files(guard):
    """{file name: text} of the labelled train/dev pair and the unlabelled texts."""
    names = wordnet_supersense.supersense_labels(pos="n")
    texts, labels = wordnet_supersense.load_supersense("train", pos="n")
    by_label = {label: [] for label in LABELS}
    for text, label in zip(texts, labels):
        text = _clean(text)
        if names[label] in by_label and not guard.contains(text):
            by_label[names[label]].append(text)
    rng = random.Random(SEED)
    train, dev, unlabelled = [], [], []
    for label in LABELS:
        chosen = sorted(set(by_label[label]))
        rng.shuffle(chosen)
        cut = TRAIN_PER_LABEL + DEV_PER_LABEL
        train += [(text, label) for text in chosen[:TRAIN_PER_LABEL]]
        dev += [(text, label) for text in chosen[TRAIN_PER_LABEL:cut]]
        unlabelled += chosen[cut:cut + UNLABELLED_PER_LABEL]
    for rows in (train, dev, unlabelled):
        rng.shuffle(rows)

    def table(rows):
        return "text\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in rows)

    return {
        "supersense_train.tsv": table(train),
        "supersense_dev.tsv": table(dev),
        "unlabelled.txt": "".join(f"{text}\n" for text in unlabelled),
    }


def corpus_file(guard):
    """Emma's first training chapters: a sentence a line, a blank line between paragraphs."""
    chapters = austen.load_austen_chapters(CORPUS_NOVEL)
    train = long_documents.split_chapters(seed=heldout.LONG_DOCUMENT_SEED)["train"][CORPUS_NOVEL]
    paragraphs = []
    for index in train[:CORPUS_CHAPTERS]:
        for paragraph in chapters[index]:
            sentences = guard.drop(_clean(s) for s in austen.split_sentences(paragraph))
            if sentences:
                paragraphs.append("\n".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def readme_data():
    """{file name: text} of every derived file."""
    guard = heldout.HeldOutGuard()
    files = supersense_files(guard)
    files["corpus.txt"] = corpus_file(guard)
    files["student.json"] = json.dumps(STUDENT_CONFIG, indent=2) + "\n"
    return files


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(pathlib.Path(__file__).parent))
    output = pathlib.Path(parser.parse_args(argv).output)
    for name, text in readme_data().items():
        (output / name).write_text(text, encoding="utf-8")
        print(f"{output / name}: {len(text.splitlines())} lines, {len(text.encode())} bytes")


if __name__ == "__main__":
    main()
