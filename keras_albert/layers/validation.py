"""Argument checks with messages that name the argument, value and range."""


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
