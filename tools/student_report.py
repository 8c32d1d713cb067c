"""Teacher vs distilled student vs the same student without distillation.

In one run: fine-tunes each model on WordNet noun supersenses exactly as
examples/quickstart.py does (its data split and training function), exports
each fine-tuned classifier to float32 and dynamic-range int8 TFLite with
`keras_albert.export.tflite_export.export_tflite`, and prints parameters,
TFLite sizes, single-text TFLite latency and held-out accuracy.

Latency: one text padded to --sequence_length, one interpreter thread,
median over rounds that alternate between the models (so background load
hits them alike).

Usage:
    python tools/student_report.py \\
        --plain runs/albert_tiny_en_student_plain/preset --output runs/student_report
"""

import argparse
import importlib.util
import json
import os
import pathlib
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert import datasets  # noqa: E402
from keras_albert.export import tflite_export  # noqa: E402
from keras_albert.export.tflite_export import export_tflite  # noqa: E402
from keras_albert.export.tflite_export import run_tflite  # noqa: E402
from keras_albert.export.tflite_export import token_features  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teacher", default="albert_tiny_en")
    parser.add_argument("--distilled", default="albert_tiny_en_student")
    parser.add_argument("--plain", required=True,
                        help="the same student pretrained without distillation")
    parser.add_argument("--output", default="runs/student_report")
    parser.add_argument("--train_examples", type=int, default=12000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=3e-4)
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--latency_rounds", type=int, default=15)
    parser.add_argument("--latency_calls", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    output = pathlib.Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    qs = quickstart()
    started = time.time()
    labels = datasets.supersense_labels(pos="n")
    data = qs.supersense_data(args.train_examples, args.seed)
    models = {"teacher": args.teacher, "distilled student": args.distilled,
              "student without distillation": args.plain}
    rows, tflite_paths, features = {}, {}, None
    for name, preset in models.items():
        qs.log(f"{name}: fine-tuning {preset} on {len(data[0])} glosses, {args.epochs} epochs")
        keras.utils.set_random_seed(args.seed)
        preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
            preset, sequence_length=args.sequence_length)
        backbone = keras_albert.AlbertBackbone.from_preset(preset)
        classifier = qs.classifier_from(backbone, preprocessor, len(labels))
        fit_started = time.time()
        accuracy = qs.train_and_evaluate(classifier, data, args)
        row = {"preset": str(preset), "backbone_parameters": backbone.count_params(),
               "classifier_parameters": classifier.count_params(),
               "accuracy": round(accuracy, 4),
               "fine_tuning_seconds": round(time.time() - fit_started, 1)}
        qs.log(f"    accuracy {accuracy:.4f}")
        slug = name.replace(" ", "_")
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

    teacher = rows["teacher"]
    for name, row in rows.items():
        row["parameter_ratio_vs_teacher"] = round(
            teacher["backbone_parameters"] / row["backbone_parameters"], 2)
        for label in ("float32", "int8"):
            row[f"speedup_{label}_vs_teacher"] = round(
                teacher[f"latency_{label}_ms"] / row[f"latency_{label}_ms"], 2)
    report = {
        "task": "WordNet noun supersense (26 classes), validation split",
        "fine_tuning": {"train_examples": len(data[0]), "test_examples": len(data[2]),
                        "epochs": args.epochs, "batch_size": args.batch_size,
                        "learning_rate": args.learning_rate,
                        "sequence_length": args.sequence_length},
        "latency": {"threads": 1, "rounds": args.latency_rounds, "calls": args.latency_calls,
                    "sequence_length": args.sequence_length},
        "models": rows,
        "seconds": round(time.time() - started, 1),
    }
    (output / "report.json").write_text(json.dumps(report, indent=2))

    print("\n=== teacher vs students (supersense, TFLite) ===")
    header = (f"{'model':<30}{'params':>11}{'ratio':>7}{'f32 KB':>9}{'int8 KB':>9}"
              f"{'f32 ms':>8}{'int8 ms':>9}{'speedup':>9}{'accuracy':>10}{'int8 acc':>10}")
    print(header)
    for name, row in rows.items():
        print(f"{name:<30}{row['backbone_parameters']:>11,}"
              f"{row['parameter_ratio_vs_teacher']:>7.2f}"
              f"{row['tflite_float32_bytes'] / 1024:>9.0f}{row['tflite_int8_bytes'] / 1024:>9.0f}"
              f"{row['latency_float32_ms']:>8.3f}{row['latency_int8_ms']:>9.3f}"
              f"{row['speedup_int8_vs_teacher']:>9.2f}{row['accuracy']:>10.4f}"
              f"{row['tflite_int8_accuracy']:>10.4f}")
    print("(accuracy: Keras model; int8 acc: the int8 TFLite file, same held-out glosses)")
    print(f"(speedup: int8 latency vs the teacher's int8; report: {output / 'report.json'}; "
          f"{report['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
