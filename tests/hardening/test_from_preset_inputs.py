"""`from_preset` of every public class refuses bad presets with a clear error."""

import json
import os

import pytest

import keras_albert
from tests.hardening.conftest import assert_names
from tests.hardening.conftest import no_hang

PRESET_CLASSES = [
    keras_albert.AlbertBackbone,
    keras_albert.AlbertTokenizer,
    keras_albert.AlbertTextClassifierPreprocessor,
    keras_albert.AlbertMaskedLMPreprocessor,
    keras_albert.AlbertMultipleChoicePreprocessor,
    keras_albert.AlbertTokenClassifierPreprocessor,
    keras_albert.AlbertQuestionAnswererPreprocessor,
    keras_albert.AlbertClassifier,
    keras_albert.AlbertMaskedLM,
    keras_albert.AlbertMultipleChoice,
    keras_albert.AlbertTokenClassifier,
    keras_albert.AlbertQuestionAnswerer,
    keras_albert.AlbertPretrainer,
]


def _write(text):
    return lambda path: path.write_text(text)


def _edit_config(**changes):
    def edit(path):
        config = json.loads(path.read_text())
        config["config"].update(changes)
        path.write_text(json.dumps(config))

    return edit


def _without(key):
    def edit(path):
        config = json.loads(path.read_text())
        del config["config"][key]
        path.write_text(json.dumps(config))

    return edit


def _fifo(path):
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _link_to(target):
    def edit(path):
        path.unlink(missing_ok=True)
        path.symlink_to(target)

    return edit


def _poison(value):
    """Writes `value` into one element of the file's last float array."""

    def edit(path):
        import h5py

        arrays = []
        with h5py.File(path, "r+") as handle:
            handle.visititems(lambda name, obj: arrays.append(obj) if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f" else None)
            data = arrays[-1][()]
            data.flat[0] = value
            arrays[-1][...] = data

    return edit


def _unregistered(path):
    config = json.loads(path.read_text())
    config.update(module="evil", class_name="Thing", registered_name="evil>Thing")
    path.write_text(json.dumps(config))


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _scribble(path):
    data = bytearray(path.read_bytes())
    data[:64] = b"\x00" * 64
    path.write_bytes(bytes(data))


# (case id, how the preset argument is made, expected exception, needles)
PRESET_CASES = [
    ("unknown_name", lambda tmp, damage: "albert_nope", ValueError, ["preset='albert_nope'", "albert_tiny_en"]),
    ("none", lambda tmp, damage: None, ValueError, ["preset=None", "str"]),
    ("empty_string", lambda tmp, damage: "", ValueError, ["preset=''", "albert_tiny_en"]),
    ("whitespace", lambda tmp, damage: "  \t", ValueError, ["empty", "albert_tiny_en"]),
    ("integer", lambda tmp, damage: 42, ValueError, ["preset=42", "int", "directory path"]),
    ("file_not_dir", lambda tmp, damage: _a_file(tmp), ValueError, ["a_file.txt", "is a file", "directory"]),
    ("dir_without_config", lambda tmp, damage: str(tmp), ValueError, ["has no config.json", "save_to_preset"]),
    ("config_not_json", lambda tmp, damage: damage("config.json", _write("{not json")), ValueError, ["config.json", "not valid JSON", "'{not json'", "save_to_preset"]),
    ("config_is_list", lambda tmp, damage: damage("config.json", _write("[1, 2]")), ValueError, ["config.json", "holds list", "class_name"]),
    ("config_not_utf8", lambda tmp, damage: damage("config.json", lambda p: p.write_bytes(b"\xff\xfe{")), ValueError, ["config.json", "not UTF-8", "UTF-8 JSON"]),
    ("config_unregistered_class", lambda tmp, damage: damage("config.json", _unregistered), ValueError, ["config.json", "'evil>Thing'", "keras_albert"]),
]


def _a_file(tmp):
    path = tmp / "a_file.txt"
    path.write_text("not a preset")
    return str(path)


@pytest.mark.entry_point("from_preset")
@pytest.mark.parametrize("cls", PRESET_CLASSES, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize(
    "make, expected, needles", [case[1:] for case in PRESET_CASES], ids=[case[0] for case in PRESET_CASES]
)
def test_bad_preset_is_refused(cls, make, expected, needles, tmp_path, damaged_preset):
    with pytest.raises(expected) as error:
        cls.from_preset(make(tmp_path, damaged_preset))
    assert_names(error, *needles)


# Damage that only the classes reading that file notice:
# (id, class, file, edit, kwargs, expected, needles)
FILE_CASES = [
    ("backbone_wrong_type", keras_albert.AlbertBackbone, "config.json", _edit_config(num_layers="four"), {}, ValueError, ["num_layers", "'four'", "positive integer"]),
    ("backbone_truncated_weights", keras_albert.AlbertBackbone, "model.weights.h5", _truncate, {}, ValueError, ["model.weights.h5", "truncated", "save_to_preset"]),
    ("backbone_corrupted_weights", keras_albert.AlbertBackbone, "model.weights.h5", _scribble, {}, ValueError, ["model.weights.h5", "corrupted", "Keras `.h5`"]),
    ("backbone_missing_weights", keras_albert.AlbertBackbone, "model.weights.h5", lambda p: p.unlink(), {}, FileNotFoundError, ["model.weights.h5", "load_weights=False"]),
    ("classifier_truncated_task_weights", keras_albert.AlbertClassifier, "task.weights.h5", _truncate, {}, ValueError, ["task.weights.h5", "truncated"]),
    ("classifier_task_not_json", keras_albert.AlbertClassifier, "task.json", _write("{"), {}, ValueError, ["task.json", "not valid JSON"]),
    ("classifier_wrong_type", keras_albert.AlbertClassifier, "task.json", _edit_config(num_classes="three"), {}, ValueError, ["num_classes", "'three'"]),
    ("classifier_bad_kwarg", keras_albert.AlbertClassifier, "metadata.json", lambda p: None, {"num_classes": 0}, ValueError, ["num_classes", "0"]),
    ("tokenizer_corrupt_vocabulary", keras_albert.AlbertTokenizer, "assets/tokenizer/vocabulary.spm", _write("garbage"), {}, ValueError, ["vocabulary.spm", "not a valid SentencePiece model"]),
    ("tokenizer_missing_vocabulary", keras_albert.AlbertTokenizer, "assets/tokenizer/vocabulary.spm", lambda p: p.unlink(), {}, FileNotFoundError, ["vocabulary.spm", "doesn't exist"]),
    ("tokenizer_wrong_type", keras_albert.AlbertTokenizer, "tokenizer.json", _edit_config(lowercase="yes"), {}, (TypeError, ValueError), ["lowercase", "'yes'", "True or False"]),
    ("preprocessor_not_json", keras_albert.AlbertTextClassifierPreprocessor, "preprocessor.json", _write("]"), {}, ValueError, ["preprocessor.json", "not valid JSON"]),
    ("preprocessor_wrong_type", keras_albert.AlbertTextClassifierPreprocessor, "preprocessor.json", _edit_config(sequence_length="long"), {}, ValueError, ["sequence_length", "'long'", "int >= 2"]),
    ("preprocessor_bad_kwarg", keras_albert.AlbertQuestionAnswererPreprocessor, "metadata.json", lambda p: None, {"doc_stride": 0}, ValueError, ["doc_stride", "0", "positive int"]),
    # Shapes that tripped keras-hub or our own readers with a traceback.
    ("metadata_is_list", keras_albert.AlbertBackbone, "metadata.json", _write("[]"), {}, ValueError, ["metadata.json", "holds list", "JSON object"]),
    ("metadata_is_string", keras_albert.AlbertClassifier, "metadata.json", _write('"hello"'), {}, ValueError, ["metadata.json", "holds str", "JSON object"]),
    ("task_backbone_is_list", keras_albert.AlbertClassifier, "task.json", _edit_config(backbone=["x"]), {}, ValueError, ["task.json", "config.backbone", "['x']", "serialized Keras object"]),
    ("task_preprocessor_is_string", keras_albert.AlbertClassifier, "task.json", _edit_config(preprocessor="p"), {}, ValueError, ["task.json", "config.preprocessor", "'p'", "serialized Keras object"]),
    ("backbone_without_positions", keras_albert.AlbertBackbone, "config.json", _without("max_sequence_length"), {}, ValueError, ["config.json", "lacks ['max_sequence_length']", "save_to_preset"]),
    ("backbone_without_layers", keras_albert.AlbertClassifier, "config.json", _without("num_layers"), {}, ValueError, ["config.json", "lacks ['num_layers']"]),
    ("backbone_positions_as_string", keras_albert.AlbertBackbone, "config.json", _edit_config(max_sequence_length="128"), {}, ValueError, ["config.json", "max_sequence_length='128'", "positive integer"]),
    # Weights that would predict NaN: refused at load with the file named.
    ("backbone_nan_weights", keras_albert.AlbertBackbone, "model.weights.h5", _poison(float("nan")), {}, ValueError, ["model.weights.h5", "NaN or infinite", "1 arrays", "predict NaN"]),
    ("classifier_inf_task_weights", keras_albert.AlbertClassifier, "task.weights.h5", _poison(float("-inf")), {}, ValueError, ["task.weights.h5", "NaN or infinite"]),
    # Files that are not regular files: refused by path, never opened.
    ("vocabulary_fifo", keras_albert.AlbertTokenizer, "assets/tokenizer/vocabulary.spm", _fifo, {}, ValueError, ["vocabulary.spm", "is a FIFO", "regular files"]),
    ("vocabulary_zero_device", keras_albert.AlbertClassifier, "assets/tokenizer/vocabulary.spm", _link_to("/dev/zero"), {}, ValueError, ["vocabulary.spm", "symbolic link", "/dev/zero"]),
    ("config_fifo", keras_albert.AlbertBackbone, "config.json", _fifo, {}, ValueError, ["config.json", "is a FIFO"]),
    ("stray_link_out", keras_albert.AlbertBackbone, "notes.txt", _link_to("/etc/passwd"), {}, ValueError, ["notes.txt", "symbolic link", "/etc/passwd"]),
    ("directory_link_out", keras_albert.AlbertBackbone, "assets/linkdir", _link_to("/tmp"), {}, ValueError, ["linkdir", "link to a directory"]),
]


@pytest.mark.entry_point("from_preset")
@pytest.mark.parametrize(
    "cls, name, edit, kwargs, expected, needles", [case[1:] for case in FILE_CASES], ids=[case[0] for case in FILE_CASES]
)
def test_damaged_preset_file_is_named(cls, name, edit, kwargs, expected, needles, damaged_preset):
    with no_hang(), pytest.raises(expected) as error:
        cls.from_preset(damaged_preset(name, edit), **kwargs)
    assert_names(error, *needles)


def test_intact_preset_still_loads(classifier, classifier_preset):
    # The checks refuse nothing that `save_to_preset` writes.
    import numpy as np

    task = keras_albert.AlbertClassifier.from_preset(str(classifier_preset))
    assert task.num_classes == 3
    for ours, theirs in zip(task.weights, classifier.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
