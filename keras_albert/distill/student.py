"""Building a student from a config, and saving it as a preset."""

import inspect
import json
import pathlib

from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_masked_lm import AlbertMaskedLM
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.utils.atomic_directory import atomic_directory


def parse_student_config(text):
    """A dict of `AlbertBackbone` arguments from inline JSON or a JSON file."""
    if isinstance(text, dict):
        return dict(text)
    source = text
    path = pathlib.Path(text)
    if not text.lstrip().startswith("{") and path.is_file():
        source = path.read_text(encoding="utf-8")
    elif path.suffix.lower() == ".json" and not path.exists():
        # A file name, not inline JSON: "Expecting value" would not say so.
        raise FileNotFoundError(f"`student_config` file {text!r} does not exist (or pass inline JSON).")
    try:
        config = json.loads(source)
    except json.JSONDecodeError as error:
        raise ValueError(
            "`student_config` must be a JSON object of AlbertBackbone arguments "
            f"or a file holding one. Received: {text!r} ({error.msg})"
        ) from None
    if not isinstance(config, dict):
        raise ValueError(
            f"`student_config` must be a JSON object. Received: {text!r}")
    return config


def build_student(config, teacher_backbone):
    """An `AlbertMaskedLM` student; vocabulary and maximum length default
    to the teacher's (the teacher's tokenizer feeds both)."""
    config = dict(config)
    accepted = set(inspect.signature(AlbertBackbone.__init__).parameters) - {"self", "kwargs"}
    unknown = sorted(set(config) - accepted)
    if unknown:
        raise ValueError(
            f"`student_config` has unknown keys {unknown}; AlbertBackbone accepts "
            f"{sorted(accepted)}.")
    config.setdefault("vocabulary_size", teacher_backbone.vocabulary_size)
    config.setdefault("max_sequence_length", teacher_backbone.max_sequence_length)
    try:
        backbone = AlbertBackbone(**config)
    except (TypeError, ValueError) as error:
        raise ValueError(f"`student_config` is not a valid student: {error}") from None
    return AlbertMaskedLM(backbone)


def save_student_preset(student, tokenizer, path, sequence_length):
    """Writes `path` atomically: the student (MLM head included), the
    tokenizer and a text-classifier preprocessor, like a pretrained preset."""
    released = AlbertMaskedLM.from_config(student.get_config())
    released.set_weights(student.get_weights())
    with atomic_directory(path) as staging:
        released.save_to_preset(staging)
        tokenizer.save_to_preset(staging)
        AlbertTextClassifierPreprocessor(
            tokenizer, sequence_length=sequence_length
        ).save_to_preset(staging)
