"""Class names travel with classifiers: config, presets, `from_preset`
overrides and presets saved before names existed."""

import json

import numpy as np
import pytest

import keras_albert
from tests.harness import run_serialization_test

NAMES = ["negative", "neutral", "positive"]


@pytest.fixture(scope="module")
def tokenizer(sentencepiece_proto):
    return keras_albert.AlbertTokenizer(proto=sentencepiece_proto)


def _classifier(tokenizer, config, **kwargs):
    backbone = keras_albert.AlbertBackbone(**dict(config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    return keras_albert.AlbertClassifier(backbone, preprocessor=preprocessor, **kwargs)


def test_names_survive_config_and_preset(tmp_path, tokenizer, tiny_backbone_config):
    classifier = _classifier(tokenizer, tiny_backbone_config, num_classes=3, label_names=tuple(NAMES))
    assert classifier.label_names == NAMES
    assert run_serialization_test(classifier).label_names == NAMES
    classifier.save_to_preset(str(tmp_path))
    assert json.loads((tmp_path / "task.json").read_text())["config"]["label_names"] == NAMES
    restored = keras_albert.AlbertClassifier.from_preset(str(tmp_path))
    assert restored.label_names == NAMES
    np.testing.assert_allclose(
        restored.predict(["the cat sleeps"], verbose=0), classifier.predict(["the cat sleeps"], verbose=0),
        atol=1e-6,
    )


def test_a_new_head_from_a_preset_drops_the_old_names(tmp_path, tokenizer, tiny_backbone_config):
    _classifier(tokenizer, tiny_backbone_config, num_classes=3, label_names=NAMES).save_to_preset(str(tmp_path))
    fresh = keras_albert.AlbertClassifier.from_preset(str(tmp_path), num_classes=2)
    assert fresh.num_classes == 2 and fresh.label_names is None
    named = keras_albert.AlbertClassifier.from_preset(str(tmp_path), num_classes=2, label_names=["no", "yes"])
    assert named.label_names == ["no", "yes"]


def test_presets_saved_before_names_load_with_ids_only(tmp_path, tokenizer, tiny_backbone_config):
    _classifier(tokenizer, tiny_backbone_config, num_classes=3).save_to_preset(str(tmp_path))
    task_file = tmp_path / "task.json"
    task = json.loads(task_file.read_text())
    del task["config"]["label_names"]  # as written before the argument existed
    task_file.write_text(json.dumps(task))
    restored = keras_albert.AlbertClassifier.from_preset(str(tmp_path))
    assert restored.label_names is None
    assert restored.get_config()["label_names"] is None


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(num_classes=3, label_names=["a", "b"]), "3 names for num_classes=3. Received 2"),
        (dict(num_classes=2, label_names=["a", "a"]), "distinct. Repeated: \\['a'\\]"),
        (dict(num_classes=2, label_names=["a", 1]), "non-empty strings"),
        (dict(num_classes=2, label_names=["a", ""]), "non-empty strings"),
        (dict(num_classes=2, label_names="ab"), "list of strings"),
        (dict(num_classes=1, label_names=["score"]), "regressor"),
    ],
)
def test_bad_label_names_are_refused(tokenizer, tiny_backbone_config, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _classifier(tokenizer, tiny_backbone_config, **kwargs)


def test_token_classifier_keeps_its_names(tmp_path, tokenizer, tiny_backbone_config):
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
    )
    preprocessor = keras_albert.AlbertTokenClassifierPreprocessor(tokenizer, sequence_length=16)
    tagger = keras_albert.AlbertTokenClassifier(
        backbone, num_classes=3, preprocessor=preprocessor, label_names=["O", "B-PER", "I-PER"]
    )
    tagger.save_to_preset(str(tmp_path))
    assert keras_albert.AlbertTokenClassifier.from_preset(str(tmp_path)).label_names == ["O", "B-PER", "I-PER"]
    with pytest.raises(ValueError, match="one name per class"):
        keras_albert.AlbertTokenClassifier(backbone, num_classes=2, label_names=["O"])



@pytest.mark.parametrize("num_classes", ["26", 2.0, True, 0])
def test_a_num_classes_that_is_not_an_int_is_named(num_classes):
    from keras_albert.models.label_names import check_label_names

    with pytest.raises(ValueError) as error:
        check_label_names([f"c{i}" for i in range(26)], num_classes)
    message = str(error.value)
    assert "\n" not in message and "`num_classes` must be a positive int" in message
    assert f"num_classes={num_classes!r}" in message and "names for" not in message
