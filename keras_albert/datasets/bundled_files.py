"""Where the bundled corpora live and how to read them."""

import lzma

from keras_albert.utils.package_resources import open_package_file

# Package data of `keras_albert.datasets`, read through importlib.resources.
DATA_PACKAGE = "keras_albert.datasets"
DATA_FOLDER = "data"


def read_bundled_text(filename):
    """Returns the decompressed UTF-8 text of `data/<filename>`."""
    with open_package_file(DATA_PACKAGE, DATA_FOLDER, filename) as raw:
        with lzma.open(raw, "rt", encoding="utf-8") as handle:
            return handle.read()
