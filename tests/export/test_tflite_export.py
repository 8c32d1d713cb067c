"""TFLite export: four quantization modes, checked against Keras, nothing
left behind on failure."""

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.export import tflite_export
from keras_albert.export.int8_conversion import op_precisions
from keras_albert.export.tflite_export import export_tflite
from keras_albert.export.tflite_export import keras_logits
from keras_albert.export.tflite_export import run_tflite
from keras_albert.export.tflite_export import token_features
from tests.conftest import synthetic_sentences

HELD_OUT = synthetic_sentences(200, seed=11)
CALIBRATION = synthetic_sentences(100, seed=3)


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


@pytest.fixture(scope="module")
def classifier(tokenizer, tiny_backbone_config):
    keras.utils.set_random_seed(0)  # int8 agreement depends on the draw (see test_raw_string_tflite)
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


def test_int8_refuses_too_few_calibration_texts_before_converting(tmp_path, classifier, monkeypatch):
    monkeypatch.setattr(tflite_export, "convert", lambda *args, **kwargs: pytest.fail("converted"))
    with pytest.raises(ValueError, match=r"`representative_texts` holds 20 texts .*at least 100"):
        export_tflite(classifier, tmp_path / "m.tflite", "int8", check_texts=HELD_OUT,
                      representative_texts=CALIBRATION[:20])
    with pytest.raises(ValueError, match=r"`check_texts` holds 0 texts .*100 given, 100 of them"):
        export_tflite(classifier, tmp_path / "m.tflite", "int8", check_texts=CALIBRATION,
                      representative_texts=CALIBRATION)
    assert not list(tmp_path.iterdir())


@pytest.mark.large
def test_int8_agreement_is_measured_on_held_out_texts_only(tmp_path, classifier, monkeypatch):
    tokenized = []

    def recording_token_features(task, texts, sequence_length):
        tokenized.append(list(texts))
        return token_features(task, texts, sequence_length)

    monkeypatch.setattr(tflite_export, "token_features", recording_token_features)
    report = export_tflite(classifier, tmp_path / "int8.tflite", "int8",
                           check_texts=CALIBRATION[:40] + HELD_OUT, representative_texts=CALIBRATION)
    # Calibrated on the calibration texts, checked on the others only.
    assert tokenized == [CALIBRATION, HELD_OUT]
    assert report["calibration_texts"] == 100 and report["check_texts"] == 200
    assert report["check_texts_excluded_as_calibration"] == 40
    features = token_features(classifier, HELD_OUT, 16)
    got = run_tflite((tmp_path / "int8.tflite").read_bytes(), features, batch_size=32)["logits"]
    expected = keras_logits(classifier, features)["logits"]
    assert report["argmax_agreement"] == float((got.argmax(-1) == expected.argmax(-1)).mean())


@pytest.mark.large
def test_int8_file_is_int8_in_dense_layers_and_embeddings(tmp_path, classifier):
    export_tflite(classifier, tmp_path / "int8.tflite", "int8", check_texts=HELD_OUT,
                  representative_texts=CALIBRATION)
    precisions = op_precisions((tmp_path / "int8.tflite").read_bytes())
    # Every dense layer but the output layer runs on int8, as do the
    # embedding lookups; the ops between them run in float.
    assert precisions["FULLY_CONNECTED"]["float32"] == 1
    assert precisions["FULLY_CONNECTED"]["int8"] >= 10
    assert precisions["GATHER"]["int8"] >= 1
    assert {op for op, count in precisions.items() if count["int8"]} == {
        "FULLY_CONNECTED", "GATHER", "DEQUANTIZE"}
    for op in ("ADD", "MEAN", "RSQRT", "SOFTMAX", "BATCH_MATMUL"):
        assert precisions[op]["float32"] > 0, op
