"""`generate` as a SavedModel signature taking prompt strings (issue 37,
item 5): the loaded export decodes what `generate` decodes (greedy, with
the cache, prompts of different lengths in one batch), needs no Keras,
leaves the model's own sampler alone, and the export command writes it
(and refuses formats that cannot hold it, in one line)."""

import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the SentencePiece op of the loaded graph)

import keras_albert
from keras_albert.export.serving_saved_model import export_serving_saved_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROMPTS = ["it is a truth", "mr. darcy said that he would", "a"]


@pytest.fixture(scope="module")
def causal_lm():
    keras.utils.set_random_seed(3)
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=2, num_groups=1, num_heads=2,
        embedding_dim=16, hidden_dim=32, intermediate_dim=64, max_sequence_length=24, causal=True,
    )
    preprocessor = keras_albert.AlbertCausalLMPreprocessor(tokenizer, sequence_length=20)
    return keras_albert.AlbertCausalLM(backbone, preprocessor=preprocessor)


def test_the_served_generate_decodes_what_generate_decodes(causal_lm, tmp_path):
    causal_lm.compile(sampler="top_k")
    difference = export_serving_saved_model(causal_lm, tmp_path / "served", check_texts=PROMPTS)
    assert difference == 0.0
    assert causal_lm.sampler.__class__.__name__ == "TopKSampler"  # left as it was

    loaded = tf.saved_model.load(str(tmp_path / "served"))
    served = loaded.signatures["serving_default"](prompt=tf.constant(PROMPTS))
    causal_lm.compile(sampler="greedy")
    expected = causal_lm.generate(PROMPTS)
    assert [text.decode() for text in served["text"].numpy()] == expected
    packed = causal_lm.preprocessor.generate_preprocess(tf.constant(PROMPTS))
    preprocessor, causal_lm.preprocessor = causal_lm.preprocessor, None  # ids in, ids out
    try:
        generated = causal_lm.generate({k: np.asarray(v) for k, v in packed.items()},
                                       stop_token_ids=[preprocessor.tokenizer.end_token_id])
    finally:
        causal_lm.preprocessor = preprocessor
    np.testing.assert_array_equal(served["token_ids"].numpy(), generated["token_ids"])
    # Random weights decode new pieces after every prompt.
    prompt_lengths = np.asarray(packed["padding_mask"]).sum(axis=1)
    assert (served["padding_mask"].numpy().sum(axis=1) > prompt_lengths).all()


def test_the_export_command_writes_it_and_refuses_tflite(causal_lm, tmp_path):
    causal_lm.save_to_preset(str(tmp_path / "preset"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    written = subprocess.run(
        [sys.executable, "-m", "keras_albert", "export", f"--preset={tmp_path / 'preset'}",
         "--format=saved_model", f"--output={tmp_path / 'served'}"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert written.returncode == 0, written.stderr[-2000:]
    assert (tmp_path / "served" / "saved_model.pb").is_file()
    refused = subprocess.run(
        [sys.executable, "-m", "keras_albert", "export", f"--preset={tmp_path / 'preset'}",
         "--format=tflite", f"--output={tmp_path / 'lm.tflite'}"],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: Preset {str(tmp_path / 'preset')!r} holds an AlbertCausalLM, which exports as "
        "--format=saved_model only (a `generate` signature). Received: --format=tflite"
    )
    assert not (tmp_path / "lm.tflite").exists()
