"""Full vs LSH attention, fine-tuned from the same pretrained weights.

Fine-tunes `--preset` (default: the bundled albert_tiny_en) on the bundled
noun-supersense task three ways from the same weights, data, seed and
schedule: full attention, LSH with 1 hash round and with 4. The LSH models
are warm-started with `lsh_backbone_from` (shared QK from the query
weights). Glosses are padded to 32 pieces and LSH uses 8-piece chunks, so
each token sees its own chunk, the one before and (`--chunks_after 1`) the
one after: 24 of 32 positions, picked by hashing.

    python tools/lsh_quality.py --output runs/lsh_quality
"""

import argparse
import json
import pathlib
import time

import keras
import numpy as np

import keras_albert
from keras_albert import datasets
from keras_albert.editing.lsh_warm_start import lsh_backbone_from
from keras_albert.training import WarmupLinearDecay


def fine_tune(backbone, preprocessor, data, args, num_classes):
    train_texts, train_labels, test_texts, test_labels = data
    keras.utils.set_random_seed(args.seed)
    classifier = keras_albert.AlbertClassifier(backbone, num_classes=num_classes, preprocessor=preprocessor)
    steps = args.epochs * -(-len(train_texts) // args.batch_size)
    classifier.compile(optimizer=keras.optimizers.AdamW(
        WarmupLinearDecay(args.learning_rate, steps // 10, steps), weight_decay=0.01))
    started = time.time()
    classifier.fit(x=train_texts, y=train_labels, batch_size=args.batch_size, epochs=args.epochs, verbose=2)
    logits = classifier.predict(test_texts, batch_size=256, verbose=0)
    return float((logits.argmax(-1) == test_labels).mean()), time.time() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--output", default="runs/lsh_quality")
    parser.add_argument("--train_examples", type=int, default=12000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--chunk_length", type=int, default=8)
    parser.add_argument("--buckets", type=int, default=4)
    parser.add_argument("--chunks_after", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    labels = datasets.supersense_labels(pos="n")
    train_texts, train_labels = datasets.load_supersense("train", pos="n")
    test_texts, test_labels = datasets.load_supersense("validation", pos="n")
    order = np.random.default_rng(args.seed).permutation(len(train_texts))[: args.train_examples]
    data = ([train_texts[i] for i in order], np.asarray(train_labels)[order], test_texts, np.asarray(test_labels))
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        args.preset, sequence_length=args.sequence_length)

    results = {}
    for name, hashes in (("full", None), ("lsh_1_hash", 1), ("lsh_4_hashes", 4)):
        full = keras_albert.AlbertBackbone.from_preset(args.preset)
        backbone = full if hashes is None else lsh_backbone_from(
            full, lsh_num_hashes=hashes, lsh_num_buckets=args.buckets,
            lsh_chunk_length=args.chunk_length, lsh_num_chunks_after=args.chunks_after, lsh_seed=args.seed)
        accuracy, seconds = fine_tune(backbone, preprocessor, data, args, len(labels))
        results[name] = {"accuracy": round(accuracy, 4), "fine_tune_seconds": round(seconds, 1)}
        print(f"{name}: held-out accuracy {accuracy:.4f} ({seconds:.0f} s)", flush=True)
    results["settings"] = vars(args)
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    (output / "lsh_quality.json").write_text(json.dumps(results, indent=2))
    print(json.dumps({k: v for k, v in results.items() if k != "settings"}, indent=2))


if __name__ == "__main__":
    main()
