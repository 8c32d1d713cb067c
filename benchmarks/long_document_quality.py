"""Long documents: truncated full attention vs full and LSH at length.

The task (`keras_albert.datasets.long_documents`): which of Austen's six
novels a passage comes from, split by chapter, names masked; passages fill
`--document_length` positions ([CLS], `document_length - 2` pieces, [SEP]).
Every row reads the first `length - 2` pieces of the same passages and is
scored on the same test chapters:

  majority  the most frequent novel of the training passages, for every
            test passage
  tfidf-L   TF-IDF + LinearSVC, C and word n-grams picked on the carve-out,
            at every length of --rows: the simplest strong baseline
  full-L    the preset, positions extended to L if needed, full attention
  lshN-L    the same weights made LSH with N hash rounds (`lsh_backbone_from`)

The protocol (benchmarks/README.md, "How quality is measured"):

- The test chapters are the chapter split's of seed 0 for every seed: the
  split `keras_albert.datasets.heldout` keeps out of pretraining corpora.
- Each seed draws a carve-out from the other chapters' passages
  (`keras_albert.pipelines.long_documents.carve_out_task`: a fifth of
  each novel's, sharing no chapter with the passages trained on), the
  initialisation and the order.
- Every choice is made on the carve-out: for each model row and seed,
  every candidate of --learning_rates x --poolings x --warm_starts is
  fine-tuned (AdamW, warmup and linear decay; the best epoch kept, the
  warm start's linear probe counting as epoch 0), the one with the best
  carve-out accuracy is kept, and only its test scores are reported
  (a candidate is scored on the test passages when it takes the
  carve-out's lead, while its weights are in memory, and a later leader's
  scores replace them: the choice never reads them). TF-IDF's C and
  n-gram range are picked on the same carve-out.
- Each row is reported as mean +- sd over --seeds, with n (test passages)
  and a 95 % Wilson interval at n; each margin as mean +- sd of the
  per-seed differences with Newcombe's 95 % interval (`intervals.py`).
  Both intervals are the test sample's (the same passages for every
  seed), taken at the seed mean rounded to whole passages; the sd is the
  seeds'. A target counts as supported only where the whole interval
  clears it.

Each LSH row is compared with full attention truncated to
`--truncated_length` and with full attention at its own length, and its
training step time with full attention's (median over every step but the
first, of the chosen candidate, then over seeds): the issue's targets are
>= +5 points, >= -1 point and >= 5x. The record ends with
`readme_summary`: one sentence per row and margin saying what the
intervals support.

The full comparison takes days on 2 CPU cores (every candidate of every
row and seed is a fine-tuning), so the results file doubles as the
progress record: each (row, seed) is written as soon as it finishes, and
a new run with the same setting skips recorded ones (one started but never
finished, e.g. killed for memory, is retried `--max_attempts` times in
all); running with more --seeds adds them. Within a (row, seed), the
record is rewritten after each fitted candidate with the rows fitted so
far and the carve-out leader's test scores (`progress`; no weights), so a
stopped run, on this machine or on a fresh checkout of the committed
file, goes on after the last candidate that finished. SIGTERM (`kill`,
`pkill`) stops a run cleanly: the (row, seed) is recorded as stopped and
does not count as an attempt. A different setting in an
existing file is refused (--restart discards it).

    python benchmarks/long_document_quality.py            # everything (days)
    python benchmarks/long_document_quality.py --rows full-512 lsh1-2048 --seeds 0
    python benchmarks/long_document_quality.py --document_length 64 --rows full-32 full-64 lsh1-64 \\
        --truncated_length 32 --lsh_chunk_length 16 --max_passages_per_class 6 --epochs 1 \\
        --seeds 0 1 --learning_rates 1e-3 --poolings mean --output /tmp/long_documents.json  # a smoke run
"""

import argparse
import datetime
import functools
import gc
import json
import os
import pathlib
import re
import signal
import statistics
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "long_document_protocol.json"
DEFAULT_ROWS = ("full-128", "full-512", "full-1024", "full-2048", "lsh1-2048", "lsh4-2048")
ROW = re.compile(r"^(full|tfidf|lsh([1-9][0-9]*))-([0-9]+)$")
WARM_STARTS = {"on": True, "off": False}
# The targets for each LSH row.
TARGET_POINTS_OVER_TRUNCATED = 5.0
TARGET_POINTS_BELOW_FULL = 1.0
TARGET_STEP_SPEEDUP = 5.0


def parse_row(name):
    """'lsh4-2048' -> ('lsh', 4, 2048); argparse type for --rows."""
    match = ROW.match(name)
    if not match:
        raise argparse.ArgumentTypeError(
            f"row {name!r} is not KIND-LENGTH with KIND full, tfidf or lshN (N hash rounds), "
            "e.g. full-512, lsh4-2048"
        )
    kind, hashes, length = match.group(1), match.group(2), int(match.group(3))
    if kind.startswith("lsh"):
        kind = "lsh"
    return kind, int(hashes) if hashes else None, length


def task_parser(doc):
    """A parser for a long-document script (`doc`: its docstring) with the
    task's flags and the LSH rows' settings, shared with
    long_document_step_times.py so both build the same models."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--document_length", type=int, default=2048,
                        help="passages fill this many positions (with [CLS] and [SEP])")
    parser.add_argument("--lsh_chunk_length", type=int, default=64)
    parser.add_argument("--lsh_num_buckets", type=int, default=0,
                        help="0: 2 * length / chunk length (Reformer's choice)")
    parser.add_argument("--lsh_chunks_after", type=int, default=1)
    return parser


def parse_args(argv):
    parser = task_parser(__doc__)
    parser.add_argument("--rows", nargs="+", type=parse_row, default=[parse_row(r) for r in DEFAULT_ROWS],
                        metavar="KIND-LENGTH",
                        help=f"models to run (default: {' '.join(DEFAULT_ROWS)}); "
                        "a tfidf row runs at every length named, the majority class always")
    parser.add_argument("--truncated_length", type=int, default=512,
                        help="the truncation baseline each LSH row is compared with (full-L)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="each draws the carve-out, the initialisation and the order")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--learning_rates", type=float, nargs="+", default=[2e-4, 1e-3],
                        help="peak learning rates tried; the carve-out picks")
    parser.add_argument("--poolings", nargs="+", choices=("mean", "cls"), default=["mean", "cls"],
                        help="what the classifier head reads, tried; the carve-out picks")
    parser.add_argument("--warm_starts", nargs="+", choices=tuple(WARM_STARTS), default=["on", "off"],
                        help="fit the head on the frozen model's features first (the probe then "
                             "counts as epoch 0) or not, tried; the carve-out picks")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--train_shifts", type=int, default=1,
                        help="cut the training chapters this many times, shifted: overlapping passages")
    parser.add_argument("--max_passages_per_class", type=int, default=0,
                        help="0: every passage; else a fixed sample per novel and split (smoke runs)")
    parser.add_argument("--keep_names", action="store_true",
                        help="keep proper nouns (masked by default: names give a novel away)")
    parser.add_argument("--max_hours_per_row", type=float, default=0.0,
                        help="skip a candidate whose projected fine-tuning time exceeds this (0: no limit)")
    parser.add_argument("--max_attempts", type=int, default=2,
                        help="runs of a (row, seed) that never finished before it is left out")
    parser.add_argument("--restart", action="store_true", help="discard rows recorded in --output")
    parser.add_argument("--readme_table", action="store_true",
                        help="print the README's table and margins of the rows in --output with 3 or "
                             "more seeds, each figure with its source tag, and run nothing")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)
    for flag in ("document_length", "truncated_length"):
        if getattr(args, flag) < 8:
            parser.error(f"--{flag} must be >= 8 (received {getattr(args, flag)})")
    for flag in ("epochs", "batch_size", "patience", "lsh_chunk_length", "train_shifts", "max_attempts"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag} must be >= 1 (received {getattr(args, flag)})")
    for flag in ("lsh_num_buckets", "lsh_chunks_after", "max_passages_per_class"):
        if getattr(args, flag) < 0:
            parser.error(f"--{flag} must be >= 0 (received {getattr(args, flag)})")
    if min(args.seeds) < 0 or len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds must be distinct integers >= 0 (received {args.seeds})")
    if min(args.learning_rates) <= 0:
        parser.error(f"--learning_rates must be > 0 (received {args.learning_rates})")
    for flag in ("learning_rates", "poolings", "warm_starts"):
        values = getattr(args, flag)
        if len(set(values)) != len(values):
            parser.error(f"--{flag} must not repeat a value (received {values})")
    if args.max_hours_per_row < 0:
        parser.error(f"--max_hours_per_row must be >= 0 (received {args.max_hours_per_row})")
    for kind, _, length in args.rows:
        if not 8 <= length <= args.document_length:
            parser.error(f"row {kind}-{length}: the length must be in [8, --document_length "
                         f"{args.document_length}]; a longer model would read nothing more")
    return args


def setting_of(args):
    """What recorded rows depend on: a resumed run must match it (the
    seeds may differ: more seeds add runs)."""
    from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED
    from keras_albert.pipelines.long_documents import CARVE_OUT_FRACTION

    return {
        "preset": args.preset,
        "document_length": args.document_length,
        "split_seed": LONG_DOCUMENT_SEED,
        "carve_out_fraction": CARVE_OUT_FRACTION,
        "train_shifts": args.train_shifts,
        "max_passages_per_class": args.max_passages_per_class,
        "names_masked": not args.keep_names,
        "recipe": {"epochs": args.epochs, "batch_size": args.batch_size, "patience": args.patience},
        "chosen_on_the_carve_out": {"learning_rate": args.learning_rates, "pooling": args.poolings,
                                    "head_warm_start": args.warm_starts,
                                    "tfidf": "C and word n-gram range"},
        "lsh": {"chunk_length": args.lsh_chunk_length, "num_buckets": args.lsh_num_buckets,
                "num_chunks_after": args.lsh_chunks_after},
    }


def row_names(args):
    """The majority class and TF-IDF at every length first (seconds each),
    then the models in order."""
    names = ["majority"] + [f"tfidf-{length}" for length in sorted({length for _, _, length in args.rows})]
    for kind, hashes, length in args.rows:
        name = f"{kind}-{length}" if kind != "lsh" else f"lsh{hashes}-{length}"
        if name not in names:
            names.append(name)
    return names


def candidates(name, args, seed):
    """Every setting of the grid for model row `name` and `seed`, checked."""
    from keras_albert.pipelines.long_documents import LongDocumentSettings
    from keras_albert.pipelines.long_documents import long_document_recipe

    kind, hashes, length = parse_row(name)
    return [
        LongDocumentSettings(
            sequence_length=length, attention=kind, preset=args.preset,
            recipe=long_document_recipe(epochs=args.epochs, learning_rate=learning_rate,
                                        batch_size=args.batch_size, patience=args.patience,
                                        head_warm_start=WARM_STARTS[warm_start]),
            lsh_num_hashes=hashes or 1, lsh_chunk_length=args.lsh_chunk_length,
            lsh_num_buckets=args.lsh_num_buckets, lsh_num_chunks_after=args.lsh_chunks_after,
            pooling=pooling, seed=seed, max_hours=args.max_hours_per_row,
        ).check()
        for learning_rate in args.learning_rates
        for pooling in args.poolings
        for warm_start in args.warm_starts
    ]


def load_rows(path, setting, restart):
    """Rows already recorded under the same setting ({} if none)."""
    if restart or not path.exists():
        return {}
    recorded = json.loads(path.read_text())
    if recorded.get("setting") != setting:
        old = recorded.get("setting") or {}
        differing = sorted(key for key in set(old) | set(setting) if old.get(key) != setting.get(key))
        raise SystemExit(
            f"{path} holds rows of another setting (differs in: {', '.join(differing)}). "
            "Pass --restart to discard them or --output for a new file."
        )
    return recorded.get("rows", {})


def mean_sd(values):
    values = [float(value) for value in values]
    return {"mean": round(statistics.fmean(values), 4),
            "sd": round(statistics.stdev(values), 4) if len(values) > 1 else None,
            "seeds": len(values)}


def whole_passages(accuracy, n):
    """`accuracy` rounded to a whole number of the n test passages (what
    Wilson's and Newcombe's intervals take)."""
    return round(accuracy * n) / n


def chosen_setting(run):
    """What the carve-out chose in one model run, in words."""
    if run.get("kept_head_warm_start"):
        head = "linear probe (fine-tuning never beat it)"
    elif run["head_warm_start"]:
        head = "probe then fine-tuned"
    else:
        head = "fine-tuned from a random head"
    return f"lr {run['learning_rate']:g}, {run['pooling']} pooling, {head}"


def summarize(entry):
    """Mean +- sd over the finished seeds, n, the 95 % interval and what
    the carve-out chose (None before a seed finished)."""
    from intervals import accuracy_with_interval

    runs = {seed: run for seed, run in entry["runs"].items() if run.get("status") == "done"}
    if not runs:
        return None
    ns = {run["test_passages"] for run in runs.values()}
    if len(ns) != 1:
        raise ValueError(f"the seeds of one row were scored on different test sets: n in {sorted(ns)}")
    n = ns.pop()
    accuracy = mean_sd([run["accuracy"] for run in runs.values()])
    summary = {
        "accuracy": accuracy,
        "macro_f1": mean_sd([run["macro_f1"] for run in runs.values()]),
        "n": n,
        "wilson_95": accuracy_with_interval(whole_passages(accuracy["mean"], n), n)["wilson_95"],
        "seeds": sorted(runs, key=int),
    }
    steps = [run["step_seconds"]["median"] for run in runs.values() if run.get("step_seconds")]
    if steps:
        summary["step_seconds_median"] = round(statistics.median(steps), 4)
    if "candidates" in next(iter(runs.values())):
        chosen = [chosen_setting(run) for run in runs.values()]
        summary["chosen_on_the_carve_out"] = {choice: chosen.count(choice) for choice in sorted(set(chosen))}
        summary["kept_the_linear_probe"] = sum(bool(run.get("kept_head_warm_start")) for run in runs.values())
    if "C" in next(iter(runs.values())):
        chosen = [f"C {run['C']:g}, words {run['ngram_range'][0]}-{run['ngram_range'][1]}"
                  for run in runs.values()]
        summary["chosen_on_the_carve_out"] = {choice: chosen.count(choice) for choice in sorted(set(chosen))}
    return summary


def margin(rows, a, b):
    """a minus b: mean +- sd of the per-seed differences in points, and
    Newcombe's 95 % interval at the seed means (None without a shared seed)."""
    from intervals import points_with_interval

    runs_a, runs_b = rows[a]["runs"], rows[b]["runs"]
    seeds = [seed for seed in runs_a if runs_a[seed].get("status") == "done"
             and runs_b.get(seed, {}).get("status") == "done"]
    if not seeds:
        return None
    n = runs_a[seeds[0]]["test_passages"]
    mean_a = statistics.fmean(runs_a[seed]["accuracy"] for seed in seeds)
    mean_b = statistics.fmean(runs_b[seed]["accuracy"] for seed in seeds)
    interval = points_with_interval(whole_passages(mean_a, n), n, whole_passages(mean_b, n), n)
    return {**mean_sd([100 * (runs_a[seed]["accuracy"] - runs_b[seed]["accuracy"]) for seed in seeds]),
            "n": n, "newcombe_95_points": interval["newcombe_95_points"]}


def compare(rows, truncated_length):
    """Each row's summary, the margins the README reads, and each LSH row
    against its targets, met on the mean and supported by the interval."""
    summaries = {name: summarize(entry) for name, entry in rows.items()}
    done = {name: summary for name, summary in summaries.items() if summary}
    kind = {name: parse_row(name)[0] if name != "majority" else "majority" for name in rows}
    length = {name: parse_row(name)[2] for name in rows if name != "majority"}
    truncated = f"full-{truncated_length}"
    models = [name for name in done if kind[name] in ("full", "lsh")]
    pairs = [(name, truncated) for name in models if truncated in done and name != truncated]
    pairs += [(name, f"full-{length[name]}") for name in models
              if kind[name] == "lsh" and f"full-{length[name]}" in done]
    # More hash rounds against fewer at the same length: what the extra rounds buy.
    hashes = {name: parse_row(name)[1] for name in models if kind[name] == "lsh"}
    pairs += [(name, other) for name in hashes for other in hashes
              if length[name] == length[other] and hashes[name] > hashes[other]]
    pairs += [(f"tfidf-{length[name]}", name) for name in models if f"tfidf-{length[name]}" in done]
    pairs += [(name, "majority") for name in models if "majority" in done]
    margins = {f"{a} minus {b}": margin(rows, a, b) for a, b in pairs}
    margins = {key: value for key, value in margins.items() if value}
    lsh = {}
    for name in rows:
        if kind[name] != "lsh":
            continue
        entry, met, supported = {}, {}, {}
        over = margins.get(f"{name} minus {truncated}")
        if over:
            target = f"beats_{truncated.replace('-', '_')}_by_{TARGET_POINTS_OVER_TRUNCATED:g}_points"
            met[target] = over["mean"] >= TARGET_POINTS_OVER_TRUNCATED
            supported[target] = over["newcombe_95_points"][0] >= TARGET_POINTS_OVER_TRUNCATED
        same = margins.get(f"{name} minus full-{length[name]}")
        if same:
            target = f"at_most_{TARGET_POINTS_BELOW_FULL:g}_point_below_full"
            met[target] = same["mean"] >= -TARGET_POINTS_BELOW_FULL
            supported[target] = same["newcombe_95_points"][0] >= -TARGET_POINTS_BELOW_FULL
        full_steps = (summaries.get(f"full-{length[name]}") or {}).get("step_seconds_median")
        own_steps = (summaries.get(name) or {}).get("step_seconds_median")
        if full_steps and own_steps:
            entry["full_over_lsh_step_time"] = round(full_steps / own_steps, 2)
            met[f"step_{TARGET_STEP_SPEEDUP:g}x_faster"] = entry["full_over_lsh_step_time"] >= TARGET_STEP_SPEEDUP
        entry.update(targets_met_on_the_mean=met, targets_supported_by_interval=supported)
        lsh[name] = entry
    return {"rows": done, "margins": margins, "lsh": lsh}


def ahead(a, b, low, high):
    """Which of rows a and b the margin a - b's interval [low, high]
    puts ahead (None when it holds 0)."""
    return a if low > 0 else b if high < 0 else None


def finished_rows(comparison, min_seeds):
    """The rows of `comparison` with at least `min_seeds` finished seeds."""
    return {name for name, summary in comparison["rows"].items() if summary["accuracy"]["seeds"] >= min_seeds}


def readme_summary(comparison):
    """Sentences a README can carry: each row, each margin and each target
    with what its 95 % interval supports."""
    lines = []
    for name, summary in comparison["rows"].items():
        accuracy, (low, high) = summary["accuracy"], summary["wilson_95"]
        spread = f" +- {100 * accuracy['sd']:.1f}" if accuracy["sd"] is not None else ""
        line = (f"{name}: {100 * accuracy['mean']:.1f}{spread} % over {accuracy['seeds']} seed(s), "
                f"n = {summary['n']} test passages, 95 % interval {100 * low:.1f}-{100 * high:.1f} %")
        chosen = summary.get("chosen_on_the_carve_out")
        if chosen:
            line += "; the carve-out chose " + "; ".join(f"{k} ({v}x)" for k, v in chosen.items())
        lines.append(line + ".")
    for key, entry in comparison["margins"].items():
        low, high = entry["newcombe_95_points"]
        spread = f" +- {entry['sd']:.1f}" if entry["sd"] is not None else ""
        a, b = key.split(" minus ")
        leader = ahead(a, b, low, high)
        if leader is None:
            verdict = "the interval holds 0: no difference is shown"
        else:
            side = "above" if leader == a else "below"
            verdict = f"{leader} is ahead (the whole interval is {side} 0)"
        lines.append(f"{key}: {entry['mean']:+.1f}{spread} points over {entry['seeds']} seed(s), "
                     f"95 % interval {low:+.1f} to {high:+.1f}: {verdict}.")
    for name, entry in comparison["lsh"].items():
        for target, met in entry["targets_met_on_the_mean"].items():
            if target in entry["targets_supported_by_interval"]:
                verdict = ("supported by the interval" if entry["targets_supported_by_interval"][target]
                           else "not supported by the interval")
            else:
                verdict = "a ratio of medians, no interval"
            lines.append(f"{name} {target.replace('_', ' ')}: {'met' if met else 'not met'} on the mean, "
                         f"{verdict}.")
    return lines


def readme_table(comparison, record, min_seeds=3):
    """The README's table of `comparison` (read from the results file
    `record`, a path from the repository root): every row with at least
    `min_seeds` finished seeds, each figure followed by its source tag
    (tests/test_readme_figures.py checks them), model rows beside TF-IDF
    at their length."""

    def tagged(value, key, scale=100, decimals=1, unit=""):
        mark = f"*{scale}" if scale != 1 else ""
        return f"{value * scale:.{decimals}f}{unit}<!-- source: {record}#comparison.rows.{key}{mark} -->"

    def accuracy(name):
        summary = comparison["rows"][name]
        mean = tagged(summary["accuracy"]["mean"], f"{name}.accuracy.mean")
        if summary["accuracy"]["sd"] is None:
            return mean + " %"
        return f"{mean} +- " + tagged(summary["accuracy"]["sd"], f"{name}.accuracy.sd", unit=" %")

    def interval(name):
        low, high = comparison["rows"][name]["wilson_95"]
        return (tagged(low, f"{name}.wilson_95.0") + "-" + tagged(high, f"{name}.wilson_95.1", unit=" %"))

    ready = finished_rows(comparison, min_seeds)
    lines = ["| row | test accuracy, mean +- sd | Wilson 95-percent interval | seeds | training step (median) "
             "| TF-IDF + linear SVM, same pieces |", "|---|---|---|---|---|---|"]
    for name in [name for name in comparison["rows"] if name in ready]:
        if name.startswith("tfidf"):
            continue
        summary = comparison["rows"][name]
        step = ""
        if "step_seconds_median" in summary:
            step = tagged(summary["step_seconds_median"], f"{name}.step_seconds_median", scale=1,
                          decimals=3, unit=" s")
        tfidf = f"tfidf-{parse_row(name)[2]}" if name != "majority" else None
        beside = accuracy(tfidf) if tfidf in ready else ""
        lines.append(f"| {name} | {accuracy(name)} | {interval(name)} | {summary['accuracy']['seeds']} | "
                     f"{step} | {beside} |")
    beside_a_model = {parse_row(name)[2] for name in ready if name.startswith(("full", "lsh"))}
    for name in [name for name in comparison["rows"] if name in ready and name.startswith("tfidf")]:
        if parse_row(name)[2] not in beside_a_model:
            lines.append(f"| {name} (no model row at this length yet) | {accuracy(name)} | {interval(name)} | "
                         f"{comparison['rows'][name]['accuracy']['seeds']} | | |")
    return lines


def readme_margins(comparison, record, min_seeds=3):
    """The README's list of margins between rows that both have at least
    `min_seeds` finished seeds: the mean and sd of the per-seed
    differences and Newcombe's interval, each figure tagged with its
    source in `record`, and what the interval supports."""

    def tagged(value, key, unit=""):
        return f"{value:+.1f}{unit}<!-- source: {record}#comparison.margins.{key} -->"

    ready = finished_rows(comparison, min_seeds)
    lines = []
    for key, entry in comparison["margins"].items():
        a, b = key.split(" minus ")
        if a not in ready or b not in ready:
            continue
        low, high = entry["newcombe_95_points"]
        leader = ahead(a, b, low, high)
        verdict = f"{leader} is ahead" if leader else "no difference is shown"
        spread = f" (sd {entry['sd']:.1f}<!-- source: {record}#comparison.margins.{key}.sd -->)" if entry["sd"] else ""
        lines.append(f"- {a} minus {b}: {tagged(entry['mean'], key + '.mean', ' points')}{spread}, "
                     f"95 % interval {tagged(low, key + '.newcombe_95_points.0')} to "
                     f"{tagged(high, key + '.newcombe_95_points.1')}: {verdict}.")
    return lines


def print_table(rows, names, comparison):
    print(f"\n{'row':<12} {'accuracy % (mean +- sd)':>24} {'95 % at n':>12} {'n':>4} {'seeds':>5} "
          f"{'step s':>8}  chosen on the carve-out")
    for name in names:
        summary = comparison["rows"].get(name)
        if not summary:
            print(f"{name:<12} {'':>24} {'':>12} {'':>4} {'':>5} {'':>8}  not run yet")
            continue
        accuracy, (low, high) = summary["accuracy"], summary["wilson_95"]
        spread = f" +- {100 * accuracy['sd']:.1f}" if accuracy["sd"] is not None else ""
        step = f"{summary['step_seconds_median']:.3f}" if "step_seconds_median" in summary else ""
        chosen = "; ".join(f"{k} ({v}x)" for k, v in summary.get("chosen_on_the_carve_out", {}).items())
        mean = f"{100 * accuracy['mean']:.1f}{spread}"
        interval = f"{100 * low:.1f}-{100 * high:.1f}"
        print(f"{name:<12} {mean:>24} {interval:>12} {summary['n']:>4} {accuracy['seeds']:>5} "
              f"{step:>8}  {chosen}")
    print()
    for line in readme_summary(comparison)[len(comparison["rows"]):]:
        print(line)


def record(output, setting, task, rows, comparison, argv):
    from recording import write_result

    return write_result(output, {
        "protocol": ("test chapters of split seed 0 (held out of pretraining) for every seed; "
                     "each seed draws a chapter-disjoint carve-out of the other passages, on which "
                     "every choice is made; only the chosen candidate's test scores are kept (each carve-out "
                     "leader is scored as it takes the lead, a later leader's scores replace them); "
                     "mean +- sd over seeds, 95 % intervals of the test sample at n"),
        "setting": setting, "task": task.describe(), "rows": rows, "comparison": comparison,
        "readme_summary": readme_summary(comparison),
        "targets": {
            "lsh_minus_full_truncated_points": TARGET_POINTS_OVER_TRUNCATED,
            "lsh_minus_full_same_length_points": -TARGET_POINTS_BELOW_FULL,
            "full_over_lsh_step_time": TARGET_STEP_SPEEDUP,
        },
    }, argv=[os.path.abspath(__file__), *argv])


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Stopped(Exception):
    """SIGTERM arrived: the run records where it is and ends."""


class StopOnSigterm:
    """Notes SIGTERM and raises `Stopped` at the next training batch: a
    signal handler that raised could land in code that swallows exceptions
    (a weakref callback), and a batch boundary is a safe point."""

    def __init__(self):
        self.requested = False
        signal.signal(signal.SIGTERM, self.request)

    def request(self, signum, frame):
        print("SIGTERM: stopping at the next training batch", flush=True)
        self.requested = True

    def callback(self):
        import keras

        stopper = self

        class RaiseWhenRequested(keras.callbacks.Callback):
            def on_train_batch_end(self, batch, logs=None):
                if stopper.requested:
                    raise Stopped()

        return RaiseWhenRequested()


def keep_progress(run, write, snapshot):
    """Puts a (row, seed)'s candidate progress into its record and writes it."""
    run["progress"] = snapshot
    write()


def run_one(name, split, args, seed, stopper, progress):
    """One (row, seed) on a carved task; returns its row."""
    from keras_albert.pipelines.long_documents import majority_long_document_row
    from keras_albert.pipelines.long_documents import tune_long_document_row
    from keras_albert.pipelines.long_documents import tuned_tfidf_long_document_row

    if name == "majority":
        return majority_long_document_row(split)
    if name.startswith("tfidf"):
        return tuned_tfidf_long_document_row(split, parse_row(name)[2])
    return tune_long_document_row(split, candidates(name, args, seed),
                                  progress=progress,
                                  callbacks=[stopper.callback()])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    output = pathlib.Path(args.output)
    names = row_names(args)
    setting = setting_of(args)
    rows = load_rows(output, setting, args.restart)
    if args.readme_table:
        root = pathlib.Path(__file__).resolve().parents[1]
        cited = output.resolve()
        cited = cited.relative_to(root).as_posix() if cited.is_relative_to(root) else str(cited)
        comparison = compare(rows, args.truncated_length)
        print("\n".join(readme_table(comparison, cited) + [""] + readme_margins(comparison, cited)))
        return rows, None

    from keras_albert.utils.atomic_file import check_writable_directory

    check_writable_directory(output.parent, name="--output")
    # Every candidate's settings checked before the first long step.
    for name in names[1:]:
        if not name.startswith("tfidf"):
            try:
                candidates(name, args, args.seeds[0])
            except ValueError as error:
                raise SystemExit(f"row {name}: {error}") from None

    import keras

    from keras_albert.pipelines.candidate_progress import CandidateProgress
    from keras_albert.pipelines.long_documents import carve_out_task
    from keras_albert.pipelines.long_documents import long_document_task

    task = long_document_task(args.preset, args.document_length, seed=setting["split_seed"],
                              train_shifts=args.train_shifts,
                              max_passages_per_class=args.max_passages_per_class or None,
                              names_masked=not args.keep_names)
    print(f"task: {json.dumps(task.counts())}", flush=True)
    splits = {}
    stopper = StopOnSigterm()

    def record_now():
        record(output, setting, task, rows, compare(rows, args.truncated_length), argv)

    command = " ".join(["python", "benchmarks/long_document_quality.py", *argv])
    for name in names:
        entry = rows.setdefault(name, {"runs": {}})
        for seed in args.seeds:
            key = str(seed)
            previous = entry["runs"].get(key, {})
            if previous.get("status") == "over_time_budget" and (
                    not args.max_hours_per_row or args.max_hours_per_row > previous["max_hours"]):
                print(f"{name}, seed {seed}: over {previous['max_hours']} h before; the budget is "
                      "larger now, running it", flush=True)
                previous = {}
            if previous.get("status") in ("done", "over_time_budget"):
                print(f"{name}, seed {seed}: recorded {previous.get('finished', '')}, kept", flush=True)
                continue
            attempts = previous.get("attempts", 0)
            if attempts >= args.max_attempts:
                print(f"{name}, seed {seed}: started {attempts} times and never finished (killed? out "
                      "of memory?); left out (raise --max_attempts to try again)", flush=True)
                continue
            if attempts:
                print(f"{name}, seed {seed}: an earlier run started it and did not finish; retrying",
                      flush=True)
            entry["runs"][key] = {"status": "started", "attempts": attempts + 1, "started": now(),
                                  "command": command}
            if previous.get("progress"):
                entry["runs"][key]["progress"] = previous["progress"]
            record_now()
            if seed not in splits:
                splits[seed] = carve_out_task(task, seed)
                print(f"seed {seed}: carve-out {json.dumps(splits[seed].counts()['validation'])}", flush=True)
            print(f"\n== {name}, seed {seed} ==", flush=True)
            progress = CandidateProgress(previous.get("progress"),
                                         persist=functools.partial(keep_progress, entry["runs"][key], record_now))
            try:
                row = run_one(name, splits[seed], args, seed, stopper, progress)
            except Stopped:
                entry["runs"][key].update(status="stopped", attempts=attempts, stopped=now())
                record_now()
                raise SystemExit(f"{name}, seed {seed}: stopped (SIGTERM); the fitted candidates are "
                                 f"recorded in {output} and the next run goes on from them") from None
            keras.backend.clear_session()
            gc.collect()
            # Other jobs on the machine move step times: keep the load beside them.
            row.update(seed=seed, attempts=attempts + 1, started=entry["runs"][key]["started"],
                       finished=now(), command=command,
                       load_average_1_5_15_min=[round(value, 2) for value in os.getloadavg()])
            entry["runs"][key] = row
            record_now()
            print(json.dumps({k: v for k, v in row.items() if k != "candidates"}), flush=True)
    # Written even when every run was recorded before: a rerun refreshes the
    # comparison after this script's summaries change.
    record_now()
    comparison = compare(rows, args.truncated_length)
    print_table(rows, names + sorted(set(rows) - set(names)), comparison)
    return rows, comparison


if __name__ == "__main__":
    main()
