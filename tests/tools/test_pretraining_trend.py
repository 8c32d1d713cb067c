"""tools/pretraining_trend.py: a log-token trend of held-out accuracy across stages."""

import json
import math
import pathlib
import sys

import pytest

from tests.scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # the tool imports its sibling as a script does
trend_tool = load_script("tools/pretraining_trend.py")


def _curve(path, tokens_per_step, steps, mlm, sop):
    rows = [{"step": s, "tokens": s * tokens_per_step, "val_mlm_accuracy": m,
             "val_sentence_order_accuracy": o} for s, m, o in zip(steps, mlm, sop)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def test_an_exact_log_line_is_recovered_and_projected():
    points = [(t, 0.10 + 0.02 * math.log2(t)) for t in (1e6, 2e6, 4e6, 8e6)]
    slope, intercept = trend_tool.log_trend(points)
    assert slope == pytest.approx(0.02) and intercept == pytest.approx(0.10)
    # 0.10 + 0.02 * log2(t) = 0.50 at t = 2**20.
    assert trend_tool.tokens_at(0.50, slope, intercept) == pytest.approx(2.0 ** 20)
    assert trend_tool.tokens_at(0.50, -0.01, intercept) == math.inf


def test_tokens_count_from_the_origin_stage(tmp_path, capsys):
    # Stage "early" adds 1,000 tokens that the trend must not count; from the
    # origin on, MLM = 0.01 * log2(tokens since origin) and SOP falls.
    early = _curve(tmp_path / "early.jsonl", 100, [10], [0.9], [0.9])
    steps = [1, 2, 4, 8, 16]
    later = _curve(tmp_path / "later.jsonl", 1000, steps,
                   [0.01 * math.log2(s * 1000) for s in steps], [0.62, 0.61, 0.60, 0.59, 0.58])
    assert trend_tool.main(["--stage", f"early={early}", "--stage", f"origin run={later}",
                            "--origin", "origin"]) == 0
    out = capsys.readouterr().out
    assert "val_mlm_accuracy: +1.00 points per doubling over 5 points" in out
    assert "val_sentence_order_accuracy: -1.00 points per doubling over 5 points; 75% never" in out


def test_bad_origin_and_too_few_points_are_refused(tmp_path):
    curve = _curve(tmp_path / "a.jsonl", 10, [1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4], [0.5] * 4)
    with pytest.raises(ValueError, match=r"`--origin` must start one stage's label.*Received: --origin='v9'"):
        trend_tool.main(["--stage", f"v5 run={curve}", "--origin", "v9"])
    with pytest.raises(ValueError, match="a trend needs at least 3"):
        trend_tool.main(["--stage", f"v5 run={curve}", "--origin", "v5", "--from_tokens", "30"])


def test_a_saturating_curve_is_recovered_with_its_ceiling():
    # 0.40 - 0.20 * x^-0.5 over x = 1..64 (tokens scaled by the first point).
    points = [(1e6 * x, 0.40 - 0.20 * x ** -0.5) for x in (1, 2, 4, 8, 16, 32, 64)]
    a, error, b, c = trend_tool.saturating_trend(points)
    assert (a, b, c) == (pytest.approx(0.40, abs=1e-4), pytest.approx(0.20, abs=1e-4),
                         pytest.approx(0.5, abs=1e-3))
    assert error < 1e-3
    # 0.40 - 0.20 * x^-0.5 = 0.35 at x = 16.
    assert trend_tool.saturating_tokens_at(0.35, 1e6, a, b, c) == pytest.approx(16e6, rel=1e-2)
    assert trend_tool.saturating_tokens_at(0.45, 1e6, a, b, c) == math.inf


def test_the_printout_gives_the_ceiling_and_refuses_a_target_above_it(tmp_path, capsys):
    steps = [1, 2, 4, 8, 16, 32]
    curve = _curve(tmp_path / "c.jsonl", 1000, steps,
                   [0.30 - 0.10 * s ** -0.7 for s in steps], [0.62, 0.61, 0.63, 0.62, 0.61, 0.62])
    assert trend_tool.main(["--stage", f"v5 run={curve}", "--origin", "v5"]) == 0
    out = capsys.readouterr().out
    assert "val_mlm_accuracy: saturating fit levels off at 30.0% (one standard error 0.0 points; exponent 0.70); 35% never\n" in out


def test_a_fit_stopped_at_a_bound_is_flagged(tmp_path, capsys):
    # Falling SOP: the best saturating curve is flat (b = 0), its ceiling meaningless.
    steps = [1, 2, 4, 8, 16]
    curve = _curve(tmp_path / "d.jsonl", 1000, steps, [0.1, 0.2, 0.25, 0.28, 0.29],
                   [0.66, 0.64, 0.62, 0.60, 0.58])
    assert trend_tool.main(["--stage", f"v5 run={curve}", "--origin", "v5"]) == 0
    sop = [line for line in capsys.readouterr().out.splitlines()
           if line.startswith("val_sentence_order_accuracy: saturating")]
    assert sop and sop[0].endswith("not trustworthy (stopped at a bound, or the ceiling is uncertain by over 10 points)")
