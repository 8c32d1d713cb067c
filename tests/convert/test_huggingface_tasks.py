"""Hugging Face's ALBERT task models <-> ours with their heads, class names
and dropout (equal outputs both ways), and AlbertMaskedLM ->
AlbertForMaskedLM; what a layout cannot hold is refused, not dropped."""

import json

import numpy as np
import pytest
import safetensors.numpy
import torch
import transformers

import keras_albert
from keras_albert.convert.huggingface import convert_huggingface
from keras_albert.convert.huggingface import export_huggingface
from keras_albert.pipelines.conversion import run_conversion
from tests.convert.hf_reference import TOLERANCE
from tests.convert.hf_reference import hf_model
from tests.convert.hf_reference import inputs
from tests.convert.hf_reference import saved_with_vocabulary

LABELS = ["negative", "neutral", "positive"]


def hf_classifier(num_labels=3, id2label=None, seed=0, architecture="AlbertForSequenceClassification", **config):
    torch.manual_seed(seed)
    backbone_config = hf_model(1, 1).config.to_dict()
    backbone_config.update(num_labels=num_labels, classifier_dropout_prob=0.2, **config)
    if id2label:
        backbone_config.update(id2label=id2label, label2id={v: int(k) for k, v in id2label.items()})
    model = getattr(transformers, architecture)(transformers.AlbertConfig(**backbone_config)).eval()
    with torch.no_grad():  # non-zero biases: zeros would hide mapping errors
        for name, param in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                param.add_(0.1 * torch.randn_like(param))
    return model


def hf_logits(model):
    token_ids, segments, padding = inputs()
    with torch.no_grad():
        return model(input_ids=torch.tensor(token_ids), token_type_ids=torch.tensor(segments),
                     attention_mask=torch.tensor(padding)).logits.numpy()


def our_logits(classifier):
    token_ids, segments, padding = inputs()
    return np.asarray(classifier.predict(
        {"token_ids": token_ids.astype("int32"), "segment_ids": segments.astype("int32"), "padding_mask": padding},
        verbose=0))


def test_a_hugging_face_classifier_converts_both_ways_with_its_head_and_names(tmp_path, sentencepiece_proto):
    theirs = hf_classifier(id2label={str(i): name for i, name in enumerate(LABELS)})
    saved_with_vocabulary(theirs, tmp_path / "hf", sentencepiece_proto)
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")

    ours = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "preset"))
    assert (ours.num_classes, ours.label_names, ours.dropout) == (3, LABELS, 0.2)
    assert np.abs(our_logits(ours) - hf_logits(theirs)).max() <= TOLERANCE
    # Raw text works: the preset carries its preprocessor.
    assert ours.predict(["the cat sat"], verbose=0).shape == (1, 3)

    run_conversion("keras_albert", "hf", tmp_path / "preset", tmp_path / "back")
    again = transformers.AutoModelForSequenceClassification.from_pretrained(tmp_path / "back").eval()
    assert type(again).__name__ == "AlbertForSequenceClassification"
    assert again.config.id2label == dict(enumerate(LABELS))
    assert again.config.problem_type == "single_label_classification"
    assert again.config.classifier_dropout_prob == 0.2
    assert np.abs(hf_logits(again) - hf_logits(theirs)).max() <= 1e-5


def test_default_names_stay_unnamed_and_a_regressor_stays_a_regressor(tmp_path):
    hf_classifier(num_labels=4).save_pretrained(tmp_path / "four")
    convert_huggingface(tmp_path / "four", tmp_path / "four_preset")
    assert keras_albert.AlbertClassifier.from_preset(str(tmp_path / "four_preset")).label_names is None

    theirs = hf_classifier(num_labels=1, seed=1)
    theirs.save_pretrained(tmp_path / "hf")
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    ours = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "preset"))
    assert ours.is_regression
    assert np.abs(our_logits(ours) - hf_logits(theirs)).max() <= TOLERANCE
    export_huggingface(ours, tmp_path / "back")
    config = json.loads((tmp_path / "back" / "config.json").read_text())
    assert (config["num_labels"], config["problem_type"]) == (1, "regression") and "id2label" not in config


def _token_features():
    token_ids, segments, padding = inputs()
    return {"token_ids": token_ids.astype("int32"), "segment_ids": segments.astype("int32"), "padding_mask": padding}


def _choice_features():
    # Two questions of three choices each, built from the two rows.
    token_ids, segments, padding = inputs()
    pick = np.array([[0, 1, 0], [1, 1, 0]])
    return {"token_ids": token_ids[pick].astype("int32"), "segment_ids": segments[pick].astype("int32"),
            "padding_mask": padding[pick]}


def _hf_task_outputs(model, features):
    with torch.no_grad():
        out = model(input_ids=torch.tensor(features["token_ids"]), token_type_ids=torch.tensor(features["segment_ids"]),
                    attention_mask=torch.tensor(features["padding_mask"]))
    if hasattr(out, "start_logits"):
        return np.stack([out.start_logits.numpy(), out.end_logits.numpy()], axis=-1)
    return out.logits.numpy()


def _our_task_outputs(model, features):
    out = model.predict(features, verbose=0)
    if isinstance(out, dict):
        return np.stack([np.asarray(out["start_logits"]), np.asarray(out["end_logits"])], axis=-1)
    return np.asarray(out)


@pytest.mark.parametrize("architecture, ours, num_labels, features", [
    ("AlbertForTokenClassification", "AlbertTokenClassifier", 5, _token_features),
    ("AlbertForQuestionAnswering", "AlbertQuestionAnswerer", 2, _token_features),
    ("AlbertForMultipleChoice", "AlbertMultipleChoice", 2, _choice_features),
])
def test_every_other_task_model_converts_both_ways_with_its_head(
        tmp_path, sentencepiece_proto, architecture, ours, num_labels, features):
    names = {"0": "O", "1": "B-PER", "2": "I-PER", "3": "B-LOC", "4": "I-LOC"}
    theirs = hf_classifier(num_labels=num_labels, architecture=architecture,
                           id2label=names if ours == "AlbertTokenClassifier" else None)
    saved_with_vocabulary(theirs, tmp_path / "hf", sentencepiece_proto)
    convert_huggingface(tmp_path / "hf", tmp_path / "preset")
    model = getattr(keras_albert, ours).from_preset(str(tmp_path / "preset"))
    assert model.preprocessor is not None
    if ours == "AlbertTokenClassifier":
        assert model.label_names == list(names.values())
    if ours != "AlbertQuestionAnswerer":
        assert model.dropout == 0.2
    expected = _hf_task_outputs(theirs, features())
    assert np.abs(_our_task_outputs(model, features()) - expected).max() <= TOLERANCE

    run_conversion("keras_albert", "hf", tmp_path / "preset", tmp_path / "back")
    config = json.loads((tmp_path / "back" / "config.json").read_text())
    again = getattr(transformers, architecture).from_pretrained(tmp_path / "back").eval()
    # Token-level models have no pooler there: none is written, so none is reported as unexpected.
    assert set(again.state_dict()) >= set(safetensors.numpy.load_file(tmp_path / "back" / "model.safetensors"))
    assert config["architectures"] == [architecture]
    assert np.abs(_hf_task_outputs(again, features()) - expected).max() <= 1e-5


def test_what_a_layout_cannot_carry_is_refused_before_anything_is_written(tmp_path):
    theirs = hf_classifier(problem_type="multi_label_classification")
    theirs.save_pretrained(tmp_path / "multi")
    with pytest.raises(ValueError, match="problem_type='multi_label_classification' with 3 label"):
        convert_huggingface(tmp_path / "multi", tmp_path / "multi_preset")
    assert not (tmp_path / "multi_preset").exists()

    config = json.loads((tmp_path / "multi" / "config.json").read_text())
    (tmp_path / "multi" / "config.json").write_text(json.dumps({**config, "architectures": ["AlbertForRanking"]}))
    with pytest.raises(ValueError, match=r"architectures=\['AlbertForRanking'\]; this converter reads one of"):
        convert_huggingface(tmp_path / "multi", tmp_path / "multi_preset")
    assert not (tmp_path / "multi_preset").exists()

    backbone = keras_albert.AlbertBackbone(vocabulary_size=90, num_layers=2, num_heads=2, embedding_dim=8,
                                           hidden_dim=16, intermediate_dim=32, max_sequence_length=20)
    mean = keras_albert.AlbertClassifier(backbone, num_classes=2, pooling="mean")
    with pytest.raises(ValueError, match="pooling='mean' has no Hugging Face form"):
        export_huggingface(mean, tmp_path / "mean")
    sigmoid = keras_albert.AlbertClassifier(backbone, num_classes=2, activation="sigmoid")
    with pytest.raises(ValueError, match=r"outputs logits; this classifier applies activation='sigmoid'"):
        export_huggingface(sigmoid, tmp_path / "sigmoid")
    assert not (tmp_path / "mean").exists() and not (tmp_path / "sigmoid").exists()

    # A causal LM has no Hugging Face ALBERT layout: refused by name, not written as a bidirectional AlbertModel.
    with pytest.raises(ValueError, match=r"holds an AlbertCausalLM, which has no Hugging Face ALBERT layout"):
        run_conversion("keras_albert", "hf", "albert_tiny_causal_en", tmp_path / "causal_hf")
    assert not (tmp_path / "causal_hf").exists()


def test_a_masked_lm_preset_becomes_albert_for_masked_lm(tmp_path, sentencepiece_proto):
    # It was written as an AlbertModel, without its head.
    model = hf_model(1, 1)
    saved_with_vocabulary(model, tmp_path / "hf", sentencepiece_proto)
    convert_huggingface(tmp_path / "hf", tmp_path / "pretrainer")
    keras_albert.AlbertMaskedLM.from_preset(str(tmp_path / "pretrainer")).save_to_preset(tmp_path / "masked_lm")
    run_conversion("keras_albert", "hf", tmp_path / "masked_lm", tmp_path / "back")
    again = transformers.AutoModelForMaskedLM.from_pretrained(tmp_path / "back").eval()
    assert type(again).__name__ == "AlbertForMaskedLM"
    token_ids, segments, padding = (torch.tensor(a) for a in inputs())
    with torch.no_grad():
        expected = model(input_ids=token_ids, token_type_ids=segments, attention_mask=padding).prediction_logits
        logits = again(input_ids=token_ids, token_type_ids=segments, attention_mask=padding).logits
    assert np.abs(logits.numpy() - expected.numpy()).max() <= 1e-5


def test_a_hugging_face_masked_lm_without_a_pooler_converts(tmp_path, sentencepiece_proto):
    # What Hugging Face's own AlbertForMaskedLM saves (run_mlm.py's domain
    # adaptation, say): no pooler. It was refused as missing weights.
    torch.manual_seed(0)
    theirs = transformers.AlbertForMaskedLM(hf_model(1, 1).config).eval()
    assert not [name for name in theirs.state_dict() if "pooler" in name]
    convert_huggingface(saved_with_vocabulary(theirs, tmp_path / "hf", sentencepiece_proto), tmp_path / "preset")
    ours = keras_albert.AlbertMaskedLM.from_preset(str(tmp_path / "preset"), preprocessor=None)
    token_ids, segments, padding = inputs()
    positions = np.tile(np.arange(8), (2, 1)).astype("int32")
    logits = ours.predict({"token_ids": token_ids.astype("int32"), "segment_ids": segments.astype("int32"),
                           "padding_mask": padding, "mask_positions": positions}, verbose=0)
    with torch.no_grad():
        expected = theirs(input_ids=torch.tensor(token_ids), token_type_ids=torch.tensor(segments),
                          attention_mask=torch.tensor(padding)).logits.numpy()
    assert np.abs(np.asarray(logits) - expected).max() <= TOLERANCE
