"""Clients with only MediaPipe, or only LiteRT and SentencePiece, run our
metadata .tflite on raw strings and get the Keras model's labels.

The client venvs are built with pip on first use (benchmarks/
client_environments.py; cached, `$KERAS_ALBERT_CLIENT_ENVS` to move the
cache) and a failed build fails these tests.
"""

import importlib.util
import json
import pathlib
import sys

import numpy as np
import pytest

import keras_albert
from keras_albert.export.tflite_export import export_tflite
from tests.conftest import synthetic_sentences

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ("mediapipe", "litert")


def _load(name):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


client_environments = _load("client_environments")
tflite_clients = _load("tflite_clients")


@pytest.mark.large
def test_200_held_out_glosses_get_the_keras_labels(tmp_path):
    record = tflite_clients.main(["--texts", "200", "--quantize", "none", "--output", str(tmp_path / "r.json")])
    assert json.loads((tmp_path / "r.json").read_text())["clients"] == record["clients"]
    for client in CLIENTS:
        importable = record["client_can_import"][client]
        assert not any(importable[m] for m in ("tensorflow", "keras", "keras_albert", "tensorflow_text"))
        result = record["clients"][client]["none"]
        assert result["equal_labels"] == result["texts"] == 200, (client, result)
        assert result["max_abs_probability_difference"] <= 1e-5, (client, result)


@pytest.mark.large
def test_odd_and_long_texts_tokenize_as_in_keras(tmp_path, sentencepiece_proto, tiny_backbone_config):
    # Case, accents, full-width forms, LaTeX quotes, runs of spaces, an
    # empty text and texts longer than the sequence: equal probabilities
    # mean the runtimes' tokenizer gave AlbertTokenizer's ids.
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    classifier = keras_albert.AlbertClassifier(
        keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80)),
        num_classes=3, label_names=["first", "second", "third"],
        preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
    )
    kernel = classifier.output_dense.kernel
    kernel.assign(np.random.default_rng(1).normal(0, 2.0, kernel.shape))
    texts = [
        "The CAT sat.", "Ça  va,   Café CRÈME brûlée!", "ＦＵＬＬ ｗｉｄｔｈ", "``quoted'' text", "",
        " ".join(synthetic_sentences(6, seed=2)),
    ] + synthetic_sentences(20, seed=4)
    export_tflite(classifier, tmp_path / "m.tflite", check_texts=texts, metadata=True)
    (tmp_path / "texts.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    expected = tflite_clients.keras_probabilities(classifier, texts)
    expected_labels = [classifier.label_names[i] for i in expected.argmax(-1)]
    for client in CLIENTS:
        labels, probabilities = tflite_clients.run_client(
            client, tmp_path / "m.tflite", tmp_path / "texts.txt", None)
        np.testing.assert_allclose(probabilities, expected, atol=1e-5, err_msg=client)
        assert labels == expected_labels, client


def test_a_client_that_cannot_be_built_fails_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setitem(client_environments.CLIENTS, "broken", ("not a requirement!!",))
    with pytest.raises(RuntimeError, match="Installing not a requirement!! into the broken venv failed"):
        client_environments.client_python("broken", tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="Unknown client: client='tflite'"):
        client_environments.client_python("tflite", tmp_path)


def test_clients_get_a_clean_environment(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    monkeypatch.setenv("VIRTUAL_ENV", "/venv")
    environment = client_environments.clean_environment()
    assert "PYTHONPATH" not in environment and "VIRTUAL_ENV" not in environment
    assert environment["PATH"]
