"""Train and predict steps of the task models with jit_compile on and off.

The task models' `compile()` defaults to `jit_compile` off on CPU-only
machines and on with an accelerator (`keras_albert/models/jit_default.py`);
this script is the measurement behind that default. For each task model
(same backbone) and each setting it times `train_on_batch` and
`predict_on_batch` on packed inputs: the first call (tracing + XLA
compilation) and the median and spread (min-max) of the following
`--repeats` (default 5, at least 3). Both settings run in the same process,
interleaved repetition by repetition, so background load hits both alike;
the ratio is off / on (> 1.0: XLA is faster), the median of the per-repeat
ratios. Writes `benchmarks/results/jit_defaults.json` (or `--output`) with
the command, the date and the machine's cores.

    python benchmarks/jit_defaults.py [--layers 4] [--batch 16] [--length 64] [--repeats 5]

The backbone is ALBERT-base's shape (hidden 768, 12 heads, FFN 3072,
embedding 128; one shared block, so base's parameters) run for `--layers`
layers, random weights.
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import keras_albert  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import check_rounds  # noqa: E402
from recording import show  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402


def base_backbone(layers, vocabulary_size=8000):
    return keras_albert.AlbertBackbone(
        vocabulary_size=vocabulary_size, num_layers=layers, num_heads=12, embedding_dim=128,
        hidden_dim=768, intermediate_dim=3072, max_sequence_length=512, dropout=0.0,
    )


def packed(batch, length, choices=None):
    rng = np.random.default_rng(0)
    shape = (batch, length) if choices is None else (batch, choices, length)
    return {
        "token_ids": rng.integers(5, 8000, shape).astype("int32"),
        "segment_ids": np.zeros(shape, "int32"),
        "padding_mask": np.ones(shape, "int32"),
    }


def task_cases(backbone, batch, length):
    """(name, task factory, x, y) for every task model."""
    rng = np.random.default_rng(1)
    x = packed(batch, length)
    return [
        ("classifier", lambda: keras_albert.AlbertClassifier(backbone, num_classes=4), x,
         rng.integers(0, 4, batch).astype("int32")),
        ("token classifier", lambda: keras_albert.AlbertTokenClassifier(backbone, num_classes=9), x,
         rng.integers(0, 9, (batch, length)).astype("int32")),
        ("question answerer", lambda: keras_albert.AlbertQuestionAnswerer(backbone), x,
         {"start_logits": rng.integers(0, length, batch).astype("int32"),
          "end_logits": rng.integers(0, length, batch).astype("int32")}),
        ("multiple choice (2)", lambda: keras_albert.AlbertMultipleChoice(backbone), packed(batch // 2, length, 2),
         rng.integers(0, 2, batch // 2).astype("int32")),
    ]


def timed(function):
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tasks", nargs="*", default=None, help="subset of task names")
    parser.add_argument("--output", default="jit_defaults.json", help="under benchmarks/results/ unless a path")
    args = parser.parse_args()
    check_rounds(args.repeats, "--repeats")
    rows = []
    backbone = base_backbone(args.layers)
    print(f"ALBERT-base shape, {args.layers} layers, batch {args.batch} x {args.length}; "
          f"median of {args.repeats} steps after the first (first = trace + compile)")
    print(f"{'task':<22}{'step':<9}{'jit off s [min-max]':>22}{'jit on s [min-max]':>22}{'off/on':>8}"
          f"{'1st off s':>11}{'1st on s':>10}")
    for name, make, x, y in task_cases(backbone, args.batch, args.length):
        if args.tasks and name not in args.tasks:
            continue
        models = {}
        for jit in (False, True):
            model = make()
            model.compile(jit_compile=jit)
            models[jit] = model
        for step in ("train", "predict"):
            calls = {
                # keras.Model's own methods: the inputs are packed already.
                jit: (lambda m=m: keras.Model.train_on_batch(m, x, y)) if step == "train"
                else (lambda m=m: keras.Model.predict_on_batch(m, x))
                for jit, m in models.items()
            }
            first = {jit: timed(call) for jit, call in calls.items()}
            times = {False: [], True: []}
            for _ in range(args.repeats):
                for jit, call in calls.items():
                    times[jit].append(timed(call))
            ratios = [off / on for off, on in zip(times[False], times[True])]
            print(f"{name:<22}{step:<9}{show(times[False], 1, 3):>22}{show(times[True], 1, 3):>22}"
                  f"{statistics.median(ratios):>7.2f}x{first[False]:>11.1f}{first[True]:>10.1f}", flush=True)
            rows.append({"task": name, "step": step, "jit_off_s": spread(times[False]),
                         "jit_on_s": spread(times[True]), "off_over_on": spread(ratios),
                         "first_call_off_s": first[False], "first_call_on_s": first[True]})
    write_result(args.output, {
        "settings": {"layers": args.layers, "batch": args.batch, "length": args.length,
                     "repeats": args.repeats},
        "rows": rows,
    })


if __name__ == "__main__":
    main()
