"""Teacher vs distilled student vs the same student without distillation.

In one run: fine-tunes the teacher on WordNet noun supersenses exactly as
examples/quickstart.py does (its data split and training function), then
trains three students with the same schedule (--student_epochs,
--student_learning_rate) on the same labelled glosses:

- "student, task-distilled": the general-distilled student (--distilled)
  learns the fine-tuned teacher's predictions
  (`keras_albert.distill.distill_classifier`) on the labelled glosses and
  on every other gloss of the training split, which only the teacher
  labels (a transfer set; the held-out split is never used);
- "student, general-distilled": the same backbone fine-tuned on the labels;
- "student without distillation": the same architecture pretrained without
  a teacher (--plain), fine-tuned on the labels.

Each classifier is saved as a preset, exported to float32 and dynamic-range
int8 TFLite with `keras_albert.export.tflite_export.export_tflite`, and the
report prints parameters, TFLite sizes, single-text TFLite latency and
held-out accuracy: on the supersense test split (`examples/quickstart.py`'s
`supersense_data`), which nothing is chosen on: the schedules are fixed
flags, the models fine-tuned on labels pick their epoch on a carve-out of
their training glosses (`ClassifierRecipe`), and the task-distilled
student keeps its last epoch.

Latency: one text padded to --sequence_length, one interpreter thread,
median over rounds that alternate between the models (so background load
hits them alike).

Each seed (--seeds, default 0 1 2) draws its own labelled glosses and
initialisations and writes OUTPUT/seed_N/report.json; a finished seed is
kept, so rerunning the command resumes. OUTPUT/report.json (and --record)
sums them up: means over the seeds with standard deviations, per-seed
margins (task-distilled student minus teacher, general distillation minus
none, each model minus tuned TF-IDF on the same glosses) and the tuned
TF-IDF and majority baselines.

Usage:
    python tools/student_report.py \\
        --plain runs/albert_tiny_en_student_plain/preset --output runs/student_report \\
        --record benchmarks/results/student_report.json
"""

import argparse
import importlib.util
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.distill.task_distillation import UNLABELLED  # noqa: E402
from keras_albert.distill.task_distillation import distill_classifier  # noqa: E402
from keras_albert.export import tflite_export  # noqa: E402
from keras_albert.export.tflite_export import export_tflite  # noqa: E402
from keras_albert.export.tflite_export import run_tflite  # noqa: E402
from keras_albert.export.tflite_export import token_features  # noqa: E402
from keras_albert.pipelines import majority_baseline  # noqa: E402
from keras_albert.utils.atomic_file import write_file_atomically  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The benchmarks' recording helpers: mean +- sd over seeds, and results
# files with date, machine and versions.
sys.path.insert(0, str(ROOT / "benchmarks"))
from recording import mean_sd  # noqa: E402
from recording import write_result  # noqa: E402


def path_for_the_record(preset, output):
    """`preset` as the report records it: a name, or a path relative to the
    repository or to the run's output directory; never an absolute path of
    the machine the run was made on (outside both: its last two parts)."""
    path = pathlib.Path(preset)
    if not path.is_absolute():
        return str(preset)
    for base, prefix in ((ROOT, ""), (pathlib.Path(output).resolve(), "<output>/")):
        try:
            return prefix + str(path.resolve().relative_to(base))
        except ValueError:
            pass
    return str(pathlib.Path("<elsewhere>", *path.parts[-2:]))


def quickstart():
    """examples/quickstart.py as a module: its data and fine-tuning code."""
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / "examples" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def single_text_latency(paths, features, rounds, calls):
    """Median seconds per one-text invocation, per path, rounds interleaved."""
    from ai_edge_litert.interpreter import Interpreter

    runners = {}
    for name, path in paths.items():
        interpreter = Interpreter(model_path=str(path), num_threads=1)
        runners[name] = interpreter.get_signature_runner()
    one = {k: v[:1] for k, v in features.items()}
    for runner in runners.values():
        runner(**one)  # warm-up
    timings = {name: [] for name in runners}
    for _ in range(rounds):
        for name, runner in runners.items():
            started = time.perf_counter()
            for _ in range(calls):
                runner(**one)
            timings[name].append((time.perf_counter() - started) / calls)
    return {name: float(np.median(values)) for name, values in timings.items()}


def transfer_set(data):
    """Every noun gloss of the training split; -1 marks the ones outside the
    labelled sample (only the teacher labels them)."""
    texts, _ = datasets.load_supersense("train", pos="n")
    labelled = dict(zip(data[0], data[1]))
    return texts, np.asarray([labelled.get(text, UNLABELLED) for text in texts])


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", default="albert_tiny_en")
    parser.add_argument("--distilled", default="albert_tiny_en_student")
    parser.add_argument("--plain", required=True,
                        help="the same student pretrained without distillation")
    parser.add_argument("--output", default="runs/student_report")
    parser.add_argument("--record", default=None,
                        help="also write the summary here with date, machine and versions "
                             "(e.g. benchmarks/results/student_report.json)")
    parser.add_argument("--train_examples", type=int, default=12000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--latency_rounds", type=int, default=15)
    parser.add_argument("--latency_calls", type=int, default=50)
    parser.add_argument("--student_epochs", type=int, default=4)
    parser.add_argument("--student_learning_rate", type=float, default=1e-3)
    parser.add_argument("--distill_temperature", type=float, default=2.0)
    parser.add_argument("--distill_alpha", type=float, default=0.5)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="each seed draws its own training glosses and initialisation")
    return parser.parse_args(argv)


def run_seed(args, seed, output, qs):
    """One seed's report: every model trained, exported and timed."""
    output.mkdir(parents=True, exist_ok=True)
    started = time.time()
    labels = datasets.supersense_labels(pos="n")
    data = qs.supersense_data(args.train_examples, seed)
    student_args = argparse.Namespace(epochs=args.student_epochs, batch_size=args.batch_size,
                                      learning_rate=args.student_learning_rate, seed=seed)
    teacher_args = argparse.Namespace(epochs=args.epochs, batch_size=args.batch_size,
                                      learning_rate=args.learning_rate, seed=seed)
    models = [("teacher", args.teacher, "labels"),
              ("student, task-distilled", args.distilled, "teacher"),
              ("student, general-distilled", args.distilled, "labels"),
              ("student without distillation", args.plain, "labels")]
    rows, tflite_paths, features, teacher = {}, {}, None, None
    for name, preset, method in models:
        keras.utils.set_random_seed(seed)
        preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
            preset, sequence_length=args.sequence_length)
        backbone = keras_albert.AlbertBackbone.from_preset(preset)
        classifier = qs.classifier_from(backbone, preprocessor, len(labels), labels)
        fit_started = time.time()
        if method == "teacher":
            transfer = transfer_set(data)
            qs.log(f"{name}: {preset} learns the teacher on {len(transfer[0])} glosses "
                   f"({int((transfer[1] >= 0).sum())} labelled), {args.student_epochs} epochs")
            history = distill_classifier(classifier, teacher, transfer[0], transfer[1],
                                         epochs=args.student_epochs,
                                         batch_size=args.batch_size,
                                         learning_rate=args.student_learning_rate,
                                         temperature=args.distill_temperature,
                                         alpha=args.distill_alpha,
                                         validation_data=(data[2], data[3]), seed=seed,
                                         verbose=2)
            # Scored on the held-out glosses after the last epoch.
            accuracy = history.history["val_accuracy"][-1]
        else:
            schedule = teacher_args if name == "teacher" else student_args
            qs.log(f"{name}: fine-tuning {preset} on {len(data[0])} glosses, {schedule.epochs} epochs")
            accuracy = qs.train_and_evaluate(classifier, data, schedule)
        if name == "teacher":
            teacher = classifier
        row = {"preset": path_for_the_record(preset, output), "training": method,
               "backbone_parameters": backbone.count_params(),
               "classifier_parameters": classifier.count_params(),
               "accuracy": round(accuracy, 4),
               "training_seconds": round(time.time() - fit_started, 1)}
        qs.log(f"    accuracy {accuracy:.4f}")
        slug = name.replace(",", "").replace(" ", "_")
        classifier.save_to_preset(str(output / slug / "preset"))
        test_features = token_features(classifier, data[2], args.sequence_length)
        for quantize, label in (("none", "float32"), ("dynamic", "int8")):
            path = output / f"{slug}_{label}.tflite"
            try:
                report = export_tflite(classifier, path, quantize=quantize,
                                       sequence_length=args.sequence_length,
                                       check_texts=data[2][:64])
                row[f"tflite_{label}_check"] = {
                    k: v for k, v in report.items()
                    if k in ("max_abs_difference", "argmax_agreement")}
            except ValueError as error:
                # The exporter's parity gate refused it; convert anyway so the
                # size, latency and accuracy below are still measured, and say so.
                path.write_bytes(tflite_export.convert(classifier, args.sequence_length, quantize))
                row[f"tflite_{label}_check"] = {"refused_by_export_tflite": str(error)}
            content = path.read_bytes()
            row[f"tflite_{label}_bytes"] = len(content)
            logits = run_tflite(content, test_features, batch_size=256)["logits"]
            row[f"tflite_{label}_accuracy"] = round(float((logits.argmax(-1) == data[3]).mean()), 4)
            tflite_paths[(name, label)] = path
        if features is None:
            features = token_features(classifier, data[2][:1], args.sequence_length)
        rows[name] = row

    qs.log("single-text TFLite latency (1 thread, rounds interleaved)")
    latency = single_text_latency(
        {f"{n}|{l}": p for (n, l), p in tflite_paths.items()}, features,
        args.latency_rounds, args.latency_calls)
    for key, seconds in latency.items():
        name, label = key.split("|")
        rows[name][f"latency_{label}_ms"] = round(seconds * 1000, 3)
    compare_with_teacher(rows)
    # The baselines the protocol sets beside every quality figure, on the
    # same training glosses and test split.
    baselines = {"majority": round(majority_baseline(data[1], data[3])["accuracy"], 4)}
    tfidf = qs.tfidf_accuracy(data, seed)
    if tfidf is not None:
        baselines["tfidf"] = round(tfidf, 4)
    return {
        "task": TASK,
        "seed": seed,
        "fine_tuning": settings(args, data),
        "latency": latency_settings(args),
        "models": rows,
        "baselines": baselines,
        "seconds": round(time.time() - started, 1),
    }


TASK = "WordNet noun supersense (26 classes), scored on the test split (synset crc 90-99)"


def settings(args, data):
    return {"train_examples": len(data[0]), "test_examples": len(data[2]),
            "epochs": args.epochs, "batch_size": args.batch_size,
            "learning_rate": args.learning_rate,
            "sequence_length": args.sequence_length,
            "student_epochs": args.student_epochs,
            "student_learning_rate": args.student_learning_rate,
            "distill_temperature": args.distill_temperature,
            "distill_alpha": args.distill_alpha}


def latency_settings(args):
    return {"threads": 1, "rounds": args.latency_rounds, "calls": args.latency_calls,
            "sequence_length": args.sequence_length}


def compare_with_teacher(rows):
    """Adds each row's parameter ratio, accuracy points and speed-up against
    the teacher's row."""
    teacher_row = rows["teacher"]
    for row in rows.values():
        row["parameter_ratio_vs_teacher"] = round(
            teacher_row["backbone_parameters"] / row["backbone_parameters"], 2)
        row["accuracy_points_vs_teacher"] = round(100 * (row["accuracy"] - teacher_row["accuracy"]), 2)
        for label in ("float32", "int8"):
            row[f"speedup_{label}_vs_teacher"] = round(
                teacher_row[f"latency_{label}_ms"] / row[f"latency_{label}_ms"], 2)


# Per-seed differences in points (first minus second), each seed's models
# trained on the same glosses.
MARGINS = {
    "task_distilled_minus_teacher": ("student, task-distilled", "teacher"),
    "task_distilled_minus_general_distilled": ("student, task-distilled",
                                               "student, general-distilled"),
    "general_distilled_minus_without_distillation": ("student, general-distilled",
                                                     "student without distillation"),
    "task_distilled_minus_tfidf": ("student, task-distilled", "tfidf"),
    "teacher_minus_tfidf": ("teacher", "tfidf"),
}


def summarise(reports):
    """The seeds' reports as one, in a seed report's layout (so a model card
    reads it alike): each row's accuracies and latencies are means over the
    seeds, with `<key>_sd` and `<key>_per_seed` beside them; the TFLite
    export checks per seed; sizes and
    parameter counts, which no seed changes, from the first seed; `margins`
    are per-seed differences in points, as mean, sd and seeds."""
    first = reports[0]
    averaged = ("accuracy", "tflite_float32_accuracy", "tflite_int8_accuracy",
                "latency_float32_ms", "latency_int8_ms", "training_seconds")
    rows = {}
    for name, row in first["models"].items():
        rows[name] = {k: v for k, v in row.items() if k not in averaged and not k.endswith("_check")}
        for key in (k for k in row if k.endswith("_check")):  # the export gate's verdicts
            rows[name][f"{key}_per_seed"] = [report["models"][name].get(key) for report in reports]
        for key in averaged:
            values = [report["models"][name][key] for report in reports]
            stats = mean_sd(values)
            rows[name][key] = stats["mean"]
            rows[name][f"{key}_sd"] = stats["sd"]
            rows[name][f"{key}_per_seed"] = values
    compare_with_teacher(rows)

    def accuracy(report, name):
        if name in report["models"]:
            return report["models"][name]["accuracy"]
        return report["baselines"][name]

    margins = {}
    for key, (a, b) in MARGINS.items():
        if all(b in report["models"] or b in report["baselines"] for report in reports):
            margins[key] = mean_sd([100 * (accuracy(r, a) - accuracy(r, b)) for r in reports])
    baselines = {}
    for name in first["baselines"]:
        values = [report["baselines"][name] for report in reports]
        baselines[name] = {**mean_sd(values), "per_seed": values}
    return {
        "task": first["task"],
        "seeds": [report["seed"] for report in reports],
        "fine_tuning": first["fine_tuning"],
        "latency": first["latency"],
        "models": rows,
        "baselines": baselines,
        "margins": margins,
        "seconds": round(sum(report["seconds"] for report in reports), 1),
    }


def print_table(report, where):
    print("\n=== teacher vs students (supersense, TFLite) ===")
    header = (f"{'model':<30}{'params':>11}{'ratio':>7}{'f32 KB':>9}{'int8 KB':>9}"
              f"{'f32 ms':>8}{'int8 ms':>9}{'speedup':>9}{'accuracy':>10}{'int8 acc':>10}")
    print(header)
    for name, row in report["models"].items():
        print(f"{name:<30}{row['backbone_parameters']:>11,}"
              f"{row['parameter_ratio_vs_teacher']:>7.2f}"
              f"{row['tflite_float32_bytes'] / 1024:>9.0f}{row['tflite_int8_bytes'] / 1024:>9.0f}"
              f"{row['latency_float32_ms']:>8.3f}{row['latency_int8_ms']:>9.3f}"
              f"{row['speedup_int8_vs_teacher']:>9.2f}{row['accuracy']:>10.4f}"
              f"{row['tflite_int8_accuracy']:>10.4f}")
    for name, stats in report.get("margins", {}).items():
        print(f"{name}: {stats['mean']:+.1f} +- {stats['sd'] or 0:.1f} points")
    print("(accuracy: Keras model, mean over the seeds; int8 acc: the int8 TFLite file, "
          "same test glosses)")
    print(f"(speedup: int8 latency vs the teacher's int8; report: {where}; "
          f"{report['seconds']:.0f} s)")


# The flags a kept seed must share with the rerun (the glosses' count is
# checked through train_examples).
SCHEDULE_FLAGS = ("epochs", "batch_size", "learning_rate", "sequence_length", "student_epochs",
                  "student_learning_rate", "distill_temperature", "distill_alpha")


def check_same_settings(kept, args, path):
    """A finished seed is only kept for a rerun with the same schedule:
    mixing schedules would average different experiments."""
    recorded = kept.get("fine_tuning", {})
    for name in ("train_examples", *SCHEDULE_FLAGS):
        if name in recorded and recorded[name] != getattr(args, name):
            raise SystemExit(
                f"{path} was made with --{name}={recorded[name]!r}, not {getattr(args, name)!r}: "
                f"rerun with that value, or give another --output.")


def main(argv=None):
    args = parse_args(argv)
    output = pathlib.Path(args.output)
    qs = quickstart()
    reports = []
    for seed in args.seeds:
        path = output / f"seed_{seed}" / "report.json"
        if path.exists():  # a finished seed is kept; rerunning resumes
            check_same_settings(json.loads(path.read_text()), args, path)
            qs.log(f"seed {seed}: kept {path}")
        else:
            report = run_seed(args, seed, path.parent, qs)
            write_file_atomically(path, json.dumps(report, indent=2), name="report")
        reports.append(json.loads(path.read_text()))
    summary = summarise(reports)
    write_file_atomically(output / "report.json", json.dumps(summary, indent=2), name="report")
    if args.record:
        write_result(args.record, summary, argv=None if argv is None else [__file__, *argv])
    print_table(summary, output / "report.json")


if __name__ == "__main__":
    main()
