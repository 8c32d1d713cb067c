"""keras-hub's `AlbertTextClassifier` <-> our `AlbertClassifier`, head included.

Both heads are the same: pooled output -> Dropout -> Dense named "logits".
Only the Dense holds weights, so the head maps one to one. keras-hub's
classifier has no class names; they travel in `labels.txt` beside the
preset (see `utils.label_file`), a file keras-hub's loader never opens.
"""

import json
import pathlib

import keras
import numpy as np

from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.label_names import check_label_names
from keras_albert.utils.label_file import LABELS_FILE
from keras_albert.utils.label_file import read_label_file

KERAS_HUB_CLASSIFIER = "keras_hub>AlbertTextClassifier"
# What a keras-hub preset's task.json may hold and we carry over.
KERAS_HUB_TASKS_WE_MAP = (KERAS_HUB_CLASSIFIER,)


def preset_task_name(preset):
    """The registered name in `preset`'s task.json ("keras_hub>X"), or None."""
    path = pathlib.Path(preset) / "task.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("registered_name")


def preset_label_names(preset, num_classes):
    """The class names in `preset`/labels.txt (None without the file),
    checked against the head's `num_classes`."""
    return check_label_names(
        read_label_file(preset),
        num_classes,
        name=str(pathlib.Path(preset) / LABELS_FILE),
        regression=num_classes == 1,
    )


def packed_length(preprocessor, backbone):
    """The preprocessor's length, never longer than the position table
    (keras-hub's default of 512 crashes a backbone with fewer positions)."""
    maximum = backbone.max_sequence_length
    length = getattr(preprocessor, "sequence_length", None) or min(512, maximum)
    return min(length, maximum)


def _copy_head(source, target, source_name):
    """Copies the "logits" Dense's kernel and bias, checking shapes first."""
    arrays = [np.asarray(w) for w in source.get_weights()]
    expected = [tuple(w.shape) for w in target.weights]
    if [a.shape for a in arrays] != expected:
        raise ValueError(
            f"The classifier head of {source_name} does not fit: its "
            f"'logits' layer holds shapes {[a.shape for a in arrays]}, the "
            f"converted classifier needs {expected}."
        )
    target.set_weights(arrays)


def classifier_from_keras_hub(theirs, backbone, tokenizer, label_names=None, source="keras-hub"):
    """Our `AlbertClassifier` on `backbone` with the head, dropout,
    activation and preprocessing of keras-hub's classifier `theirs`."""
    preprocessor = None
    if tokenizer is not None:
        theirs_preprocessor = theirs.preprocessor
        preprocessor = AlbertTextClassifierPreprocessor(
            tokenizer,
            sequence_length=packed_length(theirs_preprocessor, backbone),
            truncate=getattr(theirs_preprocessor, "truncate", "round_robin"),
        )
    ours = AlbertClassifier(
        backbone,
        num_classes=theirs.num_classes,
        preprocessor=preprocessor,
        activation=keras.activations.serialize(theirs.activation),
        dropout=theirs.dropout,
        label_names=label_names,
    )
    _copy_head(theirs.output_dense, ours.output_dense, source)
    return ours


def keras_hub_classifier_from_ours(ours, backbone, vocabulary):
    """keras-hub's `AlbertTextClassifier` on its `backbone` with the head of
    our classifier `ours`; with a `vocabulary`, its preprocessor packs to
    our length (at most the backbone's positions)."""
    import keras_hub

    preprocessor = None
    if vocabulary is not None:
        ours_preprocessor = ours.preprocessor
        preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
            keras_hub.models.AlbertTokenizer(proto=vocabulary),
            sequence_length=packed_length(ours_preprocessor, ours.backbone),
            truncate=getattr(ours_preprocessor, "truncate", "round_robin"),
        )
    theirs = keras_hub.models.AlbertTextClassifier(
        backbone,
        num_classes=ours.num_classes,
        preprocessor=preprocessor,
        activation=keras.activations.serialize(ours.activation),
        dropout=ours.dropout,
    )
    _copy_head(ours.output_dense, theirs.output_dense, "this AlbertClassifier")
    return theirs
