"""Chooses which supersense student to bundle, by a rule fixed beforehand.

The bundled `albert_tiny_en_student_supersense` must pass the exporter's
int8 parity gate (argmax agreement >= 99 % with the Keras model), and the
protocol run of `tools/student_report.py` made three seeds of a better
student. Picking among them by test accuracy would choose on the test
split, so this tool decides on the supersense validation split only
(noun glosses with synsets hashed to 80-89: no student trained on them,
none of `student_report.py`'s choices read them):

1. Candidates: the bundled student and each `--candidates` preset.
2. Each is measured on the validation split: Keras accuracy on every
   gloss; argmax agreement with Keras of its dynamic-range int8 and full
   int8 TFLite files (sequence length 32, as the bundled tests export) on
   every 10th gloss (full int8 calibrates on the exporter's default texts
   and is checked on the rest).
3. Eligible: dynamic-range agreement >= `DYNAMIC_MIN` and full int8 >=
   `FULL_INT8_MIN`. The dynamic-range bar sits half a point above the
   exporter's gate, so that a different 200-text sample (the tests use
   test glosses) is likely to pass the gate too.
4. Chosen: the eligible candidate with the highest validation accuracy;
   on a tie the bundled one, then the earlier candidate. If no candidate is
   eligible the bundled one stays.

Writes the measurements and the choice with `benchmarks/recording` (date,
machine, versions, command):

    python tools/choose_bundled_student.py \\
        --candidates runs/student_report/seed_{0,1,2}/student_task-distilled/preset \\
        --record benchmarks/results/bundled_student_choice.json
"""

import argparse
import os
import pathlib
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from recording import write_result  # noqa: E402

BUNDLED = "albert_tiny_en_student_supersense"
DYNAMIC_MIN = 0.995
FULL_INT8_MIN = 0.99
SEQUENCE_LENGTH = 32
SAMPLE_EVERY = 10


def choose(rows):
    """The name of the chosen row: eligible, then most accurate; ties go to
    the bundled row, then to the earlier row. `rows` is a list of dicts with
    `name`, `bundled`, `validation_accuracy`, `dynamic_agreement` and
    `full_int8_agreement`; each row gets `eligible`."""
    for row in rows:
        row["eligible"] = (row["dynamic_agreement"] >= DYNAMIC_MIN
                           and row["full_int8_agreement"] >= FULL_INT8_MIN)
    eligible = [(-row["validation_accuracy"], not row["bundled"], index)
                for index, row in enumerate(rows) if row["eligible"]]
    if not eligible:
        return next(row["name"] for row in rows if row["bundled"])
    return rows[min(eligible)[2]]["name"]


def agreement(content, task, features):
    """The exporter's own argmax agreement, measured without its gate."""
    from keras_albert.export.tflite_export import argmax_agreement
    from keras_albert.export.tflite_export import keras_logits
    from keras_albert.export.tflite_export import run_tflite

    return argmax_agreement(run_tflite(content, features, batch_size=64), keras_logits(task, features))


def measure(name, preset, bundled, texts, labels):
    """One candidate's validation accuracy and int8 agreements."""
    import keras_albert
    from keras_albert.export.int8_calibration import calibration_and_check_texts
    from keras_albert.export.tflite_export import convert
    from keras_albert.export.tflite_export import token_features

    task = keras_albert.AlbertClassifier.from_preset(preset)
    logits = task.predict(texts, batch_size=256, verbose=0)
    accuracy = float((logits.argmax(-1) == labels).mean())
    sample = texts[::SAMPLE_EVERY]
    dynamic = agreement(convert(task, SEQUENCE_LENGTH, "dynamic"), task,
                        token_features(task, sample, SEQUENCE_LENGTH))
    calibration, held_out, _ = calibration_and_check_texts(None, sample)
    full = agreement(
        convert(task, SEQUENCE_LENGTH, "int8", token_features(task, calibration, SEQUENCE_LENGTH)),
        task, token_features(task, held_out, SEQUENCE_LENGTH))
    row = {"name": name, "preset": preset, "bundled": bundled,
           "validation_accuracy": round(accuracy, 4),
           "dynamic_agreement": round(dynamic, 4), "dynamic_texts": len(sample),
           "full_int8_agreement": round(full, 4), "full_int8_texts": len(held_out)}
    print(row, flush=True)
    return row


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", nargs="+", required=True,
                        help="classifier preset directories to weigh against the bundled student")
    parser.add_argument("--record", help="results JSON to write (benchmarks/recording)")
    args = parser.parse_args(argv)
    for path in args.candidates:
        if not (pathlib.Path(path) / "config.json").is_file():
            parser.error(f"--candidates: {path!r} is not a preset directory (no config.json)")
    return args


def main(argv=None):
    args = parse_args(argv)
    from keras_albert import datasets

    texts, labels = datasets.load_supersense("validation", pos="n")
    labels = np.asarray(labels)
    rows = [measure("bundled", BUNDLED, True, texts, labels)]
    rows += [measure(path, path, False, texts, labels) for path in args.candidates]
    chosen = choose(rows)
    result = {
        "rule": __doc__.split("\n\n")[2],
        "dynamic_min": DYNAMIC_MIN, "full_int8_min": FULL_INT8_MIN,
        "split": "supersense validation, noun glosses", "validation_texts": len(texts),
        "candidates": rows, "chosen": chosen,
    }
    print(f"chosen: {chosen}")
    if args.record:
        write_result(args.record, result)
    return result


if __name__ == "__main__":
    main()
