"""Where the bundled corpora live and how to read them."""

import lzma
import pathlib

DATA_DIR = pathlib.Path(__file__).resolve().parent / "data"


def read_bundled_text(filename):
    """Returns the decompressed UTF-8 text of `data/<filename>`."""
    path = DATA_DIR / filename
    if not path.is_file():
        raise FileNotFoundError(
            f"Bundled data file {str(path)!r} is missing; the keras_albert "
            "installation is incomplete (package data not installed)."
        )
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        return handle.read()
