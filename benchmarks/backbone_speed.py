"""Forward and train-step speed: keras_albert vs keras-hub AlbertBackbone.

Both models get the ALBERT-base v2 config and the same weights; inputs are
batch 8 x sequence 128. Each mode is timed with and without XLA
(`jit_compile`), ours and theirs interleaved repetition by repetition so
that background load hits both alike. Prints absolute milliseconds (median
and min-max over the `--repeats` timed calls, default 7, at least 3) and the
speed ratio keras-hub time / keras_albert time (>= 1.0 means we are at
least as fast; the median of the per-repeat ratios, with its min-max).
Writes `benchmarks/results/backbone_speed.json` (or `--output`) with the
command, the date and the machine's cores.

Usage:
    python benchmarks/backbone_speed.py [--repeats 7] [--batch 8] [--length 128]
        [--output backbone_speed.json]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras_albert  # noqa: E402
from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights  # noqa: E402
from keras_albert.convert.tf1_names import set_backbone_weights  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import check_rounds  # noqa: E402
from recording import show  # noqa: E402
from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402


def make_inputs(batch, length, vocabulary_size):
    rng = np.random.default_rng(0)
    return {
        "token_ids": tf.constant(rng.integers(5, vocabulary_size, (batch, length)), "int32"),
        "segment_ids": tf.constant(np.zeros((batch, length)), "int32"),
        "padding_mask": tf.constant(np.ones((batch, length)), "int32"),
    }


def forward_fn(model, jit):
    @tf.function(jit_compile=jit)
    def forward(x):
        return model(x, training=False)["sequence_output"]

    return forward


def train_step_fn(model, jit):
    optimizer = keras.optimizers.Adam(1e-5)
    optimizer.build(model.trainable_variables)

    @tf.function(jit_compile=jit)
    def step(x):
        with tf.GradientTape() as tape:
            outputs = model(x, training=True)
            loss = tf.reduce_mean(tf.square(outputs["pooled_output"]))
        variables = model.trainable_variables
        optimizer.apply(tape.gradient(loss, variables), variables)
        return loss

    return step


def time_once(fn, x):
    start = time.perf_counter()
    result = fn(x)
    np.asarray(result)  # wait for the computation
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--output", default="backbone_speed.json", help="under benchmarks/results/ unless a path")
    args = parser.parse_args()
    check_rounds(args.repeats, "--repeats")

    config = keras_albert.OFFICIAL_PRESETS["albert_base_en_uncased"]["config"]
    theirs = keras_hub.models.AlbertBackbone(
        **{k: v for k, v in config.items() if k not in ("activation",)}
    )
    ours = keras_albert.AlbertBackbone(**config)
    set_backbone_weights(ours, keras_hub_backbone_weights(theirs))
    x = make_inputs(args.batch, args.length, config["vocabulary_size"])
    difference = np.abs(
        np.asarray(ours(x)["sequence_output"]) - np.asarray(theirs(x)["sequence_output"])
    ).max()

    print(
        f"ALBERT-base, batch {args.batch} x length {args.length}, "
        f"{args.repeats} timed repeats (median), "
        f"intra-op threads {tf.config.threading.get_intra_op_parallelism_threads() or 'default'}; "
        f"max |ours - keras-hub| = {difference:.2e}"
    )
    print(f"{'mode':<22}{'keras_albert ms [min-max]':>27}{'keras-hub ms [min-max]':>27}"
          f"{'ratio [min-max]':>22}")
    ratios, rows = [], {}
    for mode, make in (("forward", forward_fn), ("train step", train_step_fn)):
        for jit in (False, True):
            fns = {"ours": make(ours, jit), "theirs": make(theirs, jit)}
            for fn in fns.values():  # trace, compile, warm up
                time_once(fn, x)
                time_once(fn, x)
            times = {"ours": [], "theirs": []}
            for _ in range(args.repeats):
                for name, fn in fns.items():
                    times[name].append(time_once(fn, x))
            per_repeat = [t / o for o, t in zip(times["ours"], times["theirs"])]
            ratio = statistics.median(per_repeat)
            ratios.append(ratio)
            label = f"{mode}, jit={'on' if jit else 'off'}"
            rows[label] = {"ours_ms": spread([t * 1000 for t in times["ours"]]),
                           "keras_hub_ms": spread([t * 1000 for t in times["theirs"]]),
                           "ratio_keras_hub_over_ours": spread(per_repeat)}
            print(f"{label:<22}{show(times['ours'], 1000):>27}{show(times['theirs'], 1000):>27}"
                  f"{show(per_repeat, 1, 2):>21}x", flush=True)
    print(f"minimum ratio: {min(ratios):.2f}x (target >= 1.0x in every mode)")
    write_result(args.output, {
        "settings": {"batch": args.batch, "length": args.length, "repeats": args.repeats,
                     "config": "albert_base_en_uncased",
                     "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads()},
        "max_difference": float(difference),
        "rows": rows,
        "minimum_ratio": min(ratios),
    })


if __name__ == "__main__":
    main()
