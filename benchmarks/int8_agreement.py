"""Full int8 TFLite against Keras on held-out texts: agreement, size, latency.

For one classifier, with token-id inputs and with raw strings in, builds
float32, dynamic-range int8, full int8 with every op quantized (the
converter's plain output), and full int8 as `export_tflite` /
`export_raw_string_tflite` write it (int8 dense layers and embeddings,
float ops between them; `keras_albert/export/int8_conversion.py`). Both full
int8 files are calibrated on the same texts (default: the exporter's
bundled 300-text sample). Each file is compared with Keras on
`--check_texts` noun glosses of the supersense validation split, a fixed
sample spread over the supersenses (never calibrated on, nor seen in
pretraining or fine-tuning) and, for the spread, on `--extra_texts` more;
latency is one text per call on one thread (LiteRT interpreter, XNNPACK),
the median of `--calls` calls in each of `--rounds` rounds. Writes `benchmarks/results/int8_agreement.json` (or
`--output`).

    python benchmarks/int8_agreement.py
    python benchmarks/int8_agreement.py --preset albert_tiny_en --linear_probe 4000 \\
        --output int8_agreement_albert_tiny_en.json

`--linear_probe N` puts a logistic-regression head, fitted on the pooled
outputs of N supersense training glosses, on a backbone-only preset.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np
import tensorflow_text as tf_text

import keras_albert
from keras_albert import datasets
from keras_albert.export.int8_calibration import default_calibration_texts
from keras_albert.export.int8_conversion import op_precisions
from keras_albert.export.raw_string_tflite import convert_raw_string
from keras_albert.export.raw_string_tflite import export_raw_string_tflite
from keras_albert.export.raw_string_tflite import raw_string_converter
from keras_albert.export.raw_string_tflite import run_raw_string_tflite
from keras_albert.export.tflite_export import convert
from keras_albert.export.tflite_export import export_tflite
from keras_albert.export.tflite_export import keras_logits
from keras_albert.export.tflite_export import run_tflite
from keras_albert.export.tflite_export import token_converter
from keras_albert.export.tflite_export import token_features

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import check_rounds  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402

VARIANTS = ("float32", "dynamic", "int8 every op", "int8")


def load_classifier(preset, linear_probe, sequence_length):
    """The preset's classifier, or a backbone preset with a fitted linear head."""
    if not linear_probe:
        return keras_albert.AlbertClassifier.from_preset(preset)
    from sklearn.linear_model import LogisticRegression

    labels = datasets.supersense_labels("n")
    classifier = keras_albert.AlbertClassifier.from_preset(preset, num_classes=len(labels))
    texts, targets, _, _ = datasets.supersense_split_sample(train_size=linear_probe, seed=1)
    features = token_features(classifier, texts, sequence_length)
    pooled = np.concatenate([
        np.asarray(classifier.backbone({k: v[i : i + 256] for k, v in features.items()})["pooled_output"])
        for i in range(0, len(texts), 256)
    ])
    probe = LogisticRegression(max_iter=2000).fit(pooled, targets)
    weights = np.zeros((pooled.shape[1], len(labels)), "float32")
    bias = np.full(len(labels), -1e3, "float32")  # Classes the sample lacks never win.
    weights[:, probe.classes_] = probe.coef_.T
    bias[probe.classes_] = probe.intercept_
    classifier.output_dense.kernel.assign(weights)
    classifier.output_dense.bias.assign(bias)
    return classifier


def build_files(task, sequence_length, calibration, check):
    """{(inputs, variant): bytes} and the exporters' own reports."""
    files, reports, failures = {}, {}, []
    features = token_features(task, calibration, sequence_length)
    for variant in ("float32", "dynamic"):
        quantize = "none" if variant == "float32" else variant
        files["tokens", variant] = convert(task, sequence_length, quantize)
        files["raw_strings", variant] = convert_raw_string(task, sequence_length, quantize)
    files["tokens", "int8 every op"] = token_converter(task, sequence_length, "int8", features).convert()
    files["raw_strings", "int8 every op"] = raw_string_converter(
        task, sequence_length, "int8", representative_texts=calibration).convert()
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"int8_agreement_{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    for inputs, export, fallback in (
        ("tokens", export_tflite, lambda: convert(task, sequence_length, "int8", features)),
        ("raw_strings", export_raw_string_tflite,
         lambda: convert_raw_string(task, sequence_length, "int8", representative_texts=calibration)),
    ):
        path = os.path.join(work, f"{inputs}.tflite")
        try:
            reports[inputs] = export(task, path, "int8", sequence_length, check_texts=check,
                                     representative_texts=calibration, overwrite=True)
            # A scratch file, gone after the run: its name, not this machine's path.
            reports[inputs]["path"] = os.path.basename(path)
            with open(path, "rb") as file:
                files[inputs, "int8"] = file.read()
            os.remove(path)
        except ValueError as error:
            # The exporter refused the file (below 99 %): measure it anyway, say so.
            failures.append(f"{inputs} int8: {error}")
            files[inputs, "int8"] = fallback()
    os.rmdir(work)
    return files, reports, failures


def runner_for(inputs, content):
    from ai_edge_litert.interpreter import Interpreter
    from ai_edge_litert.interpreter import InterpreterWithCustomOps

    if inputs == "tokens":
        return Interpreter(model_content=content, num_threads=1).get_signature_runner()
    return InterpreterWithCustomOps(
        model_content=content, num_threads=1,
        custom_op_registerers=tf_text.tflite_registrar.SELECT_TFTEXT_OPS,
    ).get_signature_runner()


def latency_ms(run, calls, rounds):
    """Median ms of `calls` calls, per round."""
    for _ in range(10):
        run()
    medians = []
    for _ in range(rounds):
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) * 1000)
        medians.append(statistics.median(times))
    return spread(medians)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="albert_tiny_en_student_supersense")
    parser.add_argument("--linear_probe", type=int, default=0,
                        help="fit a linear head on this many training glosses (backbone-only presets)")
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--check_texts", type=int, default=200)
    parser.add_argument("--extra_texts", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output", default="int8_agreement.json",
                        help="under benchmarks/results/ unless a path")
    args = parser.parse_args()
    check_rounds(args.rounds)
    task = load_classifier(args.preset, args.linear_probe, args.sequence_length)
    # One fixed random sample: its start is the exporter's default check texts.
    validation, _ = datasets.supersense_held_out_sample(args.check_texts + args.extra_texts)
    check = validation[: args.check_texts]
    extra = validation[args.check_texts :]
    calibration = default_calibration_texts()
    texts = check + extra
    features = token_features(task, texts, args.sequence_length)
    reference = keras_logits(task, features)["logits"]
    margins = np.diff(np.sort(reference, -1)[:, -2:], axis=-1)[:, 0]

    started = time.time()
    files, reports, failures = build_files(task, args.sequence_length, calibration, check)
    print(f"built {len(files)} files in {time.time() - started:.0f} s", flush=True)
    one_text = {k: v[:1] for k, v in features.items()}
    one_string = np.array([texts[0].encode()], dtype=object)
    rows = {}
    for (inputs, variant), content in files.items():
        if inputs == "tokens":
            logits = run_tflite(content, features, batch_size=32)["logits"]
        else:
            logits = run_raw_string_tflite(content, texts)["logits"]
        runner = runner_for(inputs, content)
        if inputs == "tokens":
            timing = latency_ms(lambda: runner(**one_text), args.calls, args.rounds)
        else:
            timing = latency_ms(lambda: runner(text=one_string), args.calls, args.rounds)
        agree = logits.argmax(-1) == reference.argmax(-1)
        error = np.abs(logits - reference)
        precisions = op_precisions(content)
        rows.setdefault(inputs, {})[variant] = {
            "bytes": len(content),
            "argmax_agreement": float(agree[: len(check)].mean()),
            "argmax_agreement_extra": float(agree[len(check) :].mean()) if extra else None,
            "disagreements_top2_margin": [round(float(m), 4) for m in margins[~agree]],
            "mean_abs_logit_difference": float(error.mean()),
            "max_abs_logit_difference": float(error.max()),
            "one_text_1_thread_ms": timing,
            "dense_layers_int8": precisions.get("FULLY_CONNECTED", {}).get("int8", 0),
            "dense_layers_float32": precisions.get("FULLY_CONNECTED", {}).get("float32", 0),
            "ops_int8": sum(c["int8"] for op, c in precisions.items() if op not in ("DEQUANTIZE",)),
            "ops_float32": sum(c["float32"] for op, c in precisions.items() if op not in ("QUANTIZE",)),
        }
    for inputs in rows:
        for variant in VARIANTS:
            row = rows[inputs][variant]
            row["bytes_over_dynamic"] = row["bytes"] / rows[inputs]["dynamic"]["bytes"]
            row["latency_over_dynamic"] = (row["one_text_1_thread_ms"]["median"]
                                           / rows[inputs]["dynamic"]["one_text_1_thread_ms"]["median"])

    print(f"\n{args.preset}: {len(check)} held-out glosses (+{len(extra)} for the spread), "
          f"calibration {len(calibration)} texts, sequence_length {args.sequence_length}")
    print("| inputs | file | bytes | x dynamic | agreement | agreement (extra) | mean abs logit diff "
          "| int8 / float dense layers | int8 / float ops | 1 text, 1 thread ms [min-max] |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for inputs in rows:
        for variant in VARIANTS:
            r = rows[inputs][variant]
            t = r["one_text_1_thread_ms"]
            extra_cell = "-" if r["argmax_agreement_extra"] is None else f"{r['argmax_agreement_extra']:.1%}"
            print(f"| {inputs} | {variant} | {r['bytes']:,} | {r['bytes_over_dynamic']:.2f} | "
                  f"{r['argmax_agreement']:.1%} | {extra_cell} | {r['mean_abs_logit_difference']:.4f} | "
                  f"{r['dense_layers_int8']} / {r['dense_layers_float32']} | "
                  f"{r['ops_int8']} / {r['ops_float32']} | "
                  f"{t['median']:.3f} [{t['min']:.3f}-{t['max']:.3f}] |")
    for failure in failures:
        print(f"refused: {failure}")
    write_result(args.output, {
        "settings": {
            "preset": args.preset, "linear_probe": args.linear_probe,
            "sequence_length": args.sequence_length, "check_texts": len(check),
            "extra_texts": len(extra), "calibration_texts": len(calibration),
            "calibration": "keras_albert.export.int8_calibration.default_calibration_texts()",
            "check": "datasets.supersense_held_out_sample: a fixed random sample of validation noun glosses", "calls": args.calls,
            "rounds": args.rounds,
        },
        "keras_near_ties": {"top2_margin_below_0.02": int((margins < 0.02).sum()),
                            "top2_margin_below_0.05": int((margins < 0.05).sum()),
                            "texts": len(texts)},
        "rows": rows,
        "export_reports": reports,
        "failures": failures,
    })


if __name__ == "__main__":
    main()
