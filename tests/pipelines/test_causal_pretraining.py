"""`pretrain --objective=causal_lm` (issue 37, item 2): the loss over real
tokens only, text and tokenized corpora packed alike, held-out text kept
out, bad flags refused in one line, --init_preset from a bidirectional or
a causal preset, and tiny runs on TensorFlow and on JAX without
TensorFlow that write a preset `generate` loads and, killed with -9 and
run again, end with the uninterrupted run's weights."""

import dataclasses
import json
import math
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.data.pretraining_instances import tokenize_documents
from keras_albert.data.tokenized_corpus import write_tokenized_corpus
from keras_albert.pipelines import causal_pretraining
from keras_albert.pipelines.pretraining import run_pretraining
from keras_albert.pipelines.pretraining_settings import PretrainingSettings
from tests.cli.test_pretrain_command import _write_corpus
from tests.in_process import command_in_this_process

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("causal_pretraining_worker.py")
TINY_CONFIG = json.dumps(dict(num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
                              intermediate_dim=32, max_sequence_length=32, dropout=0.1))


def _arguments(corpus, output, eval_corpus=None, **overrides):
    values = dict(objective="causal_lm", config=TINY_CONFIG, vocab_size=60, max_seq_length=32,
                  batch_size=8, train_steps=12, warmup_steps=2, learning_rate=0.01,
                  checkpoint_every=4)
    values.update(overrides)
    arguments = ["pretrain", "--corpus", corpus, "--output", str(output)]
    if eval_corpus:
        arguments += ["--eval_corpus", eval_corpus]
    return arguments + [f"--{name}={value}" for name, value in values.items()]


def _run(arguments, backend="tensorflow", **env):
    blocked = {"BLOCK_TENSORFLOW": "1"} if backend == "jax" else {}
    return subprocess.run(
        [sys.executable, str(WORKER), *arguments],
        env=dict(os.environ, KERAS_BACKEND=backend, PYTHONPATH=str(ROOT), **blocked, **env),
        capture_output=True, text=True, timeout=900,
    )


def _run_uninterrupted(arguments, backend, capsys):
    """A run no kill stops: in this process where it is already on
    `backend` with TensorFlow importable; otherwise in the worker."""
    if backend == "tensorflow" == keras.config.backend():
        status, out, err = command_in_this_process(arguments, capsys)
        return subprocess.CompletedProcess(arguments, status, out, err)
    return _run(arguments, backend)


def _weights(output):
    causal_lm = keras_albert.AlbertCausalLM.from_preset(str(output / "preset"))
    return [np.asarray(w) for w in causal_lm.weights]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("causal_corpora")
    return _write_corpus(root / "corpus.txt"), _write_corpus(root / "heldout.txt", documents=6, seed=9)


def test_the_loss_is_the_mean_over_real_targets_not_over_every_position():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 5, 7)).astype("float32")
    labels = rng.integers(0, 7, size=(3, 5))
    weights = np.ones((3, 5), "float32")
    weights[2, 2:] = 0  # a short last window
    log_probabilities = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    token_losses = -np.take_along_axis(log_probabilities, labels[..., None], -1)[..., 0]
    expected = (token_losses * weights).sum() / weights.sum()
    got = float(causal_pretraining.causal_lm_loss()(labels, logits, sample_weight=weights))
    assert got == pytest.approx(expected, rel=1e-5)
    default = float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits, weights))
    assert default == pytest.approx((token_losses * weights).sum() / weights.size, rel=1e-5)
    assert abs(default - expected) > 0.1


def test_heldout_loss_sums_every_real_target_as_float64_numpy_does():
    """The held-out loss (computed on the backend in float32) matches a
    float64 NumPy log-softmax over the same logits, a short last window's
    padding left out."""
    windows = {"token_ids": np.random.default_rng(3).integers(5, 40, size=(5, 9)).astype(np.int32),
               "lengths": np.array([9, 9, 9, 9, 4], np.int32)}
    inputs = keras.Input((8,), dtype="int32", name="token_ids")
    mask = keras.Input((8,), dtype="int32", name="padding_mask")
    embedded = keras.layers.Embedding(40, 12, embeddings_initializer=keras.initializers.RandomNormal(seed=1))(inputs)
    model = keras.Model({"token_ids": inputs, "padding_mask": mask}, keras.layers.Dense(40)(embedded))
    expected, count = 0.0, 0
    for row, length in zip(windows["token_ids"], windows["lengths"]):
        logits = np.asarray(model.predict_on_batch({"token_ids": row[None, :-1],
                                                    "padding_mask": np.ones((1, 8), "int32")})[0], np.float64)
        log_probabilities = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        targets = row[1:length]
        expected -= log_probabilities[np.arange(len(targets)), targets].sum()
        count += len(targets)
    result = causal_pretraining.heldout_loss(model, windows, batch_size=2)
    assert result["tokens"] == count == 4 * 8 + 3
    assert result["loss_per_token"] == pytest.approx(expected / count, rel=1e-6)
    assert result["perplexity"] == pytest.approx(math.exp(expected / count), rel=1e-6)


def test_text_and_tokenized_corpora_give_the_same_windows(corpora, tmp_path):
    corpus, _ = corpora
    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")
    settings = PretrainingSettings(corpus=[corpus], output=str(tmp_path), objective="causal_lm",
                                   max_seq_length=16, init_preset="albert_tiny_en")
    from keras_albert.data.documents import read_documents

    write_tokenized_corpus(tokenize_documents(read_documents([corpus], "blank_line", "line"),
                                              tokenizer.proto),
                           tmp_path / "corpus.npz", tokenizer.vocabulary_size())
    text, _ = causal_pretraining.build_windows(settings, tokenizer.proto, tokenizer, tmp_path / "text")
    tokenized, _ = causal_pretraining.build_windows(
        dataclasses.replace(settings, corpus=[str(tmp_path / "corpus.npz")]),
        tokenizer.proto, tokenizer, tmp_path / "npz",
    )
    a, b = np.load(text), np.load(tokenized)
    np.testing.assert_array_equal(a["token_ids"], b["token_ids"])
    # 30 documents, each opened by [CLS] and closed by [SEP].
    assert (a["token_ids"][:, 1:] == tokenizer.end_token_id).sum() == 30


@pytest.mark.parametrize("overrides, message", [
    (dict(objective="gpt"), "`objective` must be one of ['mlm', 'causal_lm']. Received: objective='gpt'"),
    (dict(dynamic_masking=True), "`dynamic_masking` is a masked-LM setting"),
    (dict(teacher_embeddings="teacher"), "`teacher_embeddings` is a masked-LM setting"),
])
def test_bad_settings_are_refused_before_any_work(corpora, tmp_path, overrides, message):
    corpus, _ = corpora
    settings = PretrainingSettings(corpus=[corpus], output=str(tmp_path / "run"),
                                   **{"objective": "causal_lm", **overrides})
    with pytest.raises(ValueError) as error:
        run_pretraining(settings)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not (tmp_path / "run").exists()


def test_held_out_text_that_the_corpus_trains_on_is_refused(corpora, tmp_path):
    corpus, heldout = corpora
    settings = PretrainingSettings(corpus=[corpus, heldout], eval_corpus=[heldout],
                                   output=str(tmp_path / "run"), objective="causal_lm")
    with pytest.raises(ValueError, match="is also matched by `corpus`"):
        run_pretraining(settings)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("flag", ["--sentence_task=none", "--dynamic_masking=true", "--dupe_factor=3"])
def test_masked_lm_flags_with_causal_lm_fail_in_one_line(corpora, tmp_path, flag, capsys):
    corpus, _ = corpora
    status, _, err = command_in_this_process(["pretrain", "--objective=causal_lm", "--corpus", corpus,
                            "--output", str(tmp_path / "run"), flag], capsys)
    assert status == 2
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert lines == [f"error: {flag.split('=')[0]} is a masked-LM flag; --objective=causal_lm predicts "
                     "every next token and takes none of --sentence_task, --dynamic_masking, "
                     "--max_predictions_per_seq, --masked_lm_prob, --dupe_factor, --teacher_embeddings, "
                     "--embedding_sequence_length, --num_shards, --shuffle_buffer_size."]
    assert not (tmp_path / "run").exists()


def test_an_unknown_objective_fails_in_one_line(corpora, tmp_path, capsys):
    corpus, _ = corpora
    status, _, err = command_in_this_process(["pretrain", "--objective=gpt", "--corpus", corpus,
                            "--output", str(tmp_path / "run")], capsys)
    assert status != 0
    assert "--objective" in err and "causal_lm" in err
    assert not (tmp_path / "run").exists()


def test_init_preset_bidirectional_weights_become_causal():
    settings = PretrainingSettings(corpus=[], output="", objective="causal_lm", init_preset="albert_tiny_en")
    causal_lm = causal_pretraining.initial_causal_lm(settings)
    assert causal_lm.backbone.causal
    encoder = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    assert not encoder.causal
    for got, expected in zip(causal_lm.backbone.get_weights(), encoder.get_weights(), strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.large
@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_tiny_run_writes_a_generating_preset_and_resumes_after_kill_9_exactly(corpora, tmp_path, backend, capsys):
    corpus, heldout = corpora
    straight = tmp_path / "straight"
    result = _run_uninterrupted(_arguments(corpus, straight, heldout), backend, capsys)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"{'jax backend' if backend == 'jax' else 'Strategy'}" in result.stdout
    metrics = json.loads((straight / "metrics.json").read_text())
    heldout_metrics = metrics["heldout"]
    assert heldout_metrics["perplexity"] == pytest.approx(math.exp(heldout_metrics["loss_per_token"]))
    assert heldout_metrics["loss_per_token"] < math.log(60)  # better than uniform over the pieces
    curve = [json.loads(line) for line in (straight / "curve.jsonl").read_text().splitlines()]
    assert [row["step"] for row in curve] == [4, 8, 12]
    assert all("heldout_perplexity" in row for row in curve)

    killed = tmp_path / "killed"
    stopped = _run(_arguments(corpus, killed, heldout), backend, KILL_AT_BATCH="6")
    assert stopped.returncode == -9, stopped.stderr[-2000:]
    assert not (killed / "preset").exists()
    resumed = _run_uninterrupted(_arguments(corpus, killed, heldout), backend, capsys)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed at step 4" in resumed.stdout
    for got, expected in zip(_weights(killed), _weights(straight), strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6)

    # The preset generates, through the API, and the JAX run's through the
    # command, on this process's backend (TensorFlow, the default) as a
    # fresh `python -m keras_albert` here would be.
    causal_lm = keras_albert.AlbertCausalLM.from_preset(str(straight / "preset"))
    causal_lm.compile(sampler="greedy")
    assert isinstance(causal_lm.generate(["the"], max_length=12)[0], str)
    if backend == "jax":
        status, out, err = command_in_this_process(["generate", f"--preset={straight / 'preset'}", "--prompt=the",
                                  "--max_length=12"], capsys)
        assert status == 0, err[-2000:]

    # Continuing from the causal preset keeps its output projection.
    settings = PretrainingSettings(corpus=[], output="", objective="causal_lm",
                                   init_preset=str(straight / "preset"))
    continued = causal_pretraining.initial_causal_lm(settings)
    for got, expected in zip(continued.get_weights(), causal_lm.get_weights(), strict=True):
        np.testing.assert_array_equal(got, expected)


def test_a_masked_lm_run_directory_is_not_reused_for_causal_lm(corpora, tmp_path):
    corpus, _ = corpora
    output = tmp_path / "run"
    output.mkdir()
    (output / "settings.json").write_text(json.dumps({"corpus": [corpus], "objective": "mlm"}))
    (output / "vocabulary.spm").write_bytes(b"")
    settings = PretrainingSettings(corpus=[corpus], output=str(output), objective="causal_lm")
    with pytest.raises(ValueError, match="holds a masked-LM pretraining run"):
        causal_pretraining._check_settings(settings, output / "settings.json")


def test_a_causal_lm_run_directory_is_not_reused_for_masked_lm(corpora, tmp_path):
    from keras_albert.pipelines import pretraining

    corpus, _ = corpora
    output = tmp_path / "run"
    output.mkdir()
    (output / "settings.json").write_text(json.dumps({"corpus": [corpus], "objective": "causal_lm"}))
    settings = PretrainingSettings(corpus=[corpus], output=str(output))
    with pytest.raises(ValueError, match="holds a causal_lm pretraining run; a masked-LM run needs a new"):
        pretraining._check_settings(settings, output / "settings.json")
