"""`labels.txt`: a classifier's class names beside an export, one per line,
line i naming class id i (the format TF-Hub and TF Lite metadata use for
label maps). keras-hub presets carry them the same way: keras-hub's
classifier has no class names and its loader never opens the file."""

import pathlib

LABELS_FILE = "labels.txt"


def write_label_file(directory, label_names):
    """Writes `directory/labels.txt`; returns its path."""
    path = pathlib.Path(directory) / LABELS_FILE
    path.write_text("".join(f"{name}\n" for name in label_names), encoding="utf-8")
    return path


def read_label_file(directory):
    """The names in `directory/labels.txt`, or None without the file."""
    path = pathlib.Path(directory) / LABELS_FILE
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8").splitlines()
