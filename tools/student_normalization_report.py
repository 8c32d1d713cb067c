"""LayerNorm student vs NoNorm student: distillation time, then fine-tuning.

MobileBERT's students replace LayerNorm with NoNorm (an elementwise scale
and shift) for speed. The bundled student keeps LayerNorm; this report is
the measurement behind that choice. It distils both students from the
bundled `albert_tiny_en` with `tools/distill_albert_tiny_en_student.py`
(the same corpus, steps and seed; only `--normalization` differs) and
times each distillation. Then, for each seed, it fine-tunes both on the
same labelled noun glosses with the student schedule of
`tools/student_report.py` (4 epochs, batch 64, learning rate 1e-3, sequence
32; the epoch chosen on a carve-out of the training glosses) and scores
them on the supersense test split, beside the majority class and tuned
TF-IDF on the same glosses.

It times both float32 TFLite files on one text (one interpreter thread,
median of interleaved rounds, as `tools/student_report.py` does): what
NoNorm saves. It also records the root-mean-square of the backbone's sequence output on
test glosses before and after fine-tuning (its growth), and the share of
test glosses given the most frequent predicted class (1.0: one class for
everything).

A finished distillation or seed is kept, so rerunning resumes; one made
with other settings is refused rather than mixed in.

Usage:
    python tools/student_normalization_report.py --output runs/student_normalization \\
        --record benchmarks/results/student_normalization.json
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.pipelines import majority_baseline  # noqa: E402
from keras_albert.utils.atomic_file import write_file_atomically  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tools"))
from recording import mean_sd  # noqa: E402
from recording import write_result  # noqa: E402
from student_report import quickstart  # noqa: E402
from student_report import single_text_latency  # noqa: E402

NORMALIZATIONS = ("layer_norm", "no_norm")
# Test glosses the activation scale is measured on (enough for a stable mean).
SCALE_TEXTS = 512
LATENCY_ROUNDS, LATENCY_CALLS = 15, 50


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default="runs/student_normalization")
    parser.add_argument("--record", default=None,
                        help="also write the summary here (e.g. benchmarks/results/"
                             "student_normalization.json), with machine and versions")
    parser.add_argument("--corpus_dir", default="runs/corpus")
    parser.add_argument("--train_steps", type=int, default=450)
    parser.add_argument("--train_examples", type=int, default=12000)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    return parser.parse_args(argv)


def fine_tuning_settings(args):
    return {"train_examples": args.train_examples, "epochs": args.epochs,
            "batch_size": args.batch_size, "learning_rate": args.learning_rate,
            "sequence_length": args.sequence_length}


def check_same_settings(kept, wanted, path):
    """Exits naming the first setting of a kept result that differs."""
    for key, value in wanted.items():
        if kept.get(key) != value:
            raise SystemExit(f"{path} was made with --{key}={kept.get(key)}, not {value}: "
                             "remove it or give another --output")


def distil(args, normalization, output):
    """The student's preset directory, distilled once, and its record: the
    seconds it took and whether it went on from a stopped run (its seconds
    then cover only the rest)."""
    record = output / "distillation.json"
    if record.exists():
        kept = json.loads(record.read_text())
        check_same_settings(kept, {"train_steps": args.train_steps}, record)
        return output / "preset", kept
    resumed = output.exists()
    started = time.time()
    subprocess.run([sys.executable, str(ROOT / "tools" / "distill_albert_tiny_en_student.py"),
                    "--output", str(output), "--corpus_dir", args.corpus_dir,
                    "--train_steps", str(args.train_steps),
                    "--normalization", normalization], check=True)
    kept = {"seconds": round(time.time() - started, 1), "train_steps": args.train_steps,
            "resumed": resumed}
    write_file_atomically(record, json.dumps(kept))
    return output / "preset", kept


def activation_scale(classifier, texts):
    """Root-mean-square of the backbone's sequence output over real tokens."""
    features = classifier.preprocessor(texts)
    features = features[0] if isinstance(features, tuple) else features
    outputs = keras.ops.convert_to_numpy(classifier.backbone(features)["sequence_output"])
    mask = keras.ops.convert_to_numpy(features["padding_mask"]).astype(bool)
    return float(np.sqrt(np.mean(np.square(outputs[mask]))))


def classifier_for(preset, args, labels):
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
        str(preset), sequence_length=args.sequence_length)
    backbone = keras_albert.AlbertBackbone.from_preset(str(preset))
    return keras_albert.AlbertClassifier(backbone, num_classes=len(labels),
                                         preprocessor=preprocessor, label_names=labels)


def float32_latency_ms(args, presets, output):
    """Median milliseconds per one-text float32 TFLite call, per student.
    The head's weights do not change the work, so untrained heads do."""
    from keras_albert.export import tflite_export

    labels = datasets.supersense_labels(pos="n")
    paths = {}
    for normalization, preset in presets.items():
        classifier = classifier_for(preset, args, labels)
        paths[normalization] = output / normalization / "float32.tflite"
        write_file_atomically(paths[normalization],
                              tflite_export.convert(classifier, args.sequence_length))
    # The students share the teacher's vocabulary: one text's ids serve both.
    features = tflite_export.token_features(classifier, ["a large dog"], args.sequence_length)
    seconds = single_text_latency(paths, features, LATENCY_ROUNDS, LATENCY_CALLS)
    return {normalization: round(value * 1000, 3) for normalization, value in seconds.items()}


def run_seed(args, seed, presets, qs):
    labels = datasets.supersense_labels(pos="n")
    data = qs.supersense_data(args.train_examples, seed)
    schedule = argparse.Namespace(epochs=args.epochs, batch_size=args.batch_size,
                                  learning_rate=args.learning_rate, seed=seed)
    scale_texts = data[2][:SCALE_TEXTS]
    rows = {}
    for normalization, preset in presets.items():
        keras.utils.set_random_seed(seed)
        classifier = classifier_for(preset, args, labels)
        before = activation_scale(classifier, scale_texts)
        qs.log(f"seed {seed}, {normalization}: fine-tuning on {len(data[0])} glosses")
        started = time.time()
        accuracy = qs.train_and_evaluate(classifier, data, schedule)
        predicted = classifier.predict(data[2], batch_size=256, verbose=0).argmax(-1)
        after = activation_scale(classifier, scale_texts)
        rows[normalization] = {
            "accuracy": round(accuracy, 4),
            "most_frequent_prediction_share": round(
                float(np.bincount(predicted).max() / len(predicted)), 4),
            "activation_rms_before": round(before, 4),
            "activation_rms_after": round(after, 4),
            "activation_growth": round(after / before, 2),
            "training_seconds": round(time.time() - started, 1),
        }
        qs.log(f"    {rows[normalization]}")
    baselines = {"majority": round(majority_baseline(data[1], data[3])["accuracy"], 4)}
    tfidf = qs.tfidf_accuracy(data, seed)
    if tfidf is not None:
        baselines["tfidf"] = round(tfidf, 4)
    return {"seed": seed, "fine_tuning": fine_tuning_settings(args),
            "test_examples": len(data[2]), "models": rows, "baselines": baselines}


def summarise(args, distillations, latency_ms, reports):
    models = {
        normalization: {
            key: mean_sd([report["models"][normalization][key] for report in reports])
            for key in ("accuracy", "most_frequent_prediction_share", "activation_growth")
        }
        for normalization in NORMALIZATIONS
    }
    for normalization, distillation in distillations.items():
        models[normalization]["distillation_seconds"] = distillation["seconds"]
        # Records written before resumption was noted ran in one go.
        models[normalization]["distillation_resumed"] = distillation.get("resumed", False)
        models[normalization]["latency_float32_ms"] = latency_ms[normalization]
    baselines = {name: mean_sd([report["baselines"][name] for report in reports])
                 for name in reports[0]["baselines"]}
    # Differences seed by seed (both students learn the same glosses).
    margin = mean_sd([100 * (report["models"]["layer_norm"]["accuracy"]
                             - report["models"]["no_norm"]["accuracy"]) for report in reports])
    return {
        "task": "WordNet noun supersense (26 classes), scored on the test split",
        "distillation": {"teacher": "albert_tiny_en", "train_steps": args.train_steps,
                         "script": "tools/distill_albert_tiny_en_student.py"},
        "fine_tuning": fine_tuning_settings(args),
        "latency": {"threads": 1, "rounds": LATENCY_ROUNDS, "calls": LATENCY_CALLS,
                    "format": "float32 TFLite, one text"},
        "models": models,
        "baselines": baselines,
        "margins_points": {"layer_norm_minus_no_norm": margin},
        "per_seed": reports,
    }


def main(argv=None):
    args = parse_args(argv)
    output = pathlib.Path(args.output)
    qs = quickstart()
    presets, distillations = {}, {}
    for normalization in NORMALIZATIONS:
        qs.log(f"distilling the {normalization} student")
        presets[normalization], distillations[normalization] = distil(
            args, normalization, output / normalization)
    reports = []
    for seed in args.seeds:
        path = output / f"seed_{seed}.json"
        if not path.exists():
            write_file_atomically(path, json.dumps(run_seed(args, seed, presets, qs), indent=2))
        report = json.loads(path.read_text())
        check_same_settings(report["fine_tuning"], fine_tuning_settings(args), path)
        reports.append(report)
    qs.log("single-text float32 TFLite latency (1 thread, rounds interleaved)")
    latency = float32_latency_ms(args, presets, output)
    summary = summarise(args, distillations, latency, reports)
    write_file_atomically(output / "report.json", json.dumps(summary, indent=2))
    if args.record:
        write_result(args.record, summary)
    for normalization, row in summary["models"].items():
        qs.log(f"{normalization}: accuracy {row['accuracy']['mean']:.4f} "
               f"+- {row['accuracy']['sd']}, activation growth "
               f"{row['activation_growth']['mean']}, {row['latency_float32_ms']} ms "
               f"per text, distilled in "
               f"{row['distillation_seconds']} s")
    qs.log(f"baselines: {summary['baselines']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
