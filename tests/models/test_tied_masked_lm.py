"""The masked-LM head a masked LM takes from a pretrainer's preset."""

import ast
import pathlib

import numpy as np
import pytest

import keras_albert
from keras_albert.models import albert_masked_lm
from keras_albert.models.tied_masked_lm import load_masked_lm_head_weights


def _head(model):
    return [np.asarray(w) for w in model.masked_lm_head.weights]


def _refuse_pretrainers(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a pretrainer was built")

    monkeypatch.setattr(keras_albert.AlbertPretrainer, "__init__", refuse)


def test_masked_lm_module_does_not_import_the_pretrainer():
    tree = ast.parse(pathlib.Path(albert_masked_lm.__file__).read_text())
    imported = [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if name and "albert_pretrainer" in name]


def test_bundled_preset_head_is_the_pretrainers(monkeypatch):
    expected = _head(keras_albert.AlbertPretrainer.from_preset("albert_tiny_en"))
    _refuse_pretrainers(monkeypatch)
    masked_lm = keras_albert.AlbertMaskedLM.from_preset("albert_tiny_en")
    loaded = _head(masked_lm)
    assert len(loaded) == len(expected) == 6  # bias, transform, norm and the tied embedding
    for mine, theirs in zip(loaded, expected):
        np.testing.assert_array_equal(mine, theirs)


@pytest.fixture()
def pretrainer_preset(tmp_path, sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    # Sentence heads of both kinds sit in the same file; only the MLM head is read.
    pretrainer = keras_albert.AlbertPretrainer(backbone, sentence_task="nsp", sentence_embedding_dim=4)
    rng = np.random.default_rng(0)
    for weight in pretrainer.masked_lm_head.weights:
        weight.assign(rng.normal(size=weight.shape).astype("float32"))
    pretrainer.save_to_preset(str(tmp_path))
    tokenizer.save_to_preset(str(tmp_path))
    return tmp_path, _head(pretrainer)


def test_pretrainer_preset_head_loads_identically(pretrainer_preset, monkeypatch):
    path, expected = pretrainer_preset
    _refuse_pretrainers(monkeypatch)
    masked_lm = keras_albert.AlbertMaskedLM.from_preset(str(path))
    for mine, theirs in zip(_head(masked_lm), expected):
        np.testing.assert_array_equal(mine, theirs)


def test_a_head_of_another_shape_is_refused(pretrainer_preset, sentencepiece_proto, tiny_backbone_config):
    path, _ = pretrainer_preset
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    other = keras_albert.AlbertMaskedLM(keras_albert.AlbertBackbone(**dict(
        tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size(), embedding_dim=8)))
    before = _head(other)
    with pytest.raises(ValueError, match="task.weights.h5.*albert_masked_lm_head"):
        load_masked_lm_head_weights(other, path / "task.weights.h5")
    for mine, theirs in zip(_head(other), before):
        np.testing.assert_array_equal(mine, theirs)  # nothing loaded
