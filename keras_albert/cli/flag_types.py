"""argparse `type=` converters shared by the commands."""


def boolean_flag(text):
    """"true"/"false" (also 1/0, yes/no, on/off) -> bool."""
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, got {text!r}")
