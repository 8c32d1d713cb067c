"""Does pretraining transfer? A preset fine-tuned vs TF-IDF vs from scratch.

On the bundled WordNet noun supersense task (gloss -> one of 26 classes,
the 8,177-gloss validation split held out), for each training size it runs,
on the same training examples and the same held-out glosses:

  tfidf       TF-IDF (word 1-2 grams, sublinear tf) + LinearSVC(C=1)
  pretrained  the preset fine-tuned with the recommended recipe
              (`keras_albert.pipelines.ClassifierRecipe`)
  scratch     the same architecture from random weights, same recipe
  random_head (on request) the preset with the same recipe but a randomly
              initialised head instead of one fitted on frozen features
  teacher     (on request; `pip install -e '.[teacher]'`) the build-time
              teacher, all-MiniLM-L6-v2, frozen: its sentence embeddings
              + logistic regression (C picked on a tenth of the training
              glosses): how far distilling its sentence embeddings can go

and prints accuracy and macro-F1 for each, the pretrained model's margin
over TF-IDF in points, and the ratios (the named peer is TF-IDF). Results
go to benchmarks/results/transfer.json (or --output) with the command, the
date and the machine's cores. These are accuracies from one seeded run,
not timings: there are no timed rounds (`--seed` picks another split of
the training glosses and another initialisation).

The JSON is rewritten after every row, so a stopped run loses at most the
row in progress; `--resume` reruns the same command and keeps the rows the
file already holds (it refuses a file made with other settings).

    python benchmarks/transfer.py                      # 12,000 labels and the full split
    python benchmarks/transfer.py --train_sizes 12000  # one size
    python benchmarks/transfer.py --train_sizes 500 --max_test 500 --epochs 1  # a smoke run
    python benchmarks/transfer.py --resume             # finish a stopped run
"""

import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.models.albert_classifier import POOLING_CHOICES  # noqa: E402
from keras_albert.pipelines import ClassifierRecipe  # noqa: E402
from keras_albert.pipelines import classification_scores  # noqa: E402
from keras_albert.pipelines import fine_tune_classifier  # noqa: E402
from keras_albert.pipelines import tfidf_baseline  # noqa: E402
from keras_albert.utils.atomic_file import write_file_atomically  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "transfer.json"


def supersense_split(train_size, max_test, seed=0):
    """The quickstart's data: `train_size` random training glosses (all if 0)."""
    return datasets.supersense_split_sample(train_size, max_test, seed=seed)


def albert_row(preset, from_scratch, data, recipe, sequence_length, seed, pooling="cls"):
    """One fine-tuning run, scored on the held-out glosses."""
    train_texts, train_labels, test_texts, test_labels = data
    keras.utils.set_random_seed(seed)
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        preset, sequence_length=sequence_length
    )
    backbone = keras_albert.AlbertBackbone.from_preset(preset)
    if from_scratch:
        backbone = keras_albert.AlbertBackbone.from_config(backbone.get_config())
    classifier = keras_albert.AlbertClassifier(
        backbone, num_classes=len(datasets.supersense_labels(pos="n")),
        preprocessor=preprocessor, pooling=pooling,
    )
    started = time.time()
    history = fine_tune_classifier(classifier, train_texts, train_labels, recipe, seed=seed)
    predictions = classifier.predict(test_texts, batch_size=256, verbose=0).argmax(-1)
    row = classification_scores(test_labels, predictions)
    row["seconds"] = round(time.time() - started, 1)
    row["epochs_run"] = len(history.history["loss"])
    row["validation_accuracy"] = [round(v, 4) for v in history.history.get(
        "val_sparse_categorical_accuracy", [])]
    return row


# What must match for `--resume` to reuse a file's rows.
SETTINGS = ("task", "preset", "recipe", "sequence_length", "pooling", "seed", "max_test")


def fresh_results(args, recipe):
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu_cores": os.cpu_count(),
        "task": "WordNet noun supersense (26 classes), validation split",
        "preset": args.preset,
        "recipe": recipe.__dict__,
        "sequence_length": args.sequence_length,
        "pooling": args.pooling,
        "seed": args.seed,
        "max_test": args.max_test,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores",
        "command": "python benchmarks/transfer.py " + " ".join(args.argv),
        "sizes": [],
    }


def resumed_results(output, fresh):
    """The earlier run's results, if `output` was made with the same settings."""
    if not output.exists():
        return fresh
    earlier = json.loads(output.read_text())
    for key in SETTINGS:
        if earlier.get(key) != fresh[key]:
            raise SystemExit(
                f"--resume: {output} was made with {key}={earlier.get(key)!r}, this run has "
                f"{key}={fresh[key]!r}; rerun with the same settings or another --output")
    earlier.setdefault("resumed", []).append(
        {"date": fresh["date"], "command": fresh["command"]})
    return earlier


def size_entry(results, train_size, test_size):
    for entry in results["sizes"]:
        if entry["train_examples"] == train_size and entry["test_examples"] == test_size:
            return entry
    entry = {"train_examples": train_size, "test_examples": test_size, "rows": {},
             "comparison": {}}
    results["sizes"].append(entry)
    return entry


def run(args, save=lambda results: None):
    """Fills in every (size, model) row not already done; `save` after each."""
    recipe = ClassifierRecipe(epochs=args.epochs, learning_rate=args.learning_rate,
                              batch_size=args.batch_size)
    results = fresh_results(args, recipe)
    if args.resume:
        results = resumed_results(pathlib.Path(args.output), results)
    for size in args.train_sizes:
        data = supersense_split(size, args.max_test, args.seed)
        print(f"\n== {len(data[0])} training glosses, {len(data[2])} held out ==", flush=True)
        entry = size_entry(results, len(data[0]), len(data[2]))
        rows = entry["rows"]
        wanted = ["tfidf"] + [m for m in ("pretrained", "scratch", "random_head", "teacher")
                              if m in args.models]
        for name in wanted:
            if name in rows:
                print(f"{name}: kept from the earlier run: {rows[name]}", flush=True)
                continue
            if name == "tfidf":
                rows[name] = tfidf_baseline(*data)
                rows[name].pop("predictions")
            elif name == "teacher":
                rows[name] = teacher_row(data)
            elif name == "random_head":
                rows[name] = albert_row(args.preset, False, data,
                                        dataclasses.replace(recipe, head_warm_start=False),
                                        args.sequence_length, args.seed, args.pooling)
            else:
                rows[name] = albert_row(args.preset, name == "scratch", data, recipe,
                                        args.sequence_length, args.seed, args.pooling)
            print(f"{name}: {rows[name]}", flush=True)
            if {"pretrained", "scratch"} <= set(rows):
                entry["comparison"] = compare(rows)
            save(results)
    return results


def teacher_row(data):
    """all-MiniLM-L6-v2's frozen sentence embeddings + logistic regression."""
    import importlib.util

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    train_texts, train_labels, test_texts, test_labels = data
    spec = importlib.util.spec_from_file_location(
        "teacher_embeddings", pathlib.Path(__file__).resolve().parents[1] / "tools" / "teacher_embeddings.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    start = time.time()
    model = tool.teacher_model()
    train = model.encode(list(train_texts), batch_size=64, normalize_embeddings=True)
    test = model.encode(list(test_texts), batch_size=64, normalize_embeddings=True)
    train_labels = np.asarray(train_labels)
    # C from a held-out tenth of the training glosses (already in a seeded
    # random order), never the test set.
    fit, check = slice(len(train) // 10, None), slice(None, len(train) // 10)
    scores = {}
    for c in (1.0, 10.0, 100.0):
        classifier = LogisticRegression(C=c, max_iter=3000).fit(train[fit], train_labels[fit])
        scores[c] = float((classifier.predict(train[check]) == train_labels[check]).mean())
    best = max(scores, key=scores.get)
    classifier = LogisticRegression(C=best, max_iter=3000).fit(train, train_labels)
    row = classification_scores(test_labels, classifier.predict(test))
    row.update(seconds=round(time.time() - start, 2), C=best)
    return row


def compare(rows):
    tfidf, pretrained = rows["tfidf"], rows["pretrained"]
    return {
        "pretrained_minus_tfidf_points": round(100 * (pretrained["accuracy"] - tfidf["accuracy"]), 2),
        "pretrained_over_tfidf_accuracy": round(pretrained["accuracy"] / tfidf["accuracy"], 4),
        "pretrained_over_tfidf_macro_f1": round(pretrained["macro_f1"] / tfidf["macro_f1"], 4),
        "pretrained_over_scratch_accuracy": round(
            pretrained["accuracy"] / max(rows["scratch"]["accuracy"], 1e-9), 4),
    }


def print_table(results):
    print(f"\n{'train':>7} {'model':<11} {'accuracy':>9} {'macro-F1':>9} {'seconds':>8}")
    for size in results["sizes"]:
        for name, row in size["rows"].items():
            print(f"{size['train_examples']:>7} {name:<11} {100 * row['accuracy']:>8.1f}% "
                  f"{row['macro_f1']:>9.3f} {row['seconds']:>8.1f}")
        c = size["comparison"]
        if not c:
            continue
        print(f"{'':>7} pretrained - tfidf: {c['pretrained_minus_tfidf_points']:+.1f} points; "
              f"accuracy ratio {c['pretrained_over_tfidf_accuracy']:.3f}x tfidf, "
              f"{c['pretrained_over_scratch_accuracy']:.3f}x scratch; "
              f"macro-F1 ratio {c['pretrained_over_tfidf_macro_f1']:.3f}x tfidf")


def main(argv=None):
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--train_sizes", type=int, nargs="+", default=[12000, 0],
                        help="training glosses per run; 0 is the full training split")
    parser.add_argument("--max_test", type=int, default=0, help="0: all 8,177 held-out glosses")
    parser.add_argument("--models", nargs="+", default=["tfidf", "pretrained", "scratch"],
                        choices=["tfidf", "pretrained", "scratch", "random_head", "teacher"],
                        help="tfidf always runs: it is the bar")
    defaults = ClassifierRecipe()
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--learning_rate", type=float, default=defaults.learning_rate,
                        help="peak; default: the recipe's for the backbone's width")
    parser.add_argument("--batch_size", type=int, default=defaults.batch_size)
    parser.add_argument("--sequence_length", type=int, default=32,
                        help="glosses are short (about 16 pieces)")
    parser.add_argument("--pooling", choices=POOLING_CHOICES, default="cls",
                        help="what the head reads: [CLS] or the mean of the token outputs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows --output already holds (same settings) and run the rest")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    args.argv = argv
    output = pathlib.Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)

    def save(results):
        # A run stopped mid-write leaves the last whole file.
        write_file_atomically(output, json.dumps(results, indent=2) + "\n")

    results = run(args, save)
    print_table(results)
    save(results)
    print(f"\nwrote {output}")


if __name__ == "__main__":
    main()
