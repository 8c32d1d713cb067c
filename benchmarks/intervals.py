"""95 % intervals for accuracies measured on few test items.

An accuracy on n items is a binomial proportion: its interval is Wilson's
score interval (scipy's `binomtest(...).proportion_ci(method="wilson")`),
which stays inside [0, 1] and keeps its coverage at small n where the
normal approximation does not. The difference of two accuracies gets
Newcombe's hybrid score interval (Newcombe 1998, method 10), built from the
two Wilson intervals; it treats the two as independent samples, which for
two models scored on the same items is conservative (a paired interval needs
each item's prediction, which the records do not keep).
"""

import math

from scipy.stats import binomtest

CONFIDENCE = 0.95


def correct_count(accuracy, n):
    """The number of correct items behind `accuracy` on `n` items (the
    records keep the proportion; it is a whole count divided by n)."""
    correct = round(accuracy * n)
    if abs(correct / n - accuracy) > 1e-6:
        raise ValueError(f"accuracy={accuracy!r} is no count out of n={n!r}")
    return correct


def wilson_interval(correct, n, confidence=CONFIDENCE):
    """(low, high) of the accuracy `correct / n`."""
    interval = binomtest(correct, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(interval.low), float(interval.high)


def difference_interval(correct_a, n_a, correct_b, n_b, confidence=CONFIDENCE):
    """(low, high) of accuracy a minus accuracy b (Newcombe's hybrid score)."""
    p_a, p_b = correct_a / n_a, correct_b / n_b
    low_a, high_a = wilson_interval(correct_a, n_a, confidence)
    low_b, high_b = wilson_interval(correct_b, n_b, confidence)
    difference = p_a - p_b
    return (difference - math.hypot(p_a - low_a, high_b - p_b),
            difference + math.hypot(high_a - p_a, p_b - low_b))


def accuracy_with_interval(accuracy, n):
    """The record of one row: n, correct, accuracy and its interval."""
    correct = correct_count(accuracy, n)
    low, high = wilson_interval(correct, n)
    return {"n": n, "correct": correct, "accuracy": accuracy,
            "wilson_95": [round(low, 4), round(high, 4)]}


def points_with_interval(accuracy_a, n_a, accuracy_b, n_b):
    """a minus b in points, with its 95 % interval in points."""
    low, high = difference_interval(correct_count(accuracy_a, n_a), n_a,
                                    correct_count(accuracy_b, n_b), n_b)
    return {"points": round(100 * (accuracy_a - accuracy_b), 2),
            "newcombe_95_points": [round(100 * low, 2), round(100 * high, 2)]}
