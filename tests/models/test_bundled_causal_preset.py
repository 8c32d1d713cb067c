"""The bundled `albert_tiny_causal_en`: found offline, generates text, and
predicts held-out Persuasion far better than its untrained shape.

Measured here on every preset load, not read from a record: the record
(`pretraining_metrics.json`) is what the run wrote."""

import json

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.data.causal_windows import document_stream
from keras_albert.data.causal_windows import pack_windows
from keras_albert.data.pretraining_instances import tokenize_documents
from keras_albert.pipelines.causal_pretraining import heldout_loss
from keras_albert.presets.preset_resolution import bundled_presets
from keras_albert.presets.preset_resolution import bundled_presets_dir

NAME = "albert_tiny_causal_en"
PRESET = bundled_presets_dir() / NAME


def persuasion_windows(every):
    """Every `every`-th 128-token window of Persuasion (held out of the
    preset's training text), as the pretraining pipeline packs it."""
    from keras_albert.datasets.austen import HELD_OUT_NOVEL
    from keras_albert.datasets.austen import load_austen_novel

    proto = (PRESET / "assets" / "tokenizer" / "vocabulary.spm").read_bytes()
    lowercase = json.loads((PRESET / "tokenizer.json").read_text())["config"]["lowercase"]
    [document] = tokenize_documents([list(load_austen_novel(HELD_OUT_NOVEL))], proto, lowercase)
    tokenizer = keras_albert.AlbertTokenizer.from_preset(NAME)
    stream = document_stream([document.token_ids], tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]"))
    windows = pack_windows(stream, 128)
    return {name: rows[::every] for name, rows in windows.items()}


def test_bundled_and_listed():
    assert NAME in bundled_presets()
    assert NAME in keras_albert.AlbertCausalLM.presets
    task = json.loads((PRESET / "task.json").read_text())
    assert task["class_name"] == "AlbertCausalLM"
    assert task["config"]["backbone"]["config"]["causal"] is True


def test_generates_offline_with_and_without_the_cache(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "create_connection", no_network)
    causal_lm = keras_albert.AlbertCausalLM.from_preset(NAME)
    causal_lm.compile(sampler="greedy")
    prompts = ["it is a truth universally acknowledged", "in the beginning", "the git command"]
    cached = causal_lm.generate(prompts, max_length=40)
    assert cached == causal_lm.generate(prompts, max_length=40, use_cache=False)
    for prompt, text in zip(prompts, cached):
        # Greedy continues each prompt with text: no "⁇" (what <unk> prints).
        assert text.startswith(prompt) and len(text) > len(prompt) and "\u2047" not in text, text
    assert sum(len(text.split()) for text in cached) > sum(len(p.split()) for p in prompts) + 10


@pytest.mark.large
def test_held_out_perplexity_far_below_the_untrained_shape():
    """Per-token perplexity on 109 windows spread over Persuasion.
    Measured 2026-11-27: 169.8 for the preset (167.5 on all 869 windows,
    its `pretraining_metrics.json`), 8,031 for the same shape untrained (a
    uniform guess over 8,000 pieces scores 8,000)."""
    windows = persuasion_windows(every=8)
    assert len(windows["lengths"]) >= 100
    trained = keras_albert.AlbertCausalLM.from_preset(NAME, preprocessor=None)
    keras.utils.set_random_seed(0)
    untrained = keras_albert.AlbertCausalLM(
        keras_albert.AlbertBackbone.from_config(trained.backbone.get_config()))
    preset = heldout_loss(trained, windows, batch_size=32)["perplexity"]
    random = heldout_loss(untrained, windows, batch_size=32)["perplexity"]
    assert preset < 200, preset  # measured 169.8
    assert random > 20 * preset, (random, preset)
    assert np.isfinite(preset)
