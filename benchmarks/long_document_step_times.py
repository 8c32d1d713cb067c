"""Training step time of each long-document model, timed back to back in one process.

`long_document_quality.py` records the step time of every (row, seed) it
fine-tunes, but one (row, seed) takes hours on 2 cores, so its runs span
sessions and machines: an epoch of full-2048 took nearly twice as long
for seed 1, on one session's machine, as for seed 0 on another's (of the
same kind). Step times recorded on different machines do not compare. This script builds each row's model
(the protocol's construction, `long_document_classifier`) and times the
same fine-tuning steps, on the same training passages, in rounds that
take the rows in turn, so a change in the machine's load reaches every
row alike. The README's speed ratios between rows come from here; quality
stays with the protocol.

What a step is: one `fit` step of batch --batch_size on raw passages
(the preprocessor included), as in the protocol; the first step of each
model traces it and is not counted. Each row's figure is the median over
every timed step of every round; `full_over` is full attention's median
over each LSH row's at the same length.

    python benchmarks/long_document_step_times.py        # full, LSH-1 and LSH-4 at 2,048
    python benchmarks/long_document_step_times.py --document_length 64 --rows full-64 lsh1-64 \\
        --lsh_chunk_length 16 --steps 2 --rounds 1 --output /tmp/step_times.json   # a smoke run
"""

import argparse
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from long_document_quality import parse_row  # noqa: E402  (after the path is set)
from long_document_quality import task_parser  # noqa: E402

RESULTS = pathlib.Path(__file__).resolve().parent / "results" / "long_document_step_times.json"
DEFAULT_ROWS = ("full-2048", "lsh1-2048", "lsh4-2048")


def model_row(name):
    """argparse type: a full or LSH row ('lsh4-2048'), not TF-IDF."""
    kind, _, _ = parse_row(name)
    if kind == "tfidf":
        raise argparse.ArgumentTypeError(f"row {name!r}: only full and lshN rows train steps")
    return name


def parse_args(argv):
    parser = task_parser(__doc__)
    parser.add_argument("--rows", nargs="+", type=model_row, default=list(DEFAULT_ROWS), metavar="KIND-LENGTH")
    parser.add_argument("--steps", type=int, default=8, help="timed steps per row and round")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the rows, in turn")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args(argv)
    for flag in ("steps", "rounds", "batch_size", "lsh_chunk_length"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag} must be >= 1 (received {getattr(args, flag)})")
    for flag in ("lsh_num_buckets", "lsh_chunks_after"):
        if getattr(args, flag) < 0:
            parser.error(f"--{flag} must be >= 0 (received {getattr(args, flag)})")
    if len(set(args.rows)) != len(args.rows):
        parser.error(f"--rows must not repeat a row (received {args.rows})")
    for name in args.rows:
        length = parse_row(name)[2]
        if not 8 <= length <= args.document_length:
            parser.error(f"row {name}: the length must be in [8, --document_length {args.document_length}]")
    return args


def settings_of(name, args):
    from keras_albert.pipelines.long_documents import LongDocumentSettings
    from keras_albert.pipelines.long_documents import long_document_recipe

    kind, hashes, length = parse_row(name)
    return LongDocumentSettings(
        sequence_length=length, attention=kind, preset=args.preset,
        recipe=long_document_recipe(batch_size=args.batch_size),
        lsh_num_hashes=hashes or 1, lsh_chunk_length=args.lsh_chunk_length,
        lsh_num_buckets=args.lsh_num_buckets, lsh_num_chunks_after=args.lsh_chunks_after,
    ).check()


def timed_steps(task, settings, steps):
    """Seconds of each of `steps` fine-tuning steps after the first (a list)."""
    import keras

    from keras_albert.pipelines.classifier_fine_tuning import compile_for_recipe
    from keras_albert.pipelines.long_documents import StepTimer
    from keras_albert.pipelines.long_documents import long_document_classifier

    batch = settings.recipe.batch_size
    count = batch * (steps + 1)
    texts = task.texts("train", settings.sequence_length - 2)[:count]
    labels = task.labels("train")[:count]
    if len(texts) < count:
        raise SystemExit(f"{steps} steps of batch {batch} need {count} training passages; the task has "
                         f"{len(texts)}: lower --steps or --batch_size")
    keras.utils.set_random_seed(settings.seed)
    classifier = long_document_classifier(settings, task.num_classes)
    # The protocol's optimizer, so the step is the one it times.
    compile_for_recipe(classifier, settings.recipe, steps + 1)
    timer = StepTimer(steps + 1)
    classifier.fit(texts, labels, batch_size=batch, epochs=1, shuffle=False, verbose=0, callbacks=[timer])
    del classifier
    keras.backend.clear_session()
    return list(timer.seconds)


def summarize(per_round):
    """Each row's spread over all rounds, and full over each LSH row at its length."""
    from keras_albert.pipelines.long_documents import step_spread

    rows = {}
    for name, rounds in per_round.items():
        every = [value for seconds in rounds for value in seconds]
        rows[name] = dict(step_spread(every), round_medians=[round(statistics.median(s), 4) for s in rounds])
    full_over = {}
    for name in rows:
        kind, _, length = parse_row(name)
        full = rows.get(f"full-{length}")
        if kind == "lsh" and full:
            full_over[name] = round(full["median"] / rows[name]["median"], 3)
    return {"rows": rows, "full_over": full_over}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse_args(argv)
    output = pathlib.Path(args.output)

    from keras_albert.utils.atomic_file import check_writable_directory

    check_writable_directory(output.parent, name="--output")
    settings = {name: settings_of(name, args) for name in args.rows}

    from recording import write_result

    from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED
    from keras_albert.pipelines.long_documents import long_document_task

    task = long_document_task(args.preset, args.document_length, seed=LONG_DOCUMENT_SEED)
    per_round = {name: [] for name in args.rows}
    started = time.perf_counter()
    for round_index in range(args.rounds):
        for name in args.rows:
            seconds = timed_steps(task, settings[name], args.steps)
            per_round[name].append(seconds)
            print(f"round {round_index + 1}/{args.rounds}, {name}: median {statistics.median(seconds):.3f} s "
                  f"a step over {len(seconds)} steps", flush=True)
    summary = summarize(per_round)
    for name, ratio in summary["full_over"].items():
        print(f"full-{parse_row(name)[2]} over {name}: {ratio:.2f}x", flush=True)
    write_result(output, {
        "what": ("seconds per fine-tuning step of each long-document model, batch "
                 f"{args.batch_size}, timed in {args.rounds} rounds of {args.steps} steps per row, the "
                 "rows in turn in one process; the first step of each model (tracing) not counted"),
        "preset": args.preset, "document_length": args.document_length,
        "lsh": {"chunk_length": args.lsh_chunk_length, "num_buckets": args.lsh_num_buckets,
                "num_chunks_after": args.lsh_chunks_after},
        "seconds": round(time.perf_counter() - started, 1),
        **summary,
    }, argv=[os.path.abspath(__file__), *argv])
    return summary


if __name__ == "__main__":
    main()
