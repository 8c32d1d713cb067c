"""TFLite metadata on classifier files: what the on-device runtimes read
(inputs, labels, SentencePiece model) and the tasks it refuses."""

import importlib.util
import io
import json
import zipfile

import keras
import numpy as np
import pytest
import sentencepiece

import keras_albert
from keras_albert.export import tflite_export
from keras_albert.export import tflite_metadata
from keras_albert.export.folded_sentencepiece import folded_sentencepiece_proto
from keras_albert.export.tflite_export import export_tflite
from keras_albert.export.tflite_export import keras_logits
from keras_albert.export.tflite_export import run_tflite
from keras_albert.export.tflite_export import token_features
from tests.conftest import synthetic_sentences

NAMES = ["noun.animal", "noun.artifact", "café ☕", "noun.time"]
ODD_TEXTS = ["The CAT sat.", "Ça  va,   Café CRÈME brûlée!", "ＦＵＬＬ ｗｉｄｔｈ", "``quoted''", ""]


def _classifier(tokenizer, config, **kwargs):
    keras.utils.set_random_seed(0)  # int8 agreement depends on the draw (see test_raw_string_tflite)
    backbone = keras_albert.AlbertBackbone(**dict(config, vocabulary_size=80))
    pre = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    kwargs.setdefault("num_classes", 4)
    model = keras_albert.AlbertClassifier(backbone, preprocessor=pre, **kwargs)
    if model.num_classes > 1:
        # Spread the logits so argmaxes are decided, as in a trained model.
        kernel = model.output_dense.kernel
        kernel.assign(np.random.default_rng(0).normal(0, 2.0, kernel.shape))
    return model


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


@pytest.fixture(scope="module")
def named_classifier(tokenizer, tiny_backbone_config):
    return _classifier(tokenizer, tiny_backbone_config, label_names=NAMES)


def _metadata_json(content):
    from mediapipe.tasks.python.metadata import metadata

    return json.loads(metadata.MetadataDisplayer.with_model_buffer(content).get_metadata_json())


def _softmax(logits):
    exp = np.exp(logits - logits.max(-1, keepdims=True))
    return exp / exp.sum(-1, keepdims=True)


@pytest.mark.large
def test_metadata_describes_inputs_labels_and_tokenizer(tmp_path, named_classifier, tokenizer):
    texts = synthetic_sentences(40, seed=5) + ODD_TEXTS
    report = export_tflite(named_classifier, tmp_path / "m.tflite", check_texts=texts, metadata=True)
    assert report["metadata"] is True and report["max_abs_difference"] <= 1e-5
    content = (tmp_path / "m.tflite").read_bytes()

    metadata = _metadata_json(content)
    subgraph = metadata["subgraph_metadata"][0]
    assert metadata["min_parser_version"] == "1.1.0"
    assert "4 classes" in metadata["description"]
    # Each described input is the model input of that role, in model order.
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_content=content)
    tensor_names = [detail["name"] for detail in interpreter.get_input_details()]
    roles = {"ids": "token_ids", "mask": "padding_mask", "segment_ids": "segment_ids"}
    described = [tensor["name"] for tensor in subgraph["input_tensor_metadata"]]
    assert sorted(described) == sorted(roles)
    for name, tensor_name in zip(described, tensor_names):
        assert roles[name] in tensor_name, (described, tensor_names)
    for detail in interpreter.get_input_details():
        assert detail["dtype"] == np.int32 and list(detail["shape"]) == [1, 16]
    [output] = subgraph["output_tensor_metadata"]
    assert output["name"] == "probabilities"
    assert output["stats"] == {"max": [1.0], "min": [0.0]}
    assert output["associated_files"] == [{
        "name": "labels.txt", "description": output["associated_files"][0]["description"],
        "type": "TENSOR_AXIS_LABELS"}]
    [unit] = subgraph["input_process_units"]
    assert unit["options_type"] == "SentencePieceTokenizerOptions"
    assert unit["options"]["sentencePiece_model"][0]["name"] == "sentencepiece.model"

    # The associated files: a zip at the end of the flatbuffer.
    archive = zipfile.ZipFile(io.BytesIO(content))
    assert sorted(archive.namelist()) == ["labels.txt", "sentencepiece.model"]
    assert archive.read("labels.txt").decode("utf-8").split("\n") == NAMES
    stored = archive.read("sentencepiece.model")
    assert stored == folded_sentencepiece_proto(tokenizer.proto, tokenizer.lowercase)
    # Plain SentencePiece on raw text gives AlbertTokenizer's ids.
    processor = sentencepiece.SentencePieceProcessor(model_proto=stored)
    for text in texts:
        assert processor.encode(text) == [int(i) for i in tokenizer(text)], text

    # The file outputs probabilities, at any batch size.
    features = token_features(named_classifier, texts, 16)
    outputs = run_tflite(content, features, batch_size=8)
    assert list(outputs) == ["probabilities"]
    expected = _softmax(keras_logits(named_classifier, features)["logits"])
    np.testing.assert_allclose(outputs["probabilities"], expected, atol=1e-5)
    np.testing.assert_allclose(outputs["probabilities"].sum(-1), 1.0, atol=1e-5)


@pytest.mark.large
def test_int8_files_carry_metadata_too(tmp_path, named_classifier):
    report = export_tflite(
        named_classifier, tmp_path / "m.tflite", "int8", check_texts=synthetic_sentences(100, seed=11),
        representative_texts=synthetic_sentences(100, seed=3), metadata=True,
    )
    assert report["argmax_agreement"] >= 0.99
    content = (tmp_path / "m.tflite").read_bytes()
    assert zipfile.ZipFile(io.BytesIO(content)).read("labels.txt").decode("utf-8").split("\n") == NAMES


def _refused(task, tmp_path, monkeypatch, message, **kwargs):
    # Every refusal comes before the conversion and writes nothing.
    def no_conversion(*args, **kwargs):
        raise AssertionError("converted a task that metadata cannot describe")

    monkeypatch.setattr(tflite_export, "convert", no_conversion)
    with pytest.raises((ValueError, ImportError), match=message):
        export_tflite(task, tmp_path / "m.tflite", **dict(dict(metadata=True), **kwargs))
    assert list(tmp_path.iterdir()) == []


def test_a_classifier_without_label_names_is_refused(tmp_path, monkeypatch, tokenizer, tiny_backbone_config):
    task = _classifier(tokenizer, tiny_backbone_config)
    _refused(task, tmp_path, monkeypatch, r"needs the classifier's `label_names`.*label_names=None")


def test_a_regressor_is_refused(tmp_path, monkeypatch, tokenizer, tiny_backbone_config):
    task = _classifier(tokenizer, tiny_backbone_config, num_classes=1)
    _refused(task, tmp_path, monkeypatch, r"regressor \(num_classes=1\)")


def test_other_tasks_are_refused(tmp_path, monkeypatch, tokenizer, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80))
    pre = keras_albert.AlbertQuestionAnswererPreprocessor(tokenizer, sequence_length=24, doc_stride=8)
    task = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=pre)
    _refused(task, tmp_path, monkeypatch, "Received a AlbertQuestionAnswerer")


def test_a_cased_tokenizer_is_refused(tmp_path, monkeypatch, sentencepiece_proto, tiny_backbone_config):
    cased = keras_albert.AlbertTokenizer(proto=sentencepiece_proto, lowercase=False)
    task = _classifier(cased, tiny_backbone_config, label_names=NAMES)
    _refused(task, tmp_path, monkeypatch, r"lowercase=False")


def test_label_names_with_line_breaks_are_refused(tmp_path, monkeypatch, tokenizer, tiny_backbone_config):
    task = _classifier(tokenizer, tiny_backbone_config, label_names=["a", "b\nc", "d", "e"])
    _refused(task, tmp_path, monkeypatch, r"'b\\nc' \(class 1\).*a line feed \(U\+000A\).*--nometadata")


def test_a_non_bool_metadata_is_refused(tmp_path, monkeypatch, named_classifier):
    _refused(named_classifier, tmp_path, monkeypatch, r"`metadata` must be True or False.*'yes'", metadata="yes")


def test_without_mediapipe_the_error_names_the_extra(tmp_path, monkeypatch, named_classifier):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        tflite_metadata.importlib.util, "find_spec",
        lambda name, *args: None if name == "mediapipe" else find_spec(name, *args),
    )
    _refused(named_classifier, tmp_path, monkeypatch, r"keras-albert\[tflite-metadata\]")


def test_metadata_by_default_only_for_named_classifiers(named_classifier, tokenizer, tiny_backbone_config):
    assert tflite_metadata.metadata_by_default(named_classifier)
    assert not tflite_metadata.metadata_by_default(_classifier(tokenizer, tiny_backbone_config))
    assert not tflite_metadata.metadata_by_default(_classifier(tokenizer, tiny_backbone_config, num_classes=1))
