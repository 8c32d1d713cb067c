"""One attention layer on an accelerator: full attention (cuDNN flash where
JAX takes it) against LSH attention with 1, 2 and 4 hash rounds, forward
and backward, from 1,024 to 32,768 tokens.

    KERAS_BACKEND=jax python benchmarks/gpu_attention.py \
        [--lengths 1024 2048 4096 8192 16384 32768] [--repeats 10] \
        [--precisions bf16 float32] [--configs full lsh-1 lsh-2 lsh-4] \
        [--max_seconds 240] [--output gpu_attention.json]

The layers (batch 1, hidden 256, 4 heads; LSH: chunk 64, one chunk back,
none ahead, Reformer's bucket count, `reformer_num_buckets`, as the
long-document pipeline uses):

- `full`: `AlbertSelfAttention`, which on JAX calls
  `keras.ops.dot_product_attention` (cuDNN's fused attention when JAX
  accepts the call, XLA's attention otherwise);
- `lsh-N`: `AlbertLSHSelfAttention` with N hash rounds.

What is timed: one training step's worth of the layer, `jax.jit` of
`jax.value_and_grad` of the sum of the layer's output, taken with respect to
its weights and its input, the layer called through `__call__` inside a
`keras.StatelessScope` (so the mixed-precision casts are the ones a model
gets) with `training=True` and an all-ones padding mask [1, length], as the
backbone passes one. Not Keras's train step: its optimizer update and
metrics would add a cost that does not depend on the attention and blur the
comparison the README draws. `bf16` is the `mixed_bfloat16` policy
(float32 weights, bfloat16 compute), `float32` plain float32 (cuDNN's fused
attention takes only 16-bit or 8-bit inputs).

Per (precision, length, layer): the compile time (lowering + XLA), then one
untimed call, then the median of `--repeats` calls, each waited for with
`block_until_ready`; the program's own memory as XLA planned it
(`compiled.memory_analysis()`: arguments + outputs + temporaries - aliased);
and on devices whose JAX reports it (`device.memory_stats()`, not the CPU),
the allocator's peak: JAX cannot reset that high-water mark, so it is this
run's peak only where the run raised it, else recorded as an upper bound.
For `full`, whether the compiled program calls cuDNN's fused attention (a
`__cudnn$fmha` custom call in the lowered program), the fallback Keras
logged if cuDNN refused the call (its exception line), and a probe of
`ops.dot_product_attention(..., flash_attention=True)` on the same shapes
without a mask (which says whether cuDNN could run these shapes at all).

Out of memory or a failed compile at one length is recorded as such and the
sweep goes on. The run bounds its own wall time: no measurement starts after
`--max_seconds`, nor one predicted (from the same layer's previous length)
to end after it; a measurement under way is not interrupted. The JSON is
rewritten after every measurement, so a run cut short keeps what it
measured. The `crossover` field gives, per precision, the shortest length
from which each LSH layer is faster than full attention at that length and
every longer one measured (full attention out of memory counts as slower).

On a CPU it runs too (`--lengths 256 512 --repeats 2` checks the script in
seconds); only accelerator figures are quoted. On a lent GPU, from the
checkout with the keras and keras-hub wheels on the path:

    PYTHONPATH=$PWD KERAS_BACKEND=jax XLA_PYTHON_CLIENT_PREALLOCATE=false \
        python benchmarks/gpu_attention.py --output $OUT/gpu_attention.json

(without preallocation the allocator's peak is what the programs used, and
full attention may use the whole GPU before it runs out of memory).
"""

import argparse
import gc
import logging
import os
import statistics
import sys
import time

START = time.monotonic()
os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from recording import spread  # noqa: E402
from recording import write_result  # noqa: E402

BATCH = 1
HIDDEN = 256
HEADS = 4
CHUNK = 64
CONFIGS = ("full", "lsh-1", "lsh-2", "lsh-4")
PRECISIONS = {"bf16": "mixed_bfloat16", "float32": "float32"}
DEFAULT_LENGTHS = (1024, 2048, 4096, 8192, 16384, 32768)
# How much longer a layer's next (doubled) length is predicted to take: full
# attention's work grows with the square of the length, LSH's about linearly
# (with a log factor for the sort).
GROWTH = {"full": 4.0, "lsh": 2.5}
OOM_SIGNS = ("RESOURCE_EXHAUSTED", "out of memory", "Out of memory", "OOM")
CUDNN_CALL = "__cudnn$fmha"


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(DEFAULT_LENGTHS))
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--precisions", nargs="+", choices=sorted(PRECISIONS), default=["bf16"])
    parser.add_argument("--configs", nargs="+", choices=CONFIGS, default=list(CONFIGS))
    parser.add_argument("--max_seconds", type=float, default=240.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default="gpu_attention.json")
    args = parser.parse_args(argv)
    bad = [length for length in args.lengths if length < 2]
    if bad:
        parser.error(f"--lengths: each length must be an integer >= 2. Received: {bad}")
    if args.repeats < 1:
        parser.error(f"--repeats: must be an integer >= 1. Received: {args.repeats}")
    if not args.max_seconds > 0:
        parser.error(f"--max_seconds: must be > 0. Received: {args.max_seconds}")
    import keras

    if keras.config.backend() != "jax":
        parser.error(f"run with KERAS_BACKEND=jax (this process: {keras.config.backend()})")
    args.lengths = sorted(set(args.lengths))
    args.precisions = list(dict.fromkeys(args.precisions))
    args.configs = list(dict.fromkeys(args.configs))
    return args


def crossover(rows, candidate, baseline="full"):
    """The shortest length from which `candidate` is faster than `baseline`.

    `rows` maps a length to {config: entry}, an entry holding `median_ms`
    when it was measured or `error` ("out of memory", "failed", "skipped")
    when not. At a length the candidate is faster when both were measured
    and its median is lower, or when only it was measured and the baseline
    ran out of memory; slower when both were measured and it is not lower,
    or when only the baseline was measured and the candidate ran out of
    memory; otherwise the length says nothing. `from_length` is the
    shortest length at which the candidate is faster there and at every
    longer length that says something (None when there is none);
    `speedup` is the baseline's median over the candidate's where both
    were measured.
    """
    faster, slower, unknown, speedup = [], [], [], {}
    for length in sorted(rows, key=int):
        row = rows[length]
        ours, theirs = row.get(candidate, {}), row.get(baseline, {})
        mine, base = ours.get("median_ms"), theirs.get("median_ms")
        if mine is not None and base is not None:
            speedup[str(length)] = base / mine
            (faster if mine < base else slower).append(int(length))
        elif mine is not None and theirs.get("error") == "out of memory":
            faster.append(int(length))
        elif base is not None and ours.get("error") == "out of memory":
            slower.append(int(length))
        else:
            unknown.append(int(length))
    last_slower = max(slower, default=None)
    after = [length for length in faster if last_slower is None or length > last_slower]
    return {
        "from_length": min(after, default=None),
        "faster_at": faster,
        "slower_at": slower,
        "unknown_at": unknown,
        "speedup": speedup,
    }


class FallbackLog(logging.Handler):
    """Keeps the exception line of every "Failed to apply ..." record that
    Keras's JAX backend logs (through absl) when it falls back from an
    attention implementation, while it is attached."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def emit(self, record):
        message = record.getMessage()
        if not message.startswith("Failed to apply"):
            return
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            message += f" {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        self.seen.append(message)

    def __enter__(self):
        # The "absl" logger is the one absl.logging writes to; not passing the
        # records on keeps a traceback per length out of the run's output.
        self.logger = logging.getLogger("absl")
        self.propagate = self.logger.propagate
        self.logger.addHandler(self)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self)
        self.logger.propagate = self.propagate


def describe_error(error):
    text = f"{type(error).__name__}: {error}"
    kind = "out of memory" if any(sign in text for sign in OOM_SIGNS) else "failed"
    return kind, text[:400]


def make_layer(config, length, precision):
    from keras_albert.layers import AlbertLSHSelfAttention
    from keras_albert.layers import AlbertSelfAttention
    from keras_albert.layers import reformer_num_buckets

    policy = PRECISIONS[precision]
    if config == "full":
        return AlbertSelfAttention(num_heads=HEADS, hidden_dim=HIDDEN, dtype=policy), {}
    buckets = reformer_num_buckets(length, CHUNK)
    layer = AlbertLSHSelfAttention(
        num_heads=HEADS, hidden_dim=HIDDEN, num_hashes=int(config.split("-")[1]),
        num_buckets=buckets, chunk_length=CHUNK, num_chunks_before=1, num_chunks_after=0,
        seed=0, dtype=policy,
    )
    return layer, {"num_buckets": buckets}


def train_step(layer):
    """jit(value_and_grad) of the sum of the layer's output, with respect to
    its trainable weights and its input."""
    import jax
    import keras
    from keras import ops

    def loss(trainable, non_trainable, hidden, mask):
        mapping = list(zip(layer.trainable_variables, trainable)) + list(
            zip(layer.non_trainable_variables, non_trainable))
        with keras.StatelessScope(state_mapping=mapping):
            output = layer(hidden, padding_mask=mask, training=True)
        return ops.sum(ops.cast(output, "float32"))

    return jax.jit(jax.value_and_grad(loss, argnums=(0, 2)))


def flash_probe(length, precision):
    """Whether `ops.dot_product_attention(..., flash_attention=True)` lowers
    for these shapes without a mask: "ok", or the error it raised."""
    import jax
    from keras import ops

    dtype = "bfloat16" if precision == "bf16" else "float32"
    shape = jax.ShapeDtypeStruct((BATCH, length, HEADS, HIDDEN // HEADS), dtype)
    try:
        text = jax.jit(lambda q, k, v: ops.dot_product_attention(
            q, k, v, flash_attention=True)).lower(shape, shape, shape).as_text()
    except Exception as error:  # noqa: BLE001 - recorded: it is the answer
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
    return "ok" if CUDNN_CALL in text else "lowered without a cuDNN call"


def device_peak_bytes():
    import jax

    stats = jax.devices()[0].memory_stats()
    return None if not stats else stats.get("peak_bytes_in_use")


def measure(config, length, precision, repeats, seed):
    """One layer at one length: compile, one untimed call, `repeats` timed
    calls. Returns the entry recorded for it."""
    import jax
    import numpy as np

    entry = {}
    stage = "build"
    peak_before = device_peak_bytes()
    try:
        layer, extra = make_layer(config, length, precision)
        entry.update(extra)
        layer.build((BATCH, length, HIDDEN))
        rng = np.random.default_rng(seed)
        hidden = jax.device_put(
            rng.normal(size=(BATCH, length, HIDDEN)).astype("float32")).astype(layer.compute_dtype)
        mask = jax.device_put(np.ones((BATCH, length), "int32"))
        arguments = ([v.value for v in layer.trainable_variables],
                     [v.value for v in layer.non_trainable_variables], hidden, mask)
        step = train_step(layer)
        stage = "compile"
        started = time.perf_counter()
        with FallbackLog() as fallbacks:
            lowered = step.lower(*arguments)
        if config == "full":
            entry["cudnn_fused_attention"] = CUDNN_CALL in lowered.as_text()
            entry["fallbacks_logged"] = fallbacks.seen
        compiled = lowered.compile()
        entry["compile_s"] = time.perf_counter() - started
        analysis = compiled.memory_analysis()
        if analysis is not None:
            entry["program_memory_mib"] = (
                analysis.argument_size_in_bytes + analysis.output_size_in_bytes
                + analysis.temp_size_in_bytes - analysis.alias_size_in_bytes) / 2**20
        stage = "run"
        jax.block_until_ready(compiled(*arguments))
        seconds = []
        for _ in range(repeats):
            started = time.perf_counter()
            jax.block_until_ready(compiled(*arguments))
            seconds.append(time.perf_counter() - started)
    except Exception as error:  # noqa: BLE001 - recorded per length, the sweep goes on
        kind, message = describe_error(error)
        entry.update(error=kind, stage=stage, message=message)
        return entry
    finally:
        # What this measurement allocated goes before the next one starts.
        layer = arguments = hidden = step = lowered = compiled = None  # noqa: F841
        gc.collect()
    entry["median_ms"] = statistics.median(seconds) * 1e3
    entry["ms"] = spread([s * 1e3 for s in seconds])
    peak_after = device_peak_bytes()
    if peak_after is not None:
        if peak_before is None or peak_after > peak_before:
            entry["device_peak_mib"] = peak_after / 2**20
        else:
            # Below the process's earlier high-water mark: only a bound.
            entry["device_peak_mib_at_most"] = peak_after / 2**20
    return entry


def predicted_seconds(previous, config, repeats):
    """A guess at one measurement's wall time from the same layer's
    measurement at the previous (shorter) length, or None without one."""
    if previous is None or "median_ms" not in previous:
        return None
    growth = GROWTH["full" if config == "full" else "lsh"]
    return previous.get("compile_s", 0.0) * 1.5 + (repeats + 1) * previous["median_ms"] / 1e3 * growth


def device():
    import jax

    first = jax.devices()[0]
    found = {"platform": first.platform, "kind": first.device_kind, "count": jax.device_count()}
    stats = first.memory_stats()
    if stats and stats.get("bytes_limit"):
        found["memory_limit_gib"] = stats["bytes_limit"] / 2**30
    return found


def main(argv=None):
    args = parse(argv)
    record_argv = None if argv is None else ["benchmarks/gpu_attention.py", *argv]
    print(f"device: {device()}", flush=True)
    results = {precision: {} for precision in args.precisions}
    crossovers = {}
    stopped = None

    def save():
        crossovers.clear()
        for precision, rows in results.items():
            if "full" in args.configs:
                crossovers[precision] = {
                    config: crossover(rows, config) for config in args.configs if config != "full"}
        write_result(args.output, {
            "device": device(),
            "settings": {
                "batch": BATCH, "hidden_dim": HIDDEN, "num_heads": HEADS,
                "lsh": {"chunk_length": CHUNK, "num_chunks_before": 1, "num_chunks_after": 0,
                        "num_buckets": "reformer_num_buckets(length, 64)"},
                "pass": "jit(value_and_grad(sum(layer(x, all-ones padding mask, training=True))))"
                        " with respect to the weights and x",
                "precisions": {p: PRECISIONS[p] for p in args.precisions},
                "lengths": args.lengths, "configs": args.configs, "repeats": args.repeats,
                "max_seconds": args.max_seconds,
                "environment": {name: os.environ[name] for name in (
                    "XLA_FLAGS", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_PREALLOCATE",
                    "XLA_PYTHON_CLIENT_ALLOCATOR") if name in os.environ},
            },
            "results": results,
            "crossover": crossovers,
            "stopped_early": stopped,
            "elapsed_s": time.monotonic() - START,
        }, argv=record_argv)

    previous = {}
    for length in args.lengths:
        for precision in args.precisions:
            row = results[precision].setdefault(str(length), {})
            for config in args.configs:
                elapsed = time.monotonic() - START
                guess = predicted_seconds(previous.get((precision, config)), config, args.repeats)
                if elapsed >= args.max_seconds or (guess and elapsed + guess > args.max_seconds):
                    row[config] = {"error": "skipped", "message": (
                        f"--max_seconds {args.max_seconds:g}: {elapsed:.0f} s spent"
                        + (f", about {guess:.0f} s more predicted" if guess else ""))}
                    stopped = stopped or f"at {length} tokens, {precision}, {config}"
                    continue
                entry = measure(config, length, precision, args.repeats, args.seed)
                if config == "full":
                    entry["flash_probe_without_mask"] = flash_probe(length, precision)
                row[config] = entry
                previous[(precision, config)] = entry
                shown = (f"{entry['median_ms']:.2f} ms" if "median_ms" in entry
                         else f"{entry['error']} ({entry.get('stage')}): {entry.get('message', '')[:160]}")
                if config == "full":
                    shown += f", cuDNN fused attention: {entry.get('cudnn_fused_attention')}"
                    shown += "".join(f"; logged: {line[:200]}" for line in entry.get("fallbacks_logged", []))
                print(f"{precision} {length:>6} {config:>6}: {shown}", flush=True)
                save()
    save()
    for precision, table in crossovers.items():
        for config, found in table.items():
            print(f"{precision} {config} faster than full from {found['from_length']} tokens "
                  f"(speedup {', '.join(f'{k}: {v:.2f}x' for k, v in found['speedup'].items())})",
                  flush=True)


if __name__ == "__main__":
    main()
