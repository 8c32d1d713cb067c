"""Peak training-step memory against depth: reversible vs standard layers.

For each depth (default 2, 4, 8, 12 virtual layers, ALBERT's all-shared
weights) it trains one step at `--length` tokens (default 4,096, batch 1)
of a small `AlbertBackbone` (hidden 64, 2 heads, FFN 256, embedding 32;
small so it runs on a CPU) with

- `standard`: the post-LN ALBERT encoder (plain autodiff keeps every layer's
  activations for the backward pass),
- `reversible`: `AlbertBackbone(reversible=True)`, Reformer's RevNet blocks
  (the backward pass rebuilds each block's inputs from its outputs).

Attention is LSH-1 by default (chunk 64, 2 * length / 64 buckets, one chunk
back and one ahead: the long-document setting); `--attention full` uses full
attention instead. The step is `tf.function` (no XLA) computing the loss
`mean(sequence_output * w)`, its gradients and an SGD update.

Memory, two readings per run, each in a fresh subprocess:
- `alloc`: TensorFlow's allocator peak, `tf.config.experimental.
  get_memory_info("CPU:0")["peak"]` after `reset_memory_stats`. On CPU this
  only works with the BFC allocator, so the workers run with
  `TF_CPU_ALLOCATOR_USE_BFC=true`; reported minus the bytes allocated
  before the step (weights, inputs), i.e. what the step itself needed.
- `rss`: the process's peak resident set size (`ru_maxrss`) after the step
  minus the peak before it (after imports, a warm-up step at 256 tokens and
  tracing), a cruder cross-check that also sees memory outside TF's
  allocator.
Each configuration runs `--rounds` times (fresh processes); the table shows
the median and the spread (min-max) of each reading and of the step time
(median of `--steps` timed steps after one untimed step).

Writes `benchmarks/results/reversible_memory.json` (or `--output`) with the
command, the date and the machine's cores.

Usage:
    python benchmarks/reversible_memory.py [--depths 2 4 8 12]
        [--length 4096] [--rounds 3] [--steps 2] [--attention lsh|full]
"""

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time

HIDDEN = 64
HEADS = 2
INTERMEDIATE = 256
EMBEDDING = 32
VOCABULARY = 1000
CHUNK = 64
WARMUP_LENGTH = 256
RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "reversible_memory.json"


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(args):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras_albert

    attention = {}
    if args.attention == "lsh":
        attention = dict(
            attention="lsh",
            lsh_num_hashes=1,
            lsh_num_buckets=max(2, 2 * args.length // CHUNK),
            lsh_chunk_length=CHUNK,
            lsh_num_chunks_after=1,
            lsh_seed=0,
        )
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=VOCABULARY,
        num_layers=args.depth,
        num_heads=HEADS,
        embedding_dim=EMBEDDING,
        hidden_dim=HIDDEN,
        intermediate_dim=INTERMEDIATE,
        max_sequence_length=args.length,
        reversible=args.worker == "reversible",
        **attention,
    )
    variables = backbone.trainable_variables

    def batch(length):
        rng = np.random.default_rng(0)
        return (
            {
                "token_ids": tf.constant(rng.integers(5, VOCABULARY, (1, length)), tf.int32),
                "segment_ids": tf.zeros((1, length), tf.int32),
                "padding_mask": tf.ones((1, length), tf.int32),
            },
            tf.constant(rng.normal(size=(1, length, HIDDEN)), tf.float32),
        )

    @tf.function
    def train_step(inputs, target):
        with tf.GradientTape() as tape:
            output = backbone(inputs, training=True)["sequence_output"]
            loss = tf.reduce_mean(output * target)
        grads = tape.gradient(loss, variables)
        for variable, grad in zip(variables, grads):
            if grad is None:  # the pooler: the loss reads sequence_output
                continue
            variable.assign_sub(0.01 * tf.convert_to_tensor(grad))
        return loss

    train_step(*batch(WARMUP_LENGTH))  # runtime start-up, not measured
    inputs, target = batch(args.length)
    train_step.get_concrete_function(inputs, target)
    rss_before = peak_rss_mib()
    tf.config.experimental.reset_memory_stats("CPU:0")
    allocated_before = tf.config.experimental.get_memory_info("CPU:0")["current"]
    train_step(inputs, target).numpy()  # first call: not timed
    alloc_peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        train_step(inputs, target).numpy()
        times.append(time.perf_counter() - start)
    result = {
        "alloc_mib": (alloc_peak - allocated_before) / 2**20,
        "rss_mib": peak_rss_mib() - rss_before,
        "step_s": statistics.median(times),
    }
    print("RESULT " + json.dumps(result), flush=True)


def measure(mode, depth, args):
    command = [
        sys.executable, os.path.abspath(__file__), "--worker", mode,
        "--depth", str(depth), "--length", str(args.length),
        "--steps", str(args.steps), "--threads", str(args.threads),
        "--attention", args.attention,
    ]
    env = dict(
        os.environ,
        TF_CPU_ALLOCATOR_USE_BFC="true",
        OMP_NUM_THREADS=str(args.threads),
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    try:
        process = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=args.timeout
        )
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    for line in process.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = " | ".join((process.stderr or "").strip().splitlines()[-3:])
    return {"error": f"exit {process.returncode}: {tail}"[:300]}


def summary(values):
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "values": values,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 4, 8, 12])
    parser.add_argument("--length", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--attention", choices=["lsh", "full"], default="lsh")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--depth", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    print(
        f"batch 1 x {args.length} tokens, hidden {HIDDEN}, {HEADS} heads, FFN "
        f"{INTERMEDIATE}, all-shared, attention {args.attention}, threads "
        f"{args.threads}, {args.rounds} rounds (fresh processes) per row; "
        "median [min-max]"
    )
    modes = ("standard", "reversible")
    runs = {}
    # Rounds outer, so machine load drifts over both modes alike.
    for round_index in range(args.rounds):
        for depth in args.depths:
            for mode in modes:
                result = measure(mode, depth, args)
                runs.setdefault((mode, depth), []).append(result)
                print(f"  round {round_index + 1} {mode:>10s} depth {depth:2d}: {result}", flush=True)

    print()
    header = f"{'depth':>5s} {'mode':>10s} {'alloc MiB':>22s} {'rss MiB':>22s} {'step s':>20s}"
    print(header)
    rows = []
    for depth in args.depths:
        for mode in modes:
            ok = [r for r in runs[mode, depth] if "error" not in r]
            row = {"depth": depth, "mode": mode, "rounds": len(ok),
                   "errors": [r["error"] for r in runs[mode, depth] if "error" in r]}
            cells = []
            for key, fmt in (("alloc_mib", "{:.1f}"), ("rss_mib", "{:.1f}"), ("step_s", "{:.2f}")):
                if ok:
                    s = summary([r[key] for r in ok])
                    row[key] = s
                    cells.append(
                        f"{fmt.format(s['median'])} [{fmt.format(s['min'])}-{fmt.format(s['max'])}]"
                    )
                else:
                    cells.append("failed")
            rows.append(row)
            print(f"{depth:5d} {mode:>10s} {cells[0]:>22s} {cells[1]:>22s} {cells[2]:>20s}")

    def median_of(mode, depth, key):
        for row in rows:
            if row["mode"] == mode and row["depth"] == depth and key in row:
                return row[key]["median"]
        return None

    print()
    first, last = args.depths[0], args.depths[-1]
    growth = {}
    for mode in modes:
        a, b = median_of(mode, first, "alloc_mib"), median_of(mode, last, "alloc_mib")
        growth[mode] = None if a is None or b is None else b / a
        text = "n/a" if growth[mode] is None else f"{growth[mode]:.2f}x"
        print(f"{mode:>10s}: allocator peak at depth {last} / depth {first} = {text}")
    ratios = {}
    for depth in args.depths:
        s, r = median_of("standard", depth, "alloc_mib"), median_of("reversible", depth, "alloc_mib")
        ratios[depth] = None if s is None or r is None else r / s
        if ratios[depth] is not None:
            print(f"depth {depth:2d}: reversible / standard allocator peak = {ratios[depth]:.2f}")

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from recording import write_result

    write_result(pathlib.Path(args.output), {
        "settings": {
            "length": args.length, "batch": 1, "hidden": HIDDEN, "heads": HEADS,
            "intermediate": INTERMEDIATE, "embedding": EMBEDDING,
            "attention": args.attention, "threads": args.threads,
            "rounds": args.rounds, "steps": args.steps,
            "memory": "TF BFC allocator peak on CPU (TF_CPU_ALLOCATOR_USE_BFC=true) and peak RSS delta",
        },
        "rows": rows,
        "alloc_growth_last_over_first_depth": growth,
        "reversible_over_standard_alloc": {str(k): v for k, v in ratios.items()},
    }, threads={"tensorflow_intra_op": args.threads})


if __name__ == "__main__":
    main()
