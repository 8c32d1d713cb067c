"""A preset in keras-hub's format (how the official v2 models are published)
loads into keras_albert classes with identical outputs."""

import keras_hub
import numpy as np
import pytest

import keras_albert
from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights
from keras_albert.convert.keras_hub_weights import set_keras_hub_backbone_weights
from keras_albert.convert.tf1_names import get_backbone_weights


@pytest.fixture()
def keras_hub_preset(tmp_path, sentencepiece_proto):
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=80, num_layers=4, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, num_groups=2, max_sequence_length=16,
    )
    backbone.save_to_preset(str(tmp_path / "kh"))
    keras_hub.models.AlbertTokenizer(proto=sentencepiece_proto).save_to_preset(
        str(tmp_path / "kh")
    )
    return tmp_path / "kh", backbone


def test_keras_hub_preset_loads_into_our_classes(tmp_path, monkeypatch, keras_hub_preset):
    monkeypatch.setenv("KERAS_ALBERT_CACHE", str(tmp_path / "cache"))
    path, theirs = keras_hub_preset
    ours = keras_albert.AlbertBackbone.from_preset(str(path))
    x = {
        "token_ids": np.array([[2, 10, 11, 12, 3, 0]], "int32"),
        "segment_ids": np.zeros((1, 6), "int32"),
        "padding_mask": np.array([[1, 1, 1, 1, 1, 0]], "int32"),
    }
    assert np.abs(
        np.asarray(ours(x)["sequence_output"]) - np.asarray(theirs(x)["sequence_output"])
    ).max() <= 1e-5
    tokenizer = keras_albert.AlbertTokenizer.from_preset(str(path))
    assert tokenizer.lowercase
    classifier = keras_albert.AlbertClassifier.from_preset(str(path), num_classes=2)
    # No preprocessor.json in the preset: pad to what the backbone holds.
    assert classifier.preprocessor.sequence_length == 16
    assert classifier.predict(["the cat"], verbose=0).shape == (1, 2)
    # Converted once, then served from the cache.
    assert len(list((tmp_path / "cache" / "converted").iterdir())) == 1


def test_ours_back_to_keras_hub_is_exact(tiny_backbone_config):
    ours = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, num_groups=2))
    theirs = keras_hub.models.AlbertBackbone(
        **{k: v for k, v in tiny_backbone_config.items()}, num_groups=2
    )
    set_keras_hub_backbone_weights(theirs, get_backbone_weights(ours))
    for name, array in keras_hub_backbone_weights(theirs).items():
        np.testing.assert_array_equal(array, get_backbone_weights(ours)[name])


def test_mismatched_weights_are_reported_in_one_error(tiny_backbone_config):
    ours = keras_albert.AlbertBackbone(**tiny_backbone_config)
    weights = get_backbone_weights(ours)
    weights.pop("bert/pooler/dense/kernel")
    weights["bert/encoder/unknown"] = np.zeros(3)
    weights["bert/embeddings/word_embeddings"] = np.zeros((3, 3))
    before = ours.get_weights()
    with pytest.raises(ValueError) as error:
        from keras_albert.convert.tf1_names import set_backbone_weights

        set_backbone_weights(ours, weights)
    message = str(error.value)
    assert "missing" in message and "bert/pooler/dense/kernel" in message
    assert "unexpected" in message and "bert/encoder/unknown" in message
    assert "wrong shapes" in message and "word_embeddings" in message
    # Nothing was assigned.
    for a, b in zip(before, ours.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_keras_hub_preset_round_trip_through_ours_is_exact(
    tmp_path, monkeypatch, keras_hub_preset, sentencepiece_proto
):
    from keras_albert.convert.keras_hub_preset import convert_keras_hub_preset
    from keras_albert.convert.keras_hub_preset import export_keras_hub_preset

    path, theirs = keras_hub_preset
    convert_keras_hub_preset(path, tmp_path / "ours")
    ours = keras_albert.AlbertBackbone.from_preset(str(tmp_path / "ours"))
    export_keras_hub_preset(ours, tmp_path / "back", vocabulary=sentencepiece_proto)
    again = keras_hub.models.AlbertBackbone.from_preset(str(tmp_path / "back"))
    assert [w.shape for w in again.weights] == [w.shape for w in theirs.weights]
    for a, b in zip(again.get_weights(), theirs.get_weights()):
        np.testing.assert_array_equal(a, b)
    tokenizer = keras_hub.models.AlbertTokenizer.from_preset(str(tmp_path / "back"))
    assert tokenizer.vocabulary_size() == 80


def test_configs_keras_hub_cannot_express_are_refused(tmp_path, tiny_backbone_config):
    from keras_albert.convert.keras_hub_preset import export_keras_hub_preset

    ours = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, num_layers=3, num_groups=2, activation="relu")
    )
    with pytest.raises(ValueError) as error:
        export_keras_hub_preset(ours, tmp_path / "back")
    assert "activation='relu'" in str(error.value)
    assert "num_layers=3" in str(error.value)
    assert not (tmp_path / "back").exists()
