"""`labels.txt`: a classifier's class names beside an export, one per line,
line i naming class id i (the format TF-Hub and TF Lite metadata use for
label maps). keras-hub presets carry them the same way: keras-hub's
classifier has no class names and its loader never opens the file."""

import pathlib
import unicodedata

LABELS_FILE = "labels.txt"
# Where `str.splitlines` (and most readers of labels.txt) end a line.
_LINE_ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Control characters have no Unicode name.
_NAMES = {"\n": "a line feed", "\r": "a carriage return", "\t": "a tab", "\x0b": "a vertical tab",
          "\x0c": "a form feed", "\x85": "a next-line character", "\x00": "a NUL character"}


def _unprintable(label):
    for character in label:
        if character in _LINE_ENDS or unicodedata.category(character) == "Cc":
            return character
    return None


def check_label_lines(label_names, name="label_names"):
    """Refuses class names that would not stay one line of labels.txt: line
    or paragraph separators and control characters. Returns the names."""
    for index, label in enumerate(label_names):
        character = _unprintable(label) if isinstance(label, str) else None
        if character is not None:
            what = _NAMES.get(character) or unicodedata.name(character, "a control character")
            raise ValueError(
                f"`{name}` holds {label!r} (class {index}), which contains {what} "
                f"(U+{ord(character):04X}). labels.txt holds one class name per line, so a "
                "class name cannot contain line or paragraph separators or control "
                "characters. Rename that class."
            )
    return label_names


def write_label_file(directory, label_names):
    """Writes `directory/labels.txt`; returns its path."""
    check_label_lines(label_names)
    path = pathlib.Path(directory) / LABELS_FILE
    path.write_text("".join(f"{name}\n" for name in label_names), encoding="utf-8")
    return path


def read_label_file(directory):
    """The names in `directory/labels.txt`, or None without the file.

    Lines end at "\\n" only (a CRLF file's "\\r" is dropped); a name holding
    any other line break or control character is refused, by file name."""
    path = pathlib.Path(directory) / LABELS_FILE
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return check_label_lines([line.removesuffix("\r") for line in lines], str(path))
