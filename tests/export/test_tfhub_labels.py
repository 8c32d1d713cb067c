"""The TF-Hub export of a classifier keeps its class names in labels.txt."""

import pytest

import keras_albert
from keras_albert.export.label_file import read_label_file
from keras_albert.export.tfhub_export import export_tfhub


@pytest.mark.large
def test_classifier_names_go_beside_the_modules(tmp_path, tiny_backbone_config, sentencepiece_proto):
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=80))
    classifier = keras_albert.AlbertClassifier(backbone, num_classes=2, label_names=["no", "yes"])
    assert export_tfhub(classifier, sentencepiece_proto, tmp_path / "hub") <= 1e-5
    assert read_label_file(tmp_path / "hub") == ["no", "yes"]
    assert (tmp_path / "hub" / "encoder" / "saved_model.pb").is_file()
    # Without names: no file, as before.
    unnamed = keras_albert.AlbertClassifier(backbone, num_classes=2)
    export_tfhub(unnamed, sentencepiece_proto, tmp_path / "hub")
    assert read_label_file(tmp_path / "hub") is None
