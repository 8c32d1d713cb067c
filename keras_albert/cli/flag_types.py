"""argparse `type=` converters shared by the commands."""


def boolean_flag(text):
    """"true"/"false" (also 1/0, yes/no, on/off) -> bool."""
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")


def add_tensorboard_flags(add, default):
    """--tensorboard=BOOL and its --no_tensorboard spelling (finetune, distill)."""
    add("--tensorboard", type=boolean_flag, default=default,
        help="write TensorBoard logs to OUTPUT/logs (default true)")
    add("--no_tensorboard", dest="tensorboard", action="store_false",
        help="same as --tensorboard=false")
