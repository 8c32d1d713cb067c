"""How many tokens would a staged pretraining take to reach a held-out target?

Chains the stages as tools/plot_pretraining_stages.py does, counts tokens
from the start of one stage (`--origin`, the first stage of the recipe
being judged), and fits held-out accuracy against log2(tokens) by least
squares over the points from `--from_tokens` on. It prints the points
gained per doubling of tokens and where the line reaches each target: a
projection of the measured curve, only as good as the straight line is.

    python tools/pretraining_trend.py \\
        --stages_file tools/progress/albert_tiny_en_stages.txt \\
        --stage "v11: fresh pairs=tools/progress/albert_tiny_en_v11/curve.jsonl" \\
        --origin v5 --from_tokens 20e6
"""

import argparse
import math
import sys

import numpy as np
from plot_pretraining_stages import chain_stages
from plot_pretraining_stages import parse_stage
from plot_pretraining_stages import read_stages_file

TARGETS = {"val_mlm_accuracy": 0.35, "val_sentence_order_accuracy": 0.75}


def log_trend(points):
    """`(slope per doubling, intercept)` of y = intercept + slope * log2(x)."""
    x = np.log2([tokens for tokens, _ in points])
    y = np.array([value for _, value in points])
    slope, intercept = np.polyfit(x, y, 1)
    return float(slope), float(intercept)


def tokens_at(target, slope, intercept):
    """Where the line reaches `target`; infinity if it does not rise."""
    if slope <= 0:
        return math.inf
    return 2.0 ** ((target - intercept) / slope)


def trend_points(rows, marks, origin, from_tokens, key):
    """`(tokens since origin, value)` of `key` from `from_tokens` on."""
    starts = [tokens for tokens, label in marks if label.startswith(origin)]
    if not starts:
        raise ValueError(
            f"`--origin` must start one stage's label; labels: {[label for _, label in marks]}. "
            f"Received: --origin={origin!r}"
        )
    start = starts[0]
    points = [(row["tokens"] - start, row[key]) for row in rows
              if key in row and row["tokens"] - start >= max(from_tokens, 1)]
    if len(points) < 3:
        raise ValueError(
            f"{len(points)} points of {key} lie {from_tokens:,.0f} or more tokens after "
            f"{origin!r}; a trend needs at least 3."
        )
    return points


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", action="append", default=[], help="LABEL=PATH[@STEP]")
    parser.add_argument("--stages_file", help="stages one per line, before any --stage")
    parser.add_argument("--origin", required=True, help="the stage (label prefix) tokens count from")
    parser.add_argument("--from_tokens", type=float, default=0.0,
                        help="fit the points at least this many tokens after the origin")
    args = parser.parse_args(argv)
    specs = (read_stages_file(args.stages_file) if args.stages_file else []) + args.stage
    rows, marks = chain_stages([parse_stage(spec) for spec in specs])
    for key, target in TARGETS.items():
        points = trend_points(rows, marks, args.origin, args.from_tokens, key)
        slope, intercept = log_trend(points)
        reach = tokens_at(target, slope, intercept)
        last = points[-1][0]
        where = (f"{target:.0%} at {reach / 1e6:,.0f}M tokens, {reach / last:.1f}x the "
                 f"{last / 1e6:,.0f}M so far" if math.isfinite(reach) else f"{target:.0%} never")
        print(f"{key}: {slope * 100:+.2f} points per doubling over {len(points)} points; {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
