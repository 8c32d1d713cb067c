"""Argument checks with messages that name the argument, value and range."""

import math


def check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"`{name}` must be a positive integer. Received: {name}={value!r}"
        )


def check_rate(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"`{name}` must be a float in [0, 1). Received: {name}={value!r}"
        )
    if not 0.0 <= value < 1.0:
        raise ValueError(
            f"`{name}` must be a float in [0, 1). Received: {name}={value!r}"
        )


def _is_number(value):
    return not isinstance(value, bool) and isinstance(value, (int, float))


def check_fraction(name, value):
    """A number in [0, 1], both ends included (a mixing weight)."""
    if not _is_number(value) or not 0 <= value <= 1:
        raise ValueError(f"`{name}` must be a float in [0, 1]. Received: {name}={value!r}")


def check_positive_number(name, value):
    if not _is_number(value) or not value > 0:
        raise ValueError(f"`{name}` must be a float > 0. Received: {name}={value!r}")


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(
            f"`{name}` must be one of {tuple(choices)}. Received: {name}={value!r}"
        )


def check_divisible(name, value, divisor_name, divisor):
    if value % divisor != 0:
        raise ValueError(
            f"`{name}` must be divisible by `{divisor_name}`. Received: "
            f"{name}={value}, {divisor_name}={divisor}"
        )


def check_sequence_fits(token_ids, max_sequence_length):
    """Inputs may not be longer than the learned positions (static shapes)."""
    length = token_ids.shape[-1]
    if length is not None and length > max_sequence_length:
        raise ValueError(
            f"Input sequence length {length} exceeds "
            f"`max_sequence_length={max_sequence_length}` of this model. "
            "Truncate the inputs (the preprocessors do this with their "
            "`sequence_length`) or give the backbone more positions: "
            f"`keras_albert.extend_positions(backbone, max_sequence_length={length})`."
        )


def check_non_negative_int(name, value):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"`{name}` must be a non-negative integer. Received: {name}={value!r}"
        )


def check_finite_number(name, value, minimum=0.0, strictly_greater=False):
    """A finite number >= `minimum` (> with `strictly_greater`); as float."""
    valid = _is_number(value) and math.isfinite(value)
    if valid:
        valid = value > minimum if strictly_greater else value >= minimum
    if not valid:
        relation = ">" if strictly_greater else ">="
        raise ValueError(
            f"`{name}` must be a finite number {relation} {minimum}. "
            f"Received: {name}={value!r}"
        )
    return float(value)


def check_number_in(name, value, low, high, high_inclusive=False):
    """A number in [low, high) ([low, high] with `high_inclusive`); as float."""
    valid = _is_number(value)
    if valid:
        valid = low <= value <= high if high_inclusive else low <= value < high
    if not valid:
        bracket = "]" if high_inclusive else ")"
        raise ValueError(
            f"`{name}` must be a float in [{low}, {high}{bracket}. "
            f"Received: {name}={value!r}"
        )
    return float(value)


def check_sequence_length(sequence_length, minimum=2, maximum=None):
    """An int >= `minimum` (room for [CLS] and [SEP]), at most `maximum`."""
    if (
        isinstance(sequence_length, bool)
        or not isinstance(sequence_length, int)
        or sequence_length < minimum
        or (maximum is not None and sequence_length > maximum)
    ):
        accepted = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        limit = "" if maximum is None else f"; {maximum} is the backbone's maximum"
        raise ValueError(
            f"`sequence_length` must be an int {accepted} (room for [CLS] "
            f"and [SEP]{limit}). Received: sequence_length={sequence_length!r}"
        )
    return sequence_length
