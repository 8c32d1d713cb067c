"""A weights file from another architecture is an error, not a silent skip."""

import shutil

import pytest

import keras_albert


def _backbone(**overrides):
    config = dict(
        vocabulary_size=60, num_layers=2, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
    )
    return keras_albert.AlbertBackbone(**{**config, **overrides})


@pytest.mark.parametrize(
    "ours, other, needles",
    [
        # Surplus arrays: Keras alone dropped these without a word.
        ({}, {"num_groups": 2}, ["the file holds 41 arrays, the model uses 25", "16 unused by the model", "albert_encoder"]),
        ({}, {"sharing": "none"}, ["unused by the model"]),
        # Missing arrays.
        ({"num_groups": 2}, {}, ["the file holds 25 arrays, the model uses 41", "16 missing from the file"]),
        ({}, {"intermediate_dim": 48}, ["with another shape", "file (16, 48) vs model (16, 32)"]),
    ],
)
def test_weights_of_another_architecture_are_refused(tmp_path, ours, other, needles):
    _backbone(**ours).save_to_preset(str(tmp_path / "preset"))
    _backbone(**other).save_to_preset(str(tmp_path / "other"))
    shutil.copy(tmp_path / "other" / "model.weights.h5", tmp_path / "preset" / "model.weights.h5")
    with pytest.raises(ValueError) as error:
        keras_albert.AlbertBackbone.from_preset(str(tmp_path / "preset"))
    message = str(error.value)
    for needle in ["model.weights.h5", "does not match", *needles]:
        assert needle in message, message


def test_matching_weights_still_load(tmp_path):
    backbone = _backbone(num_groups=2)
    backbone.save_to_preset(str(tmp_path / "preset"))
    loaded = keras_albert.AlbertBackbone.from_preset(str(tmp_path / "preset"))
    assert loaded.count_params() == backbone.count_params()


def test_task_weights_of_another_head_are_refused(tmp_path):
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    backbone = _backbone(vocabulary_size=8000)

    def classifier(num_classes):
        return keras_albert.AlbertClassifier(
            backbone, num_classes=num_classes,
            preprocessor=keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16),
        )

    classifier(3).save_to_preset(str(tmp_path / "three"))
    classifier(5).save_to_preset(str(tmp_path / "five"))
    shutil.copy(tmp_path / "five" / "task.weights.h5", tmp_path / "three" / "task.weights.h5")
    with pytest.raises(ValueError, match=r"task.weights.h5.*file \(16, 5\) vs model \(16, 3\)"):
        keras_albert.AlbertClassifier.from_preset(str(tmp_path / "three"))
    # The bundled presets (older task.weights.h5 with optimizer state) load.
    keras_albert.AlbertClassifier.from_preset("albert_tiny_en", num_classes=2)
