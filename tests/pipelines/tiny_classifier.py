"""A tiny fine-tuned text classifier for the predict and evaluate tests:
three classes named by the animal a text ends with, trained for a few
epochs (seconds), saved as a preset and, where TensorFlow is installed, as
a serving SavedModel; and a tiny regressor (its score: the number of words)
saved the same way."""

import pathlib
import random

import keras
import numpy as np
import pytest

import keras_albert
from tests.conftest import _WORDS

LABELS = ("bird", "cat", "fish")


def animal_texts(count, seed=0):
    """(texts, label names): a few random words, then the animal."""
    rng = random.Random(seed)
    labels = [LABELS[i % len(LABELS)] for i in range(count)]
    texts = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 8))) + f" {label}" for label in labels]
    return texts, labels


def write_table(path, texts, labels, header=("text", "label")):
    rows = ["\t".join(header)] + [f"{text}\t{label}" for text, label in zip(texts, labels)]
    pathlib.Path(path).write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def build_tiny_classifier(directory, proto, backbone_config, serving=True):
    """Trains the classifier; writes DIRECTORY/preset (and /serving on
    TensorFlow); returns the directory."""
    directory = pathlib.Path(directory)
    keras.utils.set_random_seed(0)
    tokenizer = keras_albert.AlbertTokenizer(proto=proto)
    backbone = keras_albert.AlbertBackbone(**dict(backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=24)
    classifier = keras_albert.AlbertClassifier(
        backbone, num_classes=len(LABELS), preprocessor=preprocessor, label_names=list(LABELS), pooling="mean")
    texts, labels = animal_texts(90)
    classifier.compile(optimizer=keras.optimizers.Adam(3e-3))
    classifier.fit(texts, np.asarray([LABELS.index(label) for label in labels]), batch_size=16, epochs=16, verbose=0)
    classifier.save_to_preset(str(directory / "preset"))
    if serving:
        from keras_albert.export.serving_saved_model import export_serving_saved_model

        export_serving_saved_model(classifier, directory / "serving", check_texts=texts[:4])
    return directory


def build_tiny_regressor(directory, proto, backbone_config, serving=True):
    """A regressor of a text's word count, briefly trained; writes
    DIRECTORY/preset (and /serving on TensorFlow)."""
    directory = pathlib.Path(directory)
    keras.utils.set_random_seed(1)
    tokenizer = keras_albert.AlbertTokenizer(proto=proto)
    backbone = keras_albert.AlbertBackbone(**dict(backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=24)
    regressor = keras_albert.AlbertClassifier(backbone, num_classes=1, preprocessor=preprocessor, pooling="mean")
    texts, _ = animal_texts(60, seed=2)
    regressor.compile(optimizer=keras.optimizers.Adam(3e-3))
    regressor.fit(texts, np.asarray([len(t.split()) for t in texts], "float32"), batch_size=16, epochs=3, verbose=0)
    regressor.save_to_preset(str(directory / "preset"))
    if serving:
        from keras_albert.export.serving_saved_model import export_serving_saved_model

        export_serving_saved_model(regressor, directory / "serving", check_texts=texts[:4])
    return directory


_BUILT = {}


def serving_runs():
    """Serving SavedModels are written and loaded on TensorFlow's backend."""
    return keras.config.backend() == "tensorflow"


def skip_unless_serving_runs():
    if not serving_runs():
        pytest.skip("a serving SavedModel runs on KERAS_BACKEND=tensorflow")


def tiny_classifier(tmp_path_factory, proto, backbone_config):
    """`build_tiny_classifier` once per test session (the predict and
    evaluate tests share it); the directory must not be changed. Its
    serving SavedModel only on KERAS_BACKEND=tensorflow (the library
    refuses to export one elsewhere): tests of it skip there, the preset's
    tests run everywhere."""
    key = str(tmp_path_factory.getbasetemp())
    if key not in _BUILT:
        _BUILT[key] = build_tiny_classifier(
            tmp_path_factory.mktemp("tiny_classifier"), proto, backbone_config, serving=serving_runs())
    return _BUILT[key]


def tiny_regressor(tmp_path_factory, proto, backbone_config):
    """`build_tiny_regressor` once per test session (serving as above)."""
    key = "regressor " + str(tmp_path_factory.getbasetemp())
    if key not in _BUILT:
        _BUILT[key] = build_tiny_regressor(
            tmp_path_factory.mktemp("tiny_regressor"), proto, backbone_config, serving=serving_runs())
    return _BUILT[key]
