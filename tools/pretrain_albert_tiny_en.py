"""Rebuilds the bundled `keras_albert/presets/albert_tiny_en` preset from scratch.

Writes the pretraining corpus from the bundled data (the Austen novels
except Persuasion, and the WordNet glosses of the supersense training
split, so the fine-tuning evaluation split stays unseen), Persuasion as the
held-out evaluation corpus, then runs `python -m keras_albert pretrain`
with the settings below. About an hour on a 2-core CPU; re-running resumes.

Usage:
    python tools/pretrain_albert_tiny_en.py --output runs/albert_tiny_en
    cp -r runs/albert_tiny_en/preset/. keras_albert/presets/albert_tiny_en/
"""

import argparse
import json
import pathlib
import sys

from keras_albert import datasets
from keras_albert.cli.main import main as cli_main

TINY_CONFIG = {
    "num_layers": 4,
    "num_heads": 4,
    "embedding_dim": 128,
    "hidden_dim": 256,
    "intermediate_dim": 1024,
    "max_sequence_length": 128,
    "dropout": 0.0,
}
# Glosses of one supersense, this many synsets per document.
SYNSETS_PER_DOCUMENT = 16


def write_corpus(directory):
    directory.mkdir(parents=True, exist_ok=True)
    novels = datasets.load_austen_documents(sentences=True)
    (directory / "austen.txt").write_text(
        "\n\n".join("\n".join(novel) for novel in novels) + "\n", encoding="utf-8"
    )
    (directory / "persuasion.txt").write_text(
        "\n".join(datasets.load_austen_documents(
            names=("persuasion",), exclude=(), sentences=True)[0]) + "\n",
        encoding="utf-8",
    )
    by_supersense = {}
    for synset in datasets.load_wordnet_synsets():
        if datasets.split_of(synset.synset) == "train":
            lines = [synset.definition.strip().rstrip(".") + "."]
            lines += [example.strip() for example in synset.examples if example.strip()]
            by_supersense.setdefault(synset.supersense, []).append(lines)
    documents = []
    for supersense in sorted(by_supersense):
        synsets = by_supersense[supersense]
        for start in range(0, len(synsets), SYNSETS_PER_DOCUMENT):
            chunk = synsets[start:start + SYNSETS_PER_DOCUMENT]
            documents.append("\n".join(line for lines in chunk for line in lines))
    (directory / "wordnet.txt").write_text("\n\n".join(documents) + "\n", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/albert_tiny_en")
    parser.add_argument("--train_steps", type=int, default=2400)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--strategy", default="auto")
    args, extra = parser.parse_known_args()
    output = pathlib.Path(args.output)
    corpus = output / "corpus"
    if not (corpus / "wordnet.txt").exists():
        write_corpus(corpus)
    return cli_main([
        "pretrain",
        "--corpus", str(corpus / "austen.txt"), str(corpus / "wordnet.txt"),
        "--eval_corpus", str(corpus / "persuasion.txt"),
        "--output", str(output),
        "--config", json.dumps(TINY_CONFIG),
        "--vocab_size", "8000",
        "--max_seq_length", "128",
        "--max_predictions_per_seq", "20",
        "--dupe_factor", "5",
        # All ~40k instances: the files keep the corpus order (Austen, then
        # WordNet), so anything smaller trains on one part after the other.
        "--shuffle_buffer_size", "50000",
        "--batch_size", str(args.batch_size),
        "--train_steps", str(args.train_steps),
        "--warmup_steps", "200",
        "--learning_rate", "0.005",
        "--checkpoint_every", "200",
        "--strategy", args.strategy,
        "--seed", "12345",
        *extra,
    ])


if __name__ == "__main__":
    sys.exit(main())
