"""Plots a preset's pretraining across its continued runs, on one token axis.

A preset built in stages (each `pretrain --init_preset` run continuing the
last one's preset) leaves one `curve.jsonl` per run, each counting steps and
tokens from its own start. This chains them: every stage's tokens are offset
by the tokens of the stages before it, and a dotted line marks where each
stage began. A stage with no path (word-level distillation, say, which has
no masked-LM curve) is marked without adding tokens.

Each stage is `LABEL=PATH` or `LABEL=PATH@STEP` (keep the rows up to STEP,
the checkpoint a later stage started from), given as `--stage` values or
one per line of a `--stages_file`. The bundled `albert_tiny_en`'s figure:

    python tools/plot_pretraining_stages.py \\
        --stages_file tools/progress/albert_tiny_en_stages.txt \\
        --output keras_albert/presets/albert_tiny_en/pretraining_curve.png \\
        --title "albert_tiny_en: masked-LM + SOP pretraining, stage by stage (held-out: Persuasion)"

Paths are relative to the working directory (the repository's root here).
"""

import argparse
import pathlib
import sys

from keras_albert.pipelines.training_curves import plot_pretraining_curve
from keras_albert.training.curve_log import read_curve

# The figure shows masked-LM and sentence order only: a stage's extra
# targets (the teacher's sentence embedding) are not part of the lineage.
KEPT = ("step", "tokens", "mlm_accuracy", "val_mlm_accuracy",
        "sentence_order_accuracy", "val_sentence_order_accuracy")


def parse_stage(spec):
    """`(label, path or None, last step or None)` of one `--stage` value."""
    label, separator, where = spec.rpartition("=")
    if not separator or not label.strip():
        raise ValueError(
            f"`--stage` must be LABEL=PATH, LABEL=PATH@STEP or LABEL= (a stage with "
            f"no curve). Received: --stage={spec!r}"
        )
    if not where:
        return label.strip(), None, None
    path, at, step = where.partition("@")
    if at and not step.isdigit():
        raise ValueError(
            f"`--stage` STEP must be a whole number of steps. Received: --stage={spec!r}"
        )
    return label.strip(), pathlib.Path(path), int(step) if at else None


def stage_rows(path, last_step=None):
    """The rows of one run's curve.jsonl, up to `last_step` if given."""
    if not path.is_file():
        raise ValueError(f"`--stage` names {path}, which is not a file.")
    rows = read_curve(path)  # skips a line cut short by a kill; one row a step
    if not rows:
        raise ValueError(f"`--stage` names {path}, which holds no curve rows.")
    if last_step is not None:
        steps = [row["step"] for row in rows]
        if last_step not in steps:
            raise ValueError(
                f"`--stage` asks for {path} up to step {last_step}; its checkpoints "
                f"are at steps {steps}."
            )
        rows = [row for row in rows if row["step"] <= last_step]
    return rows


def read_stages_file(path):
    """The stage specs of a file, one per line; blank lines are skipped."""
    return [line.strip() for line in pathlib.Path(path).read_text().splitlines() if line.strip()]


def chain_stages(stages):
    """`(rows, marks)`: every stage's rows on one token axis, and the
    `(tokens, label)` where each stage begins."""
    rows, marks, offset = [], [], 0
    for label, path, last_step in stages:
        marks.append((offset, label))
        if path is None:
            continue
        kept = stage_rows(path, last_step)
        for row in kept:
            rows.append({**{k: row[k] for k in KEPT if k in row}, "tokens": row["tokens"] + offset})
        offset += kept[-1]["tokens"]
    return rows, marks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", action="append", default=[],
                        help="LABEL=PATH[@STEP] or LABEL= ; in order, first to last")
    parser.add_argument("--stages_file", help="stages one per line, before any --stage")
    parser.add_argument("--output", required=True, help="the PNG to write")
    parser.add_argument("--title", default="pretraining, stage by stage")
    args = parser.parse_args(argv)
    specs = read_stages_file(args.stages_file) if args.stages_file else []
    specs += args.stage
    if not specs:
        parser.error("give the stages: --stages_file FILE or --stage LABEL=PATH[@STEP] ...")
    rows, marks = chain_stages([parse_stage(spec) for spec in specs])
    if plot_pretraining_curve(rows, args.output, title=args.title, stages=marks) is None:
        return 1
    last = rows[-1]
    print(f"wrote {args.output}: {len(marks)} stages, {last['tokens'] / 1e6:.1f}M tokens; "
          f"last held-out MLM {last.get('val_mlm_accuracy', float('nan')):.1%}, "
          f"SOP {last.get('val_sentence_order_accuracy', float('nan')):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
