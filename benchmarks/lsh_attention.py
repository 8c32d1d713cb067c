"""LSH self-attention speed and peak memory: ours vs full vs Hugging Face.

For each sequence length (default 1024, 4096, 8192, 16384; batch 1, hidden
256, 4 heads, chunk 64, one chunk back, none ahead, `num_buckets = 2 *
length / chunk`) it measures an inference forward pass of

- `lsh-N`: `AlbertLSHSelfAttention` with N = 1, 2, 4 hash rounds,
- `full`: `AlbertSelfAttention` (full attention, the ALBERT default),
- `hf-lsh-N`: Hugging Face's `LSHSelfAttention` (Reformer, PyTorch) with the
  same sizes and N = 1, 2, 4.
- `lsh-Nf`, `hf-lsh-Nf` (on request): both with the same bucket count in
  two factors (Reformer's factorised buckets, e.g. [16, 32] for 512), which
  makes hashing ~length^1.5 instead of quadratic.

Both Keras layers run as a `tf.function` (no XLA, the Keras default on CPU;
`--jit` turns XLA on), PyTorch eagerly under `no_grad`. Every framework gets
the same thread count (`--threads`: TF intra-op threads, `torch` threads,
`OMP_NUM_THREADS`; one inter-op thread each). Note ours includes the output
projection (hidden x hidden), Hugging Face's `LSHSelfAttention` does not.

Method:
- Each (length, configuration) runs in a fresh subprocess, so one
  measurement's allocations cannot leak into the next.
- Time: the median of `--repeats` timed calls after one untimed warm-up call
  (tracing and first-run costs excluded), waiting for the result each time;
  also the process's CPU time over the same calls (all threads), whose
  growth factors are printed too: wall time on a shared machine includes
  waiting for a core.
- Rounds: the whole sweep runs `--rounds` times (default 3), every round in
  fresh subprocesses with ours and Hugging Face interleaved, so load on a
  shared machine hits both alike; tables show the median over rounds and the
  spread (min-max), ratios are medians of the per-round ratios.
- Peak memory: CPU has no allocator statistics (TF's `get_memory_info` is
  GPU-only), so we read the process's peak resident set size
  (`resource.getrusage(...).ru_maxrss`, a high-water mark). The baseline is
  taken after imports, a warm-up of the same layer type at 256 tokens (which
  pays the runtime's one-time start-up: thread pools, kernel caches), building
  the measured layer and creating its input; the reported peak is the
  high-water mark after the warm-up and timed calls minus that baseline, i.e.
  the extra memory the forward pass at that length needed.
- Out of memory: each subprocess has its data segment capped at
  `--memory-limit-gib` (RLIMIT_DATA, default 8 GiB, to stay polite on a
  shared machine); a run that exceeds it is reported as "out of memory", as
  is any run that dies with an allocation error.

Prints a table of absolute times and peaks, the ratios, the growth factor
of each configuration's time from one length to the next (beside the
n log n prediction), and the targets at 8192 tokens: LSH-1 >= 10x faster
and <= 1/8 the peak memory of full attention, and LSH-1 faster than Hugging
Face's LSH-1; and LSH-1's 4096 -> 16384 growth <= 5x. Writes
`benchmarks/results/lsh_attention[_xla].json` (`--output` to change) with
the command, the date and the machine's cores. Hugging Face's layer takes
the same unpadded batch of one sequence, so padding does not arise.

Needs `torch==2.13.0` (CPU) and `transformers` (imported only here).

Usage:
    python benchmarks/lsh_attention.py [--lengths 1024 4096 8192 16384]
        [--repeats 3] [--rounds 3] [--threads 2] [--memory-limit-gib 8]
        [--full-max-length 8192] [--configs lsh-1 hf-lsh-1 full] [--jit]
"""

import argparse
import json
import math
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time

HIDDEN = 256
HEADS = 4
CHUNK = 64
WARMUP_LENGTH = 256
RESULTS = pathlib.Path(__file__).resolve().parent / "results"
CONFIGS = ("lsh-1", "hf-lsh-1", "lsh-2", "hf-lsh-2", "lsh-4", "hf-lsh-4", "full")
# Also available: "lsh-1f", "hf-lsh-1f" (and -2f, -4f): the same bucket count
# in two factors, for both implementations; "lsh-1r", "hf-lsh-1r" (-2r,
# -4r): Reformer's rule (`keras_albert.layers.reformer_num_buckets`: one
# factor up to 2 * chunk buckets, two above), what the long-document
# pipeline uses.
OOM_SIGNS = (
    "out of memory",
    "ResourceExhausted",
    "OOM",
    "bad_alloc",
    "can't allocate memory",
    "MemoryError",
    "Cannot allocate memory",
)


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def num_buckets_for(length, config=""):
    """2 * length / chunk buckets; split into two factors (Reformer's
    factorised buckets, same count, ~sqrt the rotation columns) for the
    `...f` configurations."""
    if config.endswith("r"):
        from keras_albert.layers.lsh_hashing import reformer_num_buckets

        return reformer_num_buckets(length, CHUNK)
    buckets = max(2, 2 * length // CHUNK)
    if not config.endswith("f") or buckets < 4:
        return buckets
    first = 2 ** (int(math.log2(buckets)) // 2)
    return [first, buckets // first]


def num_hashes_for(config):
    return int(config.split("-")[-1].rstrip("fr"))


def keras_runner(config, length, threads, jit):
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from keras_albert.layers import AlbertLSHSelfAttention
    from keras_albert.layers import AlbertSelfAttention

    def make(n):
        if config == "full":
            return AlbertSelfAttention(num_heads=HEADS, hidden_dim=HIDDEN)
        return AlbertLSHSelfAttention(
            num_heads=HEADS,
            hidden_dim=HIDDEN,
            num_hashes=num_hashes_for(config),
            num_buckets=num_buckets_for(n, config),
            chunk_length=CHUNK,
            num_chunks_before=1,
            num_chunks_after=0,
            seed=0,
        )

    def compiled(n):
        layer = make(n)
        x = tf.constant(
            np.random.default_rng(0).normal(size=(1, n, HIDDEN)), tf.float32
        )
        layer.build(x.shape)
        fn = tf.function(lambda inputs: layer(inputs), jit_compile=jit)
        fn.get_concrete_function(x)
        return lambda: fn(x).numpy()

    compiled(WARMUP_LENGTH)()
    return compiled(length)


def torch_runner(config, length, threads):
    try:
        import torch
        from transformers import ReformerConfig
        from transformers.models.reformer.modeling_reformer import LSHSelfAttention
    except ImportError as error:
        raise SystemExit(
            "This benchmark needs PyTorch and transformers: "
            "pip install torch==2.13.0 transformers"
        ) from error

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)

    def compiled(n):
        hf_config = ReformerConfig(
            hidden_size=HIDDEN,
            num_attention_heads=HEADS,
            attention_head_size=HIDDEN // HEADS,
            lsh_attn_chunk_length=CHUNK,
            num_buckets=num_buckets_for(n, config),
            num_hashes=num_hashes_for(config),
            lsh_num_chunks_before=1,
            lsh_num_chunks_after=0,
            lsh_attention_probs_dropout_prob=0.0,
            is_decoder=False,
            hash_seed=0,
        )
        layer = LSHSelfAttention(hf_config).eval()
        x = torch.randn(1, n, HIDDEN, generator=torch.Generator().manual_seed(0))

        def run():
            with torch.no_grad():
                return layer(x).hidden_states.numpy()

        return run

    compiled(WARMUP_LENGTH)()
    return compiled(length)


def worker(args):
    """Measures one configuration; prints one JSON line."""
    limit = int(args.memory_limit_gib * 2**30)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    try:
        if args.worker.startswith("hf-"):
            run = torch_runner(args.worker, args.length, args.threads)
        else:
            run = keras_runner(args.worker, args.length, args.threads, args.jit)
        baseline = peak_rss_mib()
        run()  # warm-up: first-call costs are not timed
        times, cpu_times = [], []
        for _ in range(args.repeats):
            start, cpu_start = time.perf_counter(), time.process_time()
            run()
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
        result = {
            "time_s": statistics.median(times),
            "times_s": times,
            # CPU seconds of all the process's threads: on a shared machine
            # it does not count time spent waiting for a core, so growth
            # factors are steadier on it (spin-waiting threads still count).
            "cpu_s": statistics.median(cpu_times),
            "peak_mib": peak_rss_mib() - baseline,
        }
    except Exception as error:  # reported, not hidden: see `classify`
        result = {"error": f"{type(error).__name__}: {error}"[:300]}
    print("RESULT " + json.dumps(result), flush=True)


def classify(process):
    for line in process.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            break
    else:
        tail = (process.stderr or "").strip().splitlines()[-3:]
        result = {"error": f"exit {process.returncode}: " + " | ".join(tail)}
    if "error" in result:
        if any(sign in result["error"] for sign in OOM_SIGNS) or process.returncode in (
            -9,
            137,
        ):
            result["status"] = "out of memory"
        else:
            result["status"] = "failed"
    return result


def measure(config, length, args):
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        config,
        "--length",
        str(length),
        "--repeats",
        str(args.repeats),
        "--threads",
        str(args.threads),
        "--memory-limit-gib",
        str(args.memory_limit_gib),
    ] + (["--jit"] if args.jit else [])
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    process = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=args.timeout
    )
    return classify(process)


def summarise(rounds):
    """Median and spread of a configuration's per-round results."""
    ok = [r for r in rounds if "error" not in r]
    if not ok:
        first = rounds[0] if rounds else {"error": "not run", "status": "not run"}
        return {"error": first["error"], "status": first.get("status", "failed")}
    times = [r["time_s"] for r in ok]
    peaks = [r["peak_mib"] for r in ok]
    cpu = [r["cpu_s"] for r in ok if "cpu_s" in r]
    return {
        "time_s": statistics.median(times),
        "cpu_s": statistics.median(cpu) if cpu else None,
        "round_cpu_s": cpu,
        "time_min_s": min(times),
        "time_max_s": max(times),
        "round_times_s": times,
        "peak_mib": statistics.median(peaks),
        "round_peaks_mib": peaks,
        "rounds_ok": len(ok),
        "rounds_failed": len(rounds) - len(ok),
    }


def describe(result):
    if "error" in result:
        return f"{result['status']:>24s}", f"{'-':>10s}"
    spread = f"[{result['time_min_s'] * 1000:.1f}-{result['time_max_s'] * 1000:.1f}]"
    return (
        f"{result['time_s'] * 1000:10.1f} {spread:>13s}",
        f"{result['peak_mib']:10.1f}",
    )


def round_ratio(runs, numerator, denominator, key="time_s"):
    """Median over rounds of numerator / denominator measured in that round."""
    values = [
        a[key] / max(b[key], 1e-9)
        for a, b in zip(runs.get(numerator, []), runs.get(denominator, []))
        if "error" not in a and "error" not in b
    ]
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=[1024, 4096, 8192, 16384]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--memory-limit-gib", type=float, default=8.0)
    parser.add_argument("--jit", action="store_true", help="XLA for ours")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    parser.add_argument(
        "--full-max-length", type=int, default=None,
        help="skip full attention above this length (quadratic memory)",
    )
    parser.add_argument("--output", default=None)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--length", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    settings = (
        f"batch 1, hidden {HIDDEN}, {HEADS} heads, chunk {CHUNK}, "
        f"num_buckets = 2 * length / chunk, threads {args.threads}, "
        f"repeats {args.repeats}, rounds {args.rounds}, XLA "
        f"{'on' if args.jit else 'off'}, memory cap "
        f"{args.memory_limit_gib:g} GiB per run"
    )
    print(settings)

    def wanted(length, config):
        return not (
            config == "full"
            and args.full_max_length is not None
            and length > args.full_max_length
        )

    runs = {}  # (length, config) -> [result per round]
    for round_index in range(args.rounds):
        for length in args.lengths:
            for config in args.configs:
                if not wanted(length, config):
                    continue
                try:
                    result = measure(config, length, args)
                except subprocess.TimeoutExpired:
                    result = {"error": "timeout", "status": "timed out"}
                runs.setdefault((length, config), []).append(result)
                shown = (
                    f"{result['time_s'] * 1000:.1f} ms, {result['peak_mib']:.1f} MiB"
                    if "error" not in result
                    else f"{result['status']} ({result['error']})"
                )
                print(f"  round {round_index + 1} {length:6d} {config:>9s}: {shown}", flush=True)

    results = {key: summarise(value) for key, value in runs.items()}
    print()
    print(f"{'length':>7s} {'config':>10s} {'median ms [min-max]':>24s} {'peak MiB':>10s}")
    for length in args.lengths:
        for config in args.configs:
            if (length, config) in results:
                time_text, memory_text = describe(results[length, config])
                print(f"{length:7d} {config:>10s} {time_text} {memory_text}")

    def fmt(value, suffix=""):
        return f"{value:.3f}{suffix}" if value is not None else "n/a"

    def by_length(length):
        return {config: runs[length, config] for config in args.configs if (length, config) in runs}

    print()
    print("Ratios (median over rounds of the ratio measured in each round):")
    print(
        f"{'length':>7s} {'full/lsh-1 time':>16s} {'lsh-1/full mem':>15s} "
        f"{'lsh-1/hf-lsh-1 time':>20s} {'lsh-4/hf-lsh-4 time':>20s} "
        f"{'lsh-1f/hf-lsh-1f time':>22s}"
    )
    ratios = {}
    for length in args.lengths:
        here = by_length(length)
        row = {
            "full_over_lsh1_time": round_ratio(here, "full", "lsh-1"),
            "lsh1_over_full_peak": round_ratio(here, "lsh-1", "full", "peak_mib"),
            "lsh1_over_hf_lsh1_time": round_ratio(here, "lsh-1", "hf-lsh-1"),
            "lsh4_over_hf_lsh4_time": round_ratio(here, "lsh-4", "hf-lsh-4"),
            "lsh1f_over_hf_lsh1f_time": round_ratio(here, "lsh-1f", "hf-lsh-1f"),
        }
        ratios[length] = row
        print(
            f"{length:7d} {fmt(row['full_over_lsh1_time']):>16s} "
            f"{fmt(row['lsh1_over_full_peak']):>15s} "
            f"{fmt(row['lsh1_over_hf_lsh1_time']):>20s} "
            f"{fmt(row['lsh4_over_hf_lsh4_time']):>20s} "
            f"{fmt(row['lsh1f_over_hf_lsh1f_time']):>22s}"
        )

    print()
    print("Growth of the median time from one length to the next:")
    lengths = sorted(args.lengths)
    steps = list(zip(lengths, lengths[1:]))
    if 4096 in lengths and 16384 in lengths and (4096, 16384) not in steps:
        steps.append((4096, 16384))
    header = f"{'config':>10s}" + "".join(f"{f'{a}->{b}':>14s}" for a, b in steps)
    print(header)

    def predicted(a, b, kind):
        if kind == "n log n":
            return b * math.log(b) / (a * math.log(a))
        return (b / a) ** 2

    print(f"{'n log n':>10s}" + "".join(f"{predicted(a, b, 'n log n'):13.2f}x" for a, b in steps))
    print(f"{'n^2':>10s}" + "".join(f"{predicted(a, b, 'n^2'):13.2f}x" for a, b in steps))
    growth = {}
    for config in args.configs:
        cells, growth[config] = [], {}
        for a, b in steps:
            ra, rb = results.get((a, config)), results.get((b, config))
            value = None
            if ra and rb and "error" not in ra and "error" not in rb:
                value = rb["time_s"] / ra["time_s"]
            growth[config][f"{a}->{b}"] = value
            cells.append(f"{value:13.2f}x" if value is not None else f"{'n/a':>14s}")
        print(f"{config:>10s}" + "".join(cells))

    print()
    print("Growth of the median CPU time (all threads; steadier under load):")
    print(header)
    cpu_growth = {}
    for config in args.configs:
        cells, cpu_growth[config] = [], {}
        for a, b in steps:
            ra, rb = results.get((a, config)), results.get((b, config))
            value = None
            if ra and rb and ra.get("cpu_s") and rb.get("cpu_s"):
                value = rb["cpu_s"] / ra["cpu_s"]
            cpu_growth[config][f"{a}->{b}"] = value
            cells.append(f"{value:13.2f}x" if value is not None else f"{'n/a':>14s}")
        print(f"{config:>10s}" + "".join(cells))

    checks = []
    if 8192 in args.lengths:
        at = ratios[8192]
        checks += [
            ("LSH-1 >= 10x faster than full at 8192", at["full_over_lsh1_time"], lambda r: r >= 10),
            ("LSH-1 peak <= 1/8 of full at 8192", at["lsh1_over_full_peak"], lambda r: r <= 1 / 8),
            ("LSH-1 faster than HF LSH-1 at 8192", at["lsh1_over_hf_lsh1_time"], lambda r: r < 1),
        ]
    for name in ("lsh-1", "lsh-1f", "lsh-1r"):
        lsh_growth = growth.get(name, {}).get("4096->16384")
        if lsh_growth is not None:
            checks.append((f"{name.upper()} 4096->16384 growth <= 5x", lsh_growth, lambda r: r <= 5))
    for length in (8192,):
        value = ratios.get(length, {}).get("lsh1f_over_hf_lsh1f_time")
        if value is not None:
            checks.append(("LSH-1f faster than HF LSH-1f at 8192", value, lambda r: r < 1))
    verdicts = {}
    if checks:
        print()
        print("Targets:")
        for name, value, passes in checks:
            verdict = "n/a" if value is None else ("PASS" if passes(value) else "FAIL")
            verdicts[name] = {"value": value, "verdict": verdict}
            print(f"  {name:40s} {fmt(value):>8s}  {verdict}")

    output = pathlib.Path(
        args.output
        or RESULTS / ("lsh_attention_xla.json" if args.jit else "lsh_attention.json")
    )
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from recording import write_result

    write_result(output, {
        "settings": settings,
        "results": {f"{length}/{config}": value for (length, config), value in results.items()},
        "ratios": {str(k): v for k, v in ratios.items()},
        "growth": growth,
        "cpu_growth": cpu_growth,
        "targets": verdicts,
    }, threads={"tensorflow_intra_op": args.threads, "torch": args.threads})


if __name__ == "__main__":
    main()
