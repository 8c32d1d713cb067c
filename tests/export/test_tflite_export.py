"""TFLite export: four quantization modes, checked against Keras, nothing
left behind on failure."""

import numpy as np
import pytest

import keras_albert
from keras_albert.export import tflite_export
from keras_albert.export.tflite_export import export_tflite
from keras_albert.export.tflite_export import keras_logits
from keras_albert.export.tflite_export import run_tflite
from keras_albert.export.tflite_export import token_features
from tests.conftest import synthetic_sentences

HELD_OUT = synthetic_sentences(200, seed=11)


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


@pytest.fixture(scope="module")
def classifier(tokenizer, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80))
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    model = keras_albert.AlbertClassifier(backbone, num_classes=4, preprocessor=pre)
    # Spread the logits so argmaxes are decided, as in a trained model.
    model.output_dense.kernel.assign(np.random.default_rng(0).normal(0, 2.0, model.output_dense.kernel.shape))
    return model


@pytest.mark.large
@pytest.mark.parametrize("quantize", ["none", "float16", "dynamic", "int8"])
def test_each_quantization_matches_keras(tmp_path, classifier, quantize):
    report = export_tflite(
        classifier, tmp_path / f"{quantize}.tflite", quantize,
        check_texts=HELD_OUT, representative_texts=synthetic_sentences(100, seed=3),
    )
    content = (tmp_path / f"{quantize}.tflite").read_bytes()
    assert report["bytes"] == len(content)
    features = token_features(classifier, HELD_OUT, 16)
    got = run_tflite(content, features, batch_size=32)["logits"]
    expected = keras_logits(classifier, features)["logits"]
    if quantize == "none":
        assert np.abs(got - expected).max() <= 1e-4
    elif quantize == "float16":
        assert np.abs(got - expected).max() <= 1e-2
    else:
        assert (got.argmax(-1) == expected.argmax(-1)).mean() >= 0.99


@pytest.mark.large
def test_question_answerer_exports(tmp_path, tokenizer, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80))
    pre = keras_albert.AlbertQuestionAnswererPreprocessor(tokenizer, sequence_length=24, doc_stride=8)
    model = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=pre)
    report = export_tflite(model, tmp_path / "qa.tflite", check_texts=HELD_OUT[:20])
    assert report["max_abs_difference"] <= 1e-4
    outputs = run_tflite((tmp_path / "qa.tflite").read_bytes(), token_features(model, HELD_OUT[:3], 24))
    assert set(outputs) == {"start_logits", "end_logits"}


@pytest.mark.large
def test_failed_check_and_bad_arguments_write_nothing(tmp_path, classifier, monkeypatch):
    monkeypatch.setitem(tflite_export.FLOAT_TOLERANCE, "none", 0.0)
    previous = b"\x1c\x00\x00\x00TFL3previous"  # An earlier TFLite file's header.
    (tmp_path / "model.tflite").write_bytes(previous)
    with pytest.raises(ValueError, match="not written"):
        export_tflite(classifier, tmp_path / "model.tflite", check_texts=HELD_OUT[:8])
    assert (tmp_path / "model.tflite").read_bytes() == previous
    assert [p.name for p in tmp_path.iterdir()] == ["model.tflite"]
    with pytest.raises(ValueError, match="`quantize` must be one of"):
        export_tflite(classifier, tmp_path / "x.tflite", quantize="int4")
    with pytest.raises(ValueError, match=r"`sequence_length` must be an int in \[2, 32\]"):
        export_tflite(classifier, tmp_path / "x.tflite", sequence_length=64)
    with pytest.raises(ValueError, match="is a directory"):
        export_tflite(classifier, tmp_path)
    # A file that is not a TFLite model is never replaced unless asked.
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a TFLite model.*overwrite=True"):
        export_tflite(classifier, tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "mine"
