"""`labels.txt` beside an export; the format lives in `utils.label_file`
(keras-hub preset conversion reads and writes it too)."""

from keras_albert.utils.label_file import LABELS_FILE  # noqa: F401
from keras_albert.utils.label_file import read_label_file  # noqa: F401
from keras_albert.utils.label_file import write_label_file  # noqa: F401
