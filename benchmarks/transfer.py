"""Does pretraining transfer? The transfer suite under one protocol.

For each task of the suite (benchmarks/transfer_tasks.py: WordNet noun
supersense, Debian package sections, fortune files) and each seed, on the
same training texts and the same test split, it scores:

  majority    the most frequent training label, predicted for every test text
  tfidf       TF-IDF + LinearSVC, C and word n-gram range picked on the
              carve-out (`keras_albert.pipelines.tuned_tfidf_baseline`)
  probe       the preset frozen: a softmax regression on its pooled
              features, C picked on the carve-out (the recipe's head warm start)
  finetuned   the preset fine-tuned with the recommended recipe
              (`keras_albert.pipelines.ClassifierRecipe`), best epoch
              picked on the carve-out
  random_head (on request) the preset fine-tuned with the recipe minus its
              head warm start: what the warm start adds
  scratch     (on request) the same architecture from random weights, same recipe
  teacher     (on request; `pip install -e '.[teacher]'`) all-MiniLM-L6-v2
              frozen + logistic regression, C picked on the carve-out

The protocol (benchmarks/README.md, "How quality is measured"): every
choice is made on a validation carve-out of the training texts (a seeded,
stratified tenth); the figure is accuracy on a test split nothing was
chosen on; each row runs with every seed (the seed draws the training
sample, the carve-out, the initialisation and the order), reported as
mean +- standard deviation; the fine-tuned model's margin over TF-IDF is
the mean +- sd of the per-seed differences.

The JSON (default benchmarks/results/transfer_suite.json) is rewritten
after every row; `--resume` keeps the rows a stopped run finished (it
refuses a file made with other settings).

    python tools/build_transfer_tasks.py --output runs/transfer_tasks  # once
    python benchmarks/transfer.py                       # the suite, seeds 0 1 2
    python benchmarks/transfer.py --tasks supersense --seeds 0 --train_size 300 \\
        --max_test 200 --epochs 1                       # a smoke run
    python benchmarks/transfer.py --resume              # finish a stopped run
"""

import argparse
import dataclasses
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert.pipelines import ClassifierRecipe  # noqa: E402
from keras_albert.pipelines import classification_scores  # noqa: E402
from keras_albert.pipelines import fine_tune_classifier  # noqa: E402
from keras_albert.pipelines import majority_baseline  # noqa: E402
from keras_albert.pipelines import tuned_tfidf_baseline  # noqa: E402
from keras_albert.pipelines.classifier_fine_tuning import carve_validation  # noqa: E402
from keras_albert.pipelines.classifier_fine_tuning import warm_start_head  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import mean_sd  # noqa: E402
from recording import write_result  # noqa: E402
from transfer_tasks import BUILT_TASKS_DIR  # noqa: E402
from transfer_tasks import TASK_NAMES  # noqa: E402
from transfer_tasks import load_task  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "transfer_suite.json"
MODELS = ("majority", "tfidf", "probe", "finetuned", "random_head", "scratch", "teacher")
VALIDATION_FRACTION = 0.1
# What must match for `--resume` to reuse a file's rows.
SETTINGS = ("preset", "recipe", "train_size", "max_test", "tasks_dir")


def albert_classifier(preset, task, from_scratch=False):
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        preset, sequence_length=task.sequence_length)
    backbone = keras_albert.AlbertBackbone.from_preset(preset)
    if from_scratch:
        backbone = keras_albert.AlbertBackbone.from_config(backbone.get_config())
    return keras_albert.AlbertClassifier(
        backbone, num_classes=len(task.label_names), preprocessor=preprocessor)


def test_scores(classifier, task):
    predictions = classifier.predict(task.test_texts, batch_size=256, verbose=0).argmax(-1)
    return classification_scores(task.test_labels, predictions)


def fine_tuned_row(preset, task, recipe, seed, from_scratch=False):
    keras.utils.set_random_seed(seed)
    classifier = albert_classifier(preset, task, from_scratch)
    history = fine_tune_classifier(classifier, task.train_texts, task.train_labels, recipe,
                                   seed=seed)
    row = test_scores(classifier, task)
    row["epochs_run"] = len(history.history["loss"])
    row["carve_out_accuracy"] = [round(v, 4) for v in history.history.get(
        "val_sparse_categorical_accuracy", [])]
    row["kept_head_warm_start"] = bool(history.history.get("kept_head_warm_start", False))
    return row


def probe_row(preset, task, recipe, seed):
    """The head alone, fitted on the frozen preset's features."""
    keras.utils.set_random_seed(seed)
    classifier = albert_classifier(preset, task)
    fit_texts, fit_labels, held_texts, held_labels = carve_validation(
        task.train_texts, task.train_labels, VALIDATION_FRACTION, seed)
    carve_out = warm_start_head(classifier, fit_texts, fit_labels, held_texts, held_labels,
                                recipe.batch_size, seed)
    row = test_scores(classifier, task)
    row["carve_out_accuracy"] = round(float(carve_out), 4)
    return row


def teacher_row(task, seed):
    """all-MiniLM-L6-v2's frozen sentence embeddings + logistic regression."""
    import importlib.util

    from sklearn.linear_model import LogisticRegression

    spec = importlib.util.spec_from_file_location(
        "teacher_embeddings",
        pathlib.Path(__file__).resolve().parents[1] / "tools" / "teacher_embeddings.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    model = tool.teacher_model()
    train = model.encode(list(task.train_texts), batch_size=64, normalize_embeddings=True)
    test = model.encode(list(task.test_texts), batch_size=64, normalize_embeddings=True)
    labels = np.asarray(task.train_labels)
    kept, held = carve_validation(list(range(len(train))), labels, VALIDATION_FRACTION, seed)[::2]
    scores = {}
    for c in (1.0, 10.0, 100.0):
        fitted = LogisticRegression(C=c, max_iter=3000).fit(train[kept], labels[kept])
        scores[c] = float((fitted.predict(train[held]) == labels[held]).mean())
    best = max(scores, key=scores.get)
    fitted = LogisticRegression(C=best, max_iter=3000).fit(train, labels)
    row = classification_scores(task.test_labels, fitted.predict(test))
    row.update(C=best, carve_out_accuracy=round(scores[best], 4))
    return row


def run_row(name, preset, task, recipe, seed):
    started = time.time()
    if name == "majority":
        row = majority_baseline(task.train_labels, task.test_labels)
    elif name == "tfidf":
        row = tuned_tfidf_baseline(task.train_texts, task.train_labels, task.test_texts,
                                   task.test_labels, VALIDATION_FRACTION, seed)
        row.pop("predictions")
    elif name == "probe":
        row = probe_row(preset, task, recipe, seed)
    elif name == "teacher":
        row = teacher_row(task, seed)
    elif name == "random_head":
        row = fine_tuned_row(preset, task, dataclasses.replace(recipe, head_warm_start=False), seed)
    else:
        row = fine_tuned_row(preset, task, recipe, seed, from_scratch=name == "scratch")
    row = {key: (value.item() if isinstance(value, np.generic) else value)
           for key, value in row.items()}
    row["seconds"] = round(time.time() - started, 1)
    return row


def summarize(task_entry):
    """Mean +- sd over seeds of each row, and finetuned - tfidf per seed."""
    runs = task_entry["runs"]
    summary = {}
    for name in MODELS:
        rows = [runs[seed][name] for seed in runs if name in runs[seed]]
        if rows:
            summary[name] = {metric: mean_sd([row[metric] for row in rows])
                             for metric in ("accuracy", "macro_f1")}
    margins = {}
    for a, b in (("finetuned", "tfidf"), ("probe", "tfidf"), ("finetuned", "random_head")):
        paired = [runs[s][a]["accuracy"] - runs[s][b]["accuracy"]
                  for s in runs if a in runs[s] and b in runs[s]]
        if paired:
            margins[f"{a}_minus_{b}_points"] = mean_sd([100 * p for p in paired])
    task_entry["summary"] = summary
    task_entry["margins"] = margins


def fresh_results(args, recipe):
    return {
        "protocol": ("choices on a seeded stratified 10 % carve-out of the training texts; "
                     "accuracy on the test split; mean +- sd over seeds"),
        "preset": args.preset,
        "recipe": recipe.__dict__,
        "train_size": args.train_size,
        "max_test": args.max_test,
        "tasks_dir": args.tasks_dir,
        "tasks": {},
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
    return earlier


def run(args, save=lambda results: None):
    """Fills in every (task, seed, model) row not already done; `save` after each."""
    recipe = ClassifierRecipe(epochs=args.epochs, learning_rate=args.learning_rate,
                              batch_size=args.batch_size)
    results = fresh_results(args, recipe)
    if args.resume:
        results = resumed_results(pathlib.Path(args.output), results)
    for task_name in args.tasks:
        for seed in args.seeds:
            task = load_task(task_name, args.train_size, seed, args.tasks_dir)
            if args.max_test and args.max_test < len(task.test_texts):
                # Spread over the split, which is ordered by class.
                keep = np.linspace(0, len(task.test_texts) - 1, args.max_test).astype(int)
                task.test_texts = [task.test_texts[i] for i in keep]
                task.test_labels = task.test_labels[keep]
            entry = results["tasks"].setdefault(task_name, {
                "classes": len(task.label_names), "train_examples": len(task.train_texts),
                "test_examples": len(task.test_texts), "sequence_length": task.sequence_length,
                "runs": {}})
            rows = entry["runs"].setdefault(str(seed), {})
            print(f"\n== {task_name}, seed {seed}: {len(task.train_texts)} training texts, "
                  f"{len(task.test_texts)} test texts ==", flush=True)
            for name in args.models:
                if name in rows:
                    print(f"{name}: kept from the earlier run", flush=True)
                    continue
                rows[name] = run_row(name, args.preset, task, recipe, seed)
                print(f"{name}: test accuracy {100 * rows[name]['accuracy']:.1f} % "
                      f"({rows[name]['seconds']:.0f} s)", flush=True)
                summarize(entry)
                save(results)
    return results


def show(stat, scale=100.0, digits=1):
    if stat["sd"] is None:
        return f"{stat['mean'] * scale:.{digits}f}"
    return f"{stat['mean'] * scale:.{digits}f} +- {stat['sd'] * scale:.{digits}f}"


def print_table(results):
    # The model column is as wide as its longest name ("random_head").
    width = max([5] + [len(name) for entry in results["tasks"].values()
                       for name in entry.get("summary", {})])
    print(f"\n{'task':<16} {'model':<{width}} {'accuracy %':>14} {'macro-F1':>16} seeds")
    for task_name, entry in results["tasks"].items():
        for name, stats in entry.get("summary", {}).items():
            print(f"{task_name:<16} {name:<{width}} {show(stats['accuracy']):>14} "
                  f"{show(stats['macro_f1'], 1.0, 3):>16} {stats['accuracy']['seeds']}")
        for name, stat in entry.get("margins", {}).items():
            print(f"{task_name:<16} {name}: {show(stat, 1.0)} points")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--tasks", nargs="+", default=list(TASK_NAMES), choices=TASK_NAMES)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--models", nargs="+", default=["majority", "tfidf", "probe", "finetuned"],
                        choices=MODELS)
    parser.add_argument("--train_size", type=int, default=None,
                        help="training texts per task and seed; 0: all; default: the task's "
                             "(supersense 12,000, the others all)")
    parser.add_argument("--max_test", type=int, default=0,
                        help="score N test texts spread over the split (smoke runs); 0: all")
    parser.add_argument("--tasks_dir", default=BUILT_TASKS_DIR,
                        help="where tools/build_transfer_tasks.py wrote the built tasks")
    defaults = ClassifierRecipe()
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--learning_rate", type=float, default=defaults.learning_rate,
                        help="peak; default: the recipe's for the backbone's width")
    parser.add_argument("--batch_size", type=int, default=defaults.batch_size)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--resume", action="store_true",
                        help="keep the rows --output already holds (same settings) and run the rest")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)

    def save(results):
        # Replaced whole: a run stopped mid-write leaves the last whole file.
        write_result(output, results, argv=["benchmarks/transfer.py"] + list(argv))

    results = run(args, save)
    print_table(results)
    save(results)


if __name__ == "__main__":
    main()
