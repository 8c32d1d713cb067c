"""Long documents: truncated full attention vs full and LSH at length.

The task (`keras_albert.datasets.long_documents`): which of Austen's six
novels a passage comes from, split by chapter, names masked; passages fill
`--document_length` positions ([CLS], `document_length - 2` pieces, [SEP]).
Every row reads the first `length - 2` pieces of the same passages and is
scored on the same test chapters:

  tfidf-L   TF-IDF (word 1-2 grams, sublinear tf) + LinearSVC(C=1), at every
            length of --rows: the simplest strong baseline
  full-L    the preset, positions extended to L if needed, full attention
  lshN-L    the same weights made LSH with N hash rounds (`lsh_backbone_from`)

All models start from `--preset` and are fine-tuned with the project's
recipe (`keras_albert.pipelines.fine_tune_classifier`: AdamW, warmup and
linear decay, the best epoch on the validation chapters kept), batches of
`--batch_size`. Each training step is timed as it runs (median [min-max]
over every step but the first). It prints the table and, for each LSH row,
its margin over full attention truncated to `--truncated_length`, its gap
to full attention at its own length and full attention's step time over
its own: the issue's targets are >= +5 points, >= -1 point and >= 5x.
Every accuracy comes with its n (test passages) and 95 % Wilson interval,
every margin with Newcombe's 95 % interval (`intervals.py`), and a target
counts as supported only where the whole interval clears it: with a few
dozen test passages one passage moves a row by several points.

The full comparison takes hours on a CPU, so the results file doubles as
the progress record: each row is written as soon as it finishes, and a new
run with the same setting skips recorded rows (a row started but never
finished, e.g. killed for memory, is retried `--max_attempts` times in
all). A different setting in an existing file is refused (--restart
discards it). `--recompute_intervals` adds the intervals to a file recorded
before they were computed, from its rows' accuracy and n, training nothing.

    python benchmarks/long_document_quality.py            # everything (hours)
    python benchmarks/long_document_quality.py --rows full-512 lsh1-2048
    python benchmarks/long_document_quality.py --document_length 64 --rows full-32 full-64 lsh1-64 \\
        --truncated_length 32 --lsh_chunk_length 16 --max_passages_per_class 4 --epochs 1 \\
        --output /tmp/long_documents.json                 # a smoke run
"""

import argparse
import datetime
import gc
import json
import os
import pathlib
import re
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "long_document_quality.json"
DEFAULT_ROWS = ("full-128", "full-512", "full-1024", "full-2048", "lsh1-2048", "lsh4-2048")
ROW = re.compile(r"^(full|tfidf|lsh([1-9][0-9]*))-([0-9]+)$")
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


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--preset", default="albert_tiny_en")
    parser.add_argument("--document_length", type=int, default=2048,
                        help="passages fill this many positions (with [CLS] and [SEP])")
    parser.add_argument("--rows", nargs="+", type=parse_row, default=[parse_row(r) for r in DEFAULT_ROWS],
                        metavar="KIND-LENGTH",
                        help=f"models to run (default: {' '.join(DEFAULT_ROWS)}); "
                        "a tfidf row runs at every length named")
    parser.add_argument("--truncated_length", type=int, default=512,
                        help="the truncation baseline each LSH row is compared with (full-L)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--patience", type=int, default=2)
    parser.add_argument("--head_warm_start", action="store_true",
                        help="fit the head on the frozen model's features first (linear probe, then "
                             "fine-tuning); the probe counts as epoch 0")
    parser.add_argument("--lsh_chunk_length", type=int, default=64)
    parser.add_argument("--lsh_num_buckets", type=int, default=0,
                        help="0: 2 * length / chunk length (Reformer's choice)")
    parser.add_argument("--lsh_chunks_after", type=int, default=1)
    parser.add_argument("--pooling", choices=("mean", "cls"), default="mean",
                        help="what the classifier head reads: the mean of the token outputs or [CLS]")
    parser.add_argument("--train_shifts", type=int, default=1,
                        help="cut the training chapters this many times, shifted: overlapping passages")
    parser.add_argument("--max_passages_per_class", type=int, default=0,
                        help="0: every passage; else a seeded sample per novel and split")
    parser.add_argument("--keep_names", action="store_true",
                        help="keep proper nouns (masked by default: names give a novel away)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max_hours_per_row", type=float, default=0.0,
                        help="skip a model whose projected fine-tuning time exceeds this (0: no limit)")
    parser.add_argument("--max_attempts", type=int, default=2,
                        help="runs of a row that never finished before it is left out")
    parser.add_argument("--restart", action="store_true", help="discard rows recorded in --output")
    parser.add_argument("--recompute_intervals", action="store_true",
                        help="only add n and 95 %% intervals to the rows recorded in --output")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)
    for flag in ("document_length", "truncated_length"):
        if getattr(args, flag) < 8:
            parser.error(f"--{flag} must be >= 8 (received {getattr(args, flag)})")
    for flag in ("epochs", "batch_size", "patience", "lsh_chunk_length", "train_shifts", "max_attempts"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag} must be >= 1 (received {getattr(args, flag)})")
    for flag in ("lsh_num_buckets", "lsh_chunks_after", "max_passages_per_class", "seed"):
        if getattr(args, flag) < 0:
            parser.error(f"--{flag} must be >= 0 (received {getattr(args, flag)})")
    if args.learning_rate <= 0:
        parser.error(f"--learning_rate must be > 0 (received {args.learning_rate})")
    if args.max_hours_per_row < 0:
        parser.error(f"--max_hours_per_row must be >= 0 (received {args.max_hours_per_row})")
    for kind, _, length in args.rows:
        if not 8 <= length <= args.document_length:
            parser.error(f"row {kind}-{length}: the length must be in [8, --document_length "
                         f"{args.document_length}]; a longer model would read nothing more")
    return args


def setting_of(args):
    """What recorded rows depend on: a resumed run must match it."""
    return {
        "preset": args.preset,
        "document_length": args.document_length,
        "seed": args.seed,
        "train_shifts": args.train_shifts,
        "max_passages_per_class": args.max_passages_per_class,
        "names_masked": not args.keep_names,
        "recipe": {"epochs": args.epochs, "learning_rate": args.learning_rate,
                   "batch_size": args.batch_size, "patience": args.patience,
                   "head_warm_start": args.head_warm_start},
        "lsh": {"chunk_length": args.lsh_chunk_length, "num_buckets": args.lsh_num_buckets,
                "num_chunks_after": args.lsh_chunks_after},
        "pooling": args.pooling,
    }


def row_names(args):
    """TF-IDF at every length first (seconds each), then the models in order."""
    names = [f"tfidf-{length}" for length in sorted({length for _, _, length in args.rows})]
    for kind, hashes, length in args.rows:
        name = f"{kind}-{length}" if kind != "lsh" else f"lsh{hashes}-{length}"
        if name not in names:
            names.append(name)
    return names


def model_settings(name, args):
    from keras_albert.pipelines.long_documents import LongDocumentSettings
    from keras_albert.pipelines.long_documents import long_document_recipe

    kind, hashes, length = parse_row(name)
    return LongDocumentSettings(
        sequence_length=length, attention=kind, preset=args.preset,
        recipe=long_document_recipe(epochs=args.epochs, learning_rate=args.learning_rate,
                                    batch_size=args.batch_size, patience=args.patience,
                                    head_warm_start=args.head_warm_start),
        lsh_num_hashes=hashes or 1, lsh_chunk_length=args.lsh_chunk_length,
        lsh_num_buckets=args.lsh_num_buckets, lsh_num_chunks_after=args.lsh_chunks_after,
        pooling=args.pooling, seed=args.seed, max_hours=args.max_hours_per_row,
    ).check()


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


def compare(rows, truncated_length):
    """Each LSH row against truncated full attention and full at its length,
    with n and 95 % intervals for every accuracy and margin."""
    from intervals import accuracy_with_interval
    from intervals import points_with_interval

    done = {name: row for name, row in rows.items() if row.get("status") == "done"}
    timed = {name: row for name, row in rows.items() if row.get("step_seconds")}

    def margin(row, peer):
        return points_with_interval(row["accuracy"], row["test_passages"],
                                    peer["accuracy"], peer["test_passages"])

    comparison = {
        "accuracy_95": {
            name: accuracy_with_interval(row["accuracy"], row["test_passages"])
            for name, row in sorted(done.items())
        },
        "full_accuracy_by_length": {
            str(row["sequence_length"]): row["accuracy"]
            for row in sorted(done.values(), key=lambda r: r["sequence_length"]) if row["model"] == "full"
        },
        "tfidf_accuracy_by_length": {
            str(row["sequence_length"]): row["accuracy"]
            for row in sorted(done.values(), key=lambda r: r["sequence_length"]) if row["model"] == "tfidf"
        },
        "lsh": {},
    }
    truncated = done.get(f"full-{truncated_length}")
    # Margins the README reads: every model row over truncation, and TF-IDF
    # over every model row reading the same pieces.
    pairs = [(name, f"full-{truncated_length}") for name, row in done.items()
             if row["model"] != "tfidf" and truncated and row is not truncated]
    pairs += [(f"tfidf-{row['sequence_length']}", name) for name, row in done.items()
              if row["model"] != "tfidf" and f"tfidf-{row['sequence_length']}" in done]
    comparison["margins_95"] = {
        f"{a} minus {b}": margin(done[a], done[b]) for a, b in sorted(pairs)}
    for name, row in timed.items():
        if row["model"] != "lsh":
            continue
        length = row["sequence_length"]
        entry, targets = {}, {}
        supported = {}
        if name in done and truncated:
            points = round(100 * (row["accuracy"] - truncated["accuracy"]), 2)
            entry[f"minus_full_{truncated_length}_points"] = points
            entry[f"minus_full_{truncated_length}_95"] = margin(row, truncated)["newcombe_95_points"]
            target = f"beats_full_{truncated_length}_by_{TARGET_POINTS_OVER_TRUNCATED:g}_points"
            targets[target] = points >= TARGET_POINTS_OVER_TRUNCATED
            supported[target] = (entry[f"minus_full_{truncated_length}_95"][0]
                                 >= TARGET_POINTS_OVER_TRUNCATED)
        same = f"full-{length}"
        if name in done and same in done:
            points = round(100 * (row["accuracy"] - done[same]["accuracy"]), 2)
            entry["minus_full_same_length_points"] = points
            entry["minus_full_same_length_95"] = margin(row, done[same])["newcombe_95_points"]
            target = f"at_most_{TARGET_POINTS_BELOW_FULL:g}_point_below_full"
            targets[target] = points >= -TARGET_POINTS_BELOW_FULL
            supported[target] = entry["minus_full_same_length_95"][0] >= -TARGET_POINTS_BELOW_FULL
        if same in timed:
            ratio = timed[same]["step_seconds"]["median"] / row["step_seconds"]["median"]
            entry["full_over_lsh_step_time"] = round(ratio, 2)
            targets[f"step_{TARGET_STEP_SPEEDUP:g}x_faster"] = ratio >= TARGET_STEP_SPEEDUP
        entry["targets"] = targets
        # Met with the whole 95 % interval on the right side of the target.
        entry["targets_supported_by_interval"] = supported
        comparison["lsh"][name] = entry
    return comparison


def print_table(rows, names, comparison, truncated_length):
    print(f"\n{'row':<12} {'accuracy [95 %]':>22} {'n':>4} {'macro-F1':>9} "
          f"{'step s: median [min-max]':>26} {'train min':>10} {'epochs':>7}  status")
    for name in names:
        row = rows.get(name)
        if row is None:
            print(f"{name:<12} {'':>22} {'':>4} {'':>9} {'':>26} {'':>10} {'':>7}  not run")
            continue
        interval = comparison["accuracy_95"].get(name)
        accuracy = (f"{100 * row['accuracy']:.1f}% [{100 * interval['wilson_95'][0]:.1f}-"
                    f"{100 * interval['wilson_95'][1]:.1f}]" if interval else "")
        n = interval["n"] if interval else ""
        macro_f1 = f"{row['macro_f1']:.3f}" if "macro_f1" in row else ""
        step = row.get("step_seconds")
        step = f"{step['median']:.3f} [{step['min']:.3f}-{step['max']:.3f}]" if step else ""
        minutes = f"{row['fine_tune_seconds'] / 60:.1f}" if "fine_tune_seconds" in row else ""
        status = row.get("status", "")
        if status == "over_time_budget":
            status += f" (projected {row['projected_hours']} h)"
        print(f"{name:<12} {accuracy:>22} {n:>4} {macro_f1:>9} {step:>26} {minutes:>10} "
              f"{row.get('epochs_run', ''):>7}  {status}")
    for name, entry in comparison["lsh"].items():
        parts = []
        key = f"minus_full_{truncated_length}_points"
        if key in entry:
            low, high = entry[f"minus_full_{truncated_length}_95"]
            parts.append(f"{entry[key]:+.1f} [{low:+.1f} to {high:+.1f}] points vs "
                         f"full-{truncated_length} (target >= +{TARGET_POINTS_OVER_TRUNCATED:g})")
        if "minus_full_same_length_points" in entry:
            low, high = entry["minus_full_same_length_95"]
            parts.append(f"{entry['minus_full_same_length_points']:+.1f} [{low:+.1f} to {high:+.1f}] "
                         f"points vs full at its length (target >= -{TARGET_POINTS_BELOW_FULL:g})")
        if "full_over_lsh_step_time" in entry:
            parts.append(f"full's step time {entry['full_over_lsh_step_time']:.2f}x its own "
                         f"(target >= {TARGET_STEP_SPEEDUP:g}x)")
        met, supported = entry["targets"], entry["targets_supported_by_interval"]
        summary = (f"; targets met {sum(met.values())}/{len(met)}, supported by the 95 % intervals "
                   f"{sum(supported.values())}/{len(supported)}" if met else "")
        print(f"{name}: " + ("; ".join(parts) or "no peer row recorded yet") + summary)


def record(output, setting, task, rows, comparison, argv):
    from recording import write_result

    return write_result(output, {
        "setting": setting, "task": task.describe(), "rows": rows, "comparison": comparison,
        "targets": {
            "lsh_minus_full_truncated_points": TARGET_POINTS_OVER_TRUNCATED,
            "lsh_minus_full_same_length_points": -TARGET_POINTS_BELOW_FULL,
            "full_over_lsh_step_time": TARGET_STEP_SPEEDUP,
        },
    }, argv=[os.path.abspath(__file__), *argv])


def recompute_intervals(output, truncated_length):
    """Adds n and the 95 % intervals to the comparison recorded in `output`,
    from its rows' accuracy and n; its command, date and machine stay those
    of the runs, and the recomputation is noted beside them."""
    from keras_albert.utils.atomic_file import write_file_atomically

    recorded = json.loads(output.read_text())
    recorded["comparison"] = compare(recorded["rows"], truncated_length)
    recorded["intervals_recomputed"] = {
        "date": now(),
        "command": "python benchmarks/long_document_quality.py --recompute_intervals --output "
                   + os.path.relpath(output.absolute(), pathlib.Path(__file__).resolve().parents[1]),
        "from": "each row's recorded accuracy and test_passages; no model was trained",
    }
    write_file_atomically(output, json.dumps(recorded, indent=2) + "\n", name="--output")
    print(f"wrote {output}", flush=True)
    return recorded


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    output = pathlib.Path(args.output)
    if args.recompute_intervals:
        recorded = recompute_intervals(output, args.truncated_length)
        rows = recorded["rows"]
        print_table(rows, list(rows), recorded["comparison"], args.truncated_length)
        return rows, recorded["comparison"]
    names = row_names(args)
    setting = setting_of(args)
    rows = load_rows(output, setting, args.restart)

    from keras_albert.utils.atomic_file import check_writable_directory

    check_writable_directory(output.parent, name="--output")
    # Every model's settings checked before the first long step.
    settings = {}
    for name in names:
        if not name.startswith("tfidf"):
            try:
                settings[name] = model_settings(name, args)
            except ValueError as error:
                raise SystemExit(f"row {name}: {error}") from None

    import keras

    from keras_albert.pipelines.long_documents import long_document_task
    from keras_albert.pipelines.long_documents import run_long_document_row
    from keras_albert.pipelines.long_documents import tfidf_long_document_row

    task = long_document_task(args.preset, args.document_length, seed=args.seed,
                              train_shifts=args.train_shifts,
                              max_passages_per_class=args.max_passages_per_class or None,
                              names_masked=not args.keep_names)
    print(f"task: {json.dumps(task.counts())}", flush=True)
    command = " ".join(["python", "benchmarks/long_document_quality.py", *argv])
    for name in names:
        previous = rows.get(name, {})
        if previous.get("status") == "over_time_budget" and (
                not args.max_hours_per_row or args.max_hours_per_row > previous["max_hours"]):
            print(f"{name}: over {previous['max_hours']} h before; the budget is larger now, "
                  "running it", flush=True)
            previous = {}
        if previous.get("status") in ("done", "over_time_budget"):
            print(f"{name}: recorded {previous.get('finished', '')}, kept", flush=True)
            continue
        attempts = previous.get("attempts", 0)
        if attempts >= args.max_attempts:
            print(f"{name}: started {attempts} times and never finished (killed? out of memory?); "
                  "left out (raise --max_attempts to try again)", flush=True)
            continue
        if attempts:
            print(f"{name}: an earlier run started it and did not finish; retrying", flush=True)
        rows[name] = {"status": "started", "attempts": attempts + 1, "started": now(), "command": command}
        record(output, setting, task, rows, compare(rows, args.truncated_length), argv)
        print(f"\n== {name} ==", flush=True)
        if name.startswith("tfidf"):
            row = tfidf_long_document_row(task, parse_row(name)[2])
        else:
            row = run_long_document_row(task, settings[name])
            keras.backend.clear_session()
            gc.collect()
        # Other jobs on the machine move step times: keep the load beside them.
        row.update(attempts=attempts + 1, started=rows[name]["started"], finished=now(), command=command,
                   load_average_1_5_15_min=[round(value, 2) for value in os.getloadavg()])
        rows[name] = row
        comparison = compare(rows, args.truncated_length)
        record(output, setting, task, rows, comparison, argv)
        print(json.dumps(row), flush=True)
    comparison = compare(rows, args.truncated_length)
    print_table(rows, names + sorted(set(rows) - set(names)), comparison, args.truncated_length)
    return rows, comparison


if __name__ == "__main__":
    main()
