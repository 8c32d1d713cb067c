"""How many tokens would a staged pretraining take to reach a held-out target?

Chains the stages as tools/plot_pretraining_stages.py does, counts tokens
from the start of one stage (`--origin`, the first stage of the recipe
being judged), and fits held-out accuracy against log2(tokens) by least
squares over the points from `--from_tokens` on. It prints the points
gained per doubling of tokens and where the line reaches each target: a
projection of the measured curve, only as good as the straight line is.

A straight line in log tokens never levels off, so it also fits a curve
that does, `a - b * (tokens / first)^-c` (the saturating power law of
learning curves), and prints its ceiling `a` with one standard error:
when the curve bends below the line, the ceiling says whether more of
the same run can reach the target at all.

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


def saturating_trend(points):
    """`(ceiling, its standard error, b, c)` of y = a - b * (x / x[0])^-c.

    Least squares with a in [0, 1], b >= 0, c in (0, 4]. The first point
    scales x so that b and c stay near 1 whatever the token counts.
    """
    # scipy comes with scikit-learn (the benchmarks extra); only this fit needs it.
    from scipy.optimize import curve_fit

    first = points[0][0]
    x = np.array([tokens / first for tokens, _ in points])
    y = np.array([value for _, value in points])

    def curve(x, a, b, c):
        return a - b * x ** -c

    start = (min(1.0, y.max() + 0.01), max(y.max() - y.min(), 1e-3), 0.5)
    values, covariance = curve_fit(
        curve, x, y, p0=start, bounds=([0, 0, 1e-3], [1, 1, 4]), maxfev=20000
    )
    a, b, c = (float(v) for v in values)
    error = float(np.sqrt(covariance[0, 0])) if np.isfinite(covariance[0, 0]) else math.inf
    return a, error, b, c


def untrustworthy(a, error, b, c):
    """True when the fit stopped near a bound or its ceiling is uncertain by over 10 points."""
    return a > 0.999 or b < 1e-6 or c < 0.01 or c > 3.99 or not error <= 0.10


def saturating_tokens_at(target, first, a, b, c):
    """Where the saturating curve reaches `target`; infinity above its ceiling."""
    if target >= a or b <= 0:
        return math.inf
    return first * (b / (a - target)) ** (1 / c)


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
        a, error, b, c = saturating_trend(points)
        reach = saturating_tokens_at(target, points[0][0], a, b, c)
        where = (f"{target:.0%} at {reach / 1e6:,.0f}M tokens" if math.isfinite(reach)
                 else f"{target:.0%} never")
        caveat = ("; not trustworthy (stopped at a bound, or the ceiling is uncertain by "
                  "over 10 points)" if untrustworthy(a, error, b, c) else "")
        print(f"{key}: saturating fit levels off at {a:.1%} (one standard error "
              f"{error * 100:.1f} points; exponent {c:.2f}); {where}{caveat}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
