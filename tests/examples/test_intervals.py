"""benchmarks/intervals.py against published values (Newcombe 1998)."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))

import intervals  # noqa: E402


def test_wilson_interval_matches_newcombe_1998():
    # Newcombe (1998), "Two-sided confidence intervals for the single
    # proportion", example 81/263: 0.2553 to 0.3662.
    low, high = intervals.wilson_interval(81, 263)
    assert round(low, 4) == 0.2553 and round(high, 4) == 0.3662


def test_difference_interval_matches_newcombe_1998():
    # Newcombe (1998), "Interval estimation for the difference between
    # independent proportions", example 56/70 - 48/80, method 10: 0.0524 to 0.3339.
    low, high = intervals.difference_interval(56, 70, 48, 80)
    assert round(low, 4) == 0.0524 and round(high, 4) == 0.3339


def test_records_in_points_and_counts():
    assert intervals.accuracy_with_interval(21 / 26, 26) == {
        "n": 26, "correct": 21, "accuracy": 21 / 26, "wilson_95": [0.6212, 0.9149]}
    equal = intervals.points_with_interval(21 / 26, 26, 21 / 26, 26)
    assert equal["points"] == 0.0 and equal["newcombe_95_points"][0] == -equal["newcombe_95_points"][1]


def test_an_accuracy_that_is_no_count_is_refused():
    with pytest.raises(ValueError, match="accuracy=0.5003 is no count out of n=26"):
        intervals.correct_count(0.5003, 26)
