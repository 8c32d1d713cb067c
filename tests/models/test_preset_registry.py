"""`Class.presets` lists our bundled and official presets, keras-hub style,
and leaves keras-hub's own ALBERT registry as it was."""

import json

import keras_hub
import pytest
from keras_hub.src.utils.preset_utils import BUILTIN_PRESETS

import keras_albert
from keras_albert import models
from keras_albert import tokenizers
from keras_albert.models.albert_presets import OFFICIAL_PRESETS
from keras_albert.presets.preset_resolution import bundled_presets
from keras_albert.presets.preset_resolution import bundled_presets_dir

BUNDLED = ("albert_tiny_en", "albert_tiny_causal_en", "albert_tiny_en_student", "albert_tiny_en_student_supersense")
CLASSES = [
    models.AlbertBackbone, models.AlbertTextClassifier, models.AlbertTextClassifierPreprocessor,
    models.AlbertMaskedLM, models.AlbertMaskedLMPreprocessor, models.AlbertPretrainer,
    models.AlbertMultipleChoice, models.AlbertMultipleChoicePreprocessor,
    models.AlbertTokenClassifier, models.AlbertTokenClassifierPreprocessor,
    models.AlbertQuestionAnswerer, models.AlbertQuestionAnswererPreprocessor,
    tokenizers.AlbertTokenizer,
]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_class_lists_bundled_and_official_presets(cls):
    names = list(cls.presets)
    assert set(BUNDLED) <= set(names)
    assert set(OFFICIAL_PRESETS) <= set(names)
    assert set(names) == set(bundled_presets()) | set(OFFICIAL_PRESETS)


def test_entries_have_keras_hubs_shape_and_true_numbers():
    presets = keras_albert.AlbertBackbone.presets
    for name in BUNDLED:
        entry = presets[name]
        recorded = json.loads((bundled_presets_dir() / name / "metadata.json").read_text())
        assert entry["metadata"]["params"] == recorded["parameter_count"]
        assert entry["metadata"]["bundled"] is True
        assert entry["metadata"]["description"]
        assert "kaggle_handle" not in entry  # shipped in the package
    for name, official in OFFICIAL_PRESETS.items():
        entry = presets[name]
        assert entry["metadata"]["params"] == official["params"]
        assert entry["kaggle_handle"] == official["kaggle_handle"]
        assert set(entry["metadata"]) >= {"description", "params", "path"}


def test_discovered_bundled_presets_load_offline(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "create_connection", no_network)
    presets = models.AlbertBackbone.presets
    offline = [name for name, entry in presets.items() if entry["metadata"].get("bundled")]
    assert sorted(offline) == sorted(BUNDLED)
    for name in offline:
        backbone = models.AlbertBackbone.from_preset(name)
        assert backbone.count_params() == presets[name]["metadata"]["params"]
    tokenizer = tokenizers.AlbertTokenizer.from_preset(offline[0])
    assert tokenizer.vocabulary_size() > 0


def test_keras_hubs_own_albert_registry_is_untouched():
    hub_presets = keras_hub.models.AlbertBackbone.presets
    assert not set(BUNDLED) & set(hub_presets)
    assert not set(BUNDLED) & set(BUILTIN_PRESETS)
    for name in OFFICIAL_PRESETS:
        assert BUILTIN_PRESETS[name] is hub_presets[name]


def test_metadata_names_keras_hub_task_kinds_not_mixins(tmp_path):
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=40, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=8, intermediate_dim=16, max_sequence_length=16)
    backbone.save_to_preset(str(tmp_path / "preset"))
    written = json.loads((tmp_path / "preset" / "metadata.json").read_text())
    # keras-hub's task kinds an ALBERT backbone serves (AlbertCausalLM made
    # it a CausalLM backbone too), not our classes or their mixins.
    assert written["tasks"] == ["CausalLM", "MaskedLM", "TextClassifier"]
    for name in BUNDLED:
        recorded = json.loads((bundled_presets_dir() / name / "metadata.json").read_text())
        assert recorded["tasks"] == written["tasks"], name
