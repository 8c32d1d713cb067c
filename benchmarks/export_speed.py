"""Size and latency of every export of one classifier, in one run.

Rows: the Keras model (token inputs, `predict_on_batch` under XLA as it
compiles by default), the serving SavedModel (raw strings in: tokenization
included), and TFLite float32 / float16 / dynamic-range int8 / full int8
(token inputs, LiteRT interpreter, XNNPACK), and raw-string TFLite
float32 / dynamic-range int8 (tokenizer inside, one text per call, run
with tensorflow-text's op registrar). Each row gives size on disk,
single-text and batch-32 latency (median of `--repeats` calls, default 20,
with the min-max), ratios to Keras (the named peer of every row), and
argmax agreement with Keras on held-out texts (WordNet glosses the
classifier never saw), and how long each export took (its parity check
included, as a user waits for it). Full int8 calibrates on the exporter's
default sample, as `export --quantize int8` does (`--calibration_texts N`:
the first N training glosses instead). Writes `benchmarks/results/export_speed.json` (or
`--output`) with the command, the date and the machine's cores.

    python benchmarks/export_speed.py --preset runs/quickstart/preset

Targets (issue 6): dynamic-range int8 <= 0.3x the float32 TFLite size and
<= 0.6x its latency, with >= 99 % argmax agreement.
"""

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

import tensorflow as tf

from keras_albert import datasets
from keras_albert.export import export_serving_saved_model
from keras_albert.export.raw_string_tflite import export_raw_string_tflite
from keras_albert.export.raw_string_tflite import raw_string_runner
from keras_albert.export.raw_string_tflite import run_raw_string_tflite
from keras_albert.export.tflite_export import export_tflite
from keras_albert.export.tflite_export import keras_logits
from keras_albert.export.tflite_export import run_tflite
from keras_albert.export.tflite_export import token_features
from keras_albert.publishing.task_loading import load_task

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import check_rounds  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402


class Milliseconds(float):
    """A median in ms that keeps the spread of its calls (`.spread`)."""

    def __new__(cls, times):
        value = super().__new__(cls, statistics.median(times))
        value.spread = spread(times)
        return value


def timed(function, repeats):
    function()  # warm-up (and XLA compilation)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append((time.perf_counter() - started) * 1000)
    return Milliseconds(times)


def seconds_once(function):
    """How long one call of `function` took (an export: it runs once)."""
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def directory_size(path):
    path = pathlib.Path(path)
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="runs/quickstart/preset")
    parser.add_argument("--sequence_length", type=int, default=32)
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--calibration_texts", type=int, default=None,
                        help="full int8 calibrates on the first N training glosses; default: the "
                             "exporter's own sample (what `export --quantize int8` uses)")
    parser.add_argument("--output", default="export_speed.json", help="under benchmarks/results/ unless a path")
    args = parser.parse_args()
    check_rounds(args.repeats, "--repeats")
    task = load_task(args.preset)
    texts, _ = datasets.load_supersense("test", pos="n")
    texts = texts[: args.texts]
    # Full int8 calibrates on training text, never on the checked glosses.
    calibration = (None if args.calibration_texts is None
                   else datasets.load_supersense("train", pos="n")[0][: args.calibration_texts])
    features = token_features(task, texts, args.sequence_length)
    one = {k: v[:1] for k, v in features.items()}
    batch = {k: v[:32] for k, v in features.items()}
    reference = keras_logits(task, features)["logits"].argmax(-1)
    work = pathlib.Path(tempfile.mkdtemp(prefix="export_speed_"))

    predict = tf.function(lambda x: task(x, training=False), jit_compile=True)
    # The Keras model is the backbone's weights and the task's (its head).
    keras_size = sum(directory_size(pathlib.Path(args.preset) / name)
                     for name in ("model.weights.h5", "task.weights.h5"))
    rows = [("keras (XLA)", keras_size, timed(lambda: predict(one), args.repeats),
             timed(lambda: predict(batch), args.repeats), 1.0, None)]

    export_seconds = seconds_once(
        lambda: export_serving_saved_model(task, work / "serving", check_texts=texts[:16]))
    serve = tf.saved_model.load(str(work / "serving")).signatures["serving_default"]
    one_text, batch_texts = tf.constant(texts[:1]), tf.constant(texts[:32])
    served = serve(text=tf.constant(texts))["logits"].numpy().argmax(-1)
    rows.append(("saved_model (strings)", directory_size(work / "serving"),
                 timed(lambda: serve(text=one_text), args.repeats),
                 timed(lambda: serve(text=batch_texts), args.repeats), float((served == reference).mean()),
                 export_seconds))

    failures = []
    for quantize in ("none", "float16", "dynamic", "int8"):
        path = work / f"{quantize}.tflite"
        try:
            export_seconds = seconds_once(lambda: export_tflite(
                task, path, quantize, args.sequence_length, check_texts=texts,
                representative_texts=calibration))
        except ValueError as error:
            # The export refuses a file that fails its check: report it.
            failures.append(f"tflite {quantize}: {error}")
            continue
        content = path.read_bytes()
        from ai_edge_litert.interpreter import Interpreter

        runner = Interpreter(model_content=content).get_signature_runner()
        agreement = float((run_tflite(content, features, 32)["logits"].argmax(-1) == reference).mean())
        rows.append((f"tflite {quantize}", len(content), timed(lambda: runner(**one), args.repeats),
                     timed(lambda: runner(**batch), args.repeats), agreement, export_seconds))

    for quantize in ("none", "dynamic"):
        path = work / f"text_{quantize}.tflite"
        try:
            export_seconds = seconds_once(lambda: export_raw_string_tflite(
                task, path, quantize, args.sequence_length, check_texts=texts))
        except ValueError as error:
            failures.append(f"tflite raw strings {quantize}: {error}")
            continue
        content = path.read_bytes()
        runner = raw_string_runner(content)
        outputs = run_raw_string_tflite(content, texts, runner=runner)["logits"].argmax(-1)
        single = timed(lambda: run_raw_string_tflite(content, texts[:1], runner=runner), args.repeats)
        # Batch-32 latency: 32 single-text calls (the file has batch size 1).
        many = timed(lambda: run_raw_string_tflite(content, texts[:32], runner=runner), args.repeats)
        rows.append((f"tflite raw strings {quantize}", len(content), single, many,
                     float((outputs == reference).mean()), export_seconds))

    base_size, base_one, base_batch = rows[0][1], rows[0][2], rows[0][3]
    print(f"\nexport speed: {args.preset}, sequence_length {args.sequence_length}, "
          f"{len(texts)} held-out texts, median of {args.repeats}")
    print("| export | size | x keras | 1 text ms [min-max] | x keras | 32 texts ms [min-max] | x keras "
          "| argmax agreement | export s |")
    print("|---|---|---|---|---|---|---|---|---|")

    def cell(value):
        s = value.spread
        return f"{value:.2f} [{s['min']:.2f}-{s['max']:.2f}]"

    for name, size, single, many, agreement, seconds in rows:
        took = "-" if seconds is None else f"{seconds:.1f}"
        print(f"| {name} | {size / 1e6:.2f} MB | {size / base_size:.2f} | {cell(single)} | "
              f"{single / base_one:.2f} | {cell(many)} | {many / base_batch:.2f} | {agreement:.1%} | {took} |")
    for failure in failures:
        print(f"| {failure} |")
    sizes = {name: size for name, size, *_ in rows}
    singles = {name: single for name, _, single, *_ in rows}
    if "tflite dynamic" in sizes and "tflite none" in sizes:
        print(f"\ndynamic int8 vs float32 TFLite: size {sizes['tflite dynamic'] / sizes['tflite none']:.2f}x "
              f"(target <= 0.3), single-text latency {singles['tflite dynamic'] / singles['tflite none']:.2f}x "
              "(target <= 0.6)")
    write_result(args.output, {
        "settings": {"preset": args.preset, "sequence_length": args.sequence_length, "texts": len(texts),
                     "repeats": args.repeats, "calibration": ("the exporter's default sample" if calibration is None
                                     else f"the first {len(calibration)} training noun glosses")},
        "rows": {name: {"bytes": size, "size_over_keras": size / base_size,
                        "one_text_ms": single.spread, "one_text_over_keras": single / base_one,
                        "batch_32_ms": many.spread, "batch_32_over_keras": many / base_batch,
                        "argmax_agreement": agreement, "export_seconds": seconds}
                 for name, size, single, many, agreement, seconds in rows},
        "failures": failures,
    })


if __name__ == "__main__":
    main()
