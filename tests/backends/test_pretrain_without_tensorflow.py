"""`pretrain` end to end on JAX with TensorFlow unimportable: NumPy
instance files, checkpoints and a preset that TensorFlow loads; killed with
SIGKILL and run again, it ends with the uninterrupted run's weights, with
stored masks, and with dynamic masks and a teacher's sentence embeddings
together (that dynamic masking draws other masks than the stored ones,
repeatably: tests/pipelines/test_pretraining_inputs.py)."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import keras_albert
from tests.cli.test_pretrain_command import _arguments
from tests.cli.test_pretrain_command import _write_corpus
from tests.conftest import synthetic_sentences

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("cli_worker.py")


def _run(arguments, **env):
    return subprocess.run(
        [sys.executable, str(WORKER), *arguments],
        env=dict(os.environ, KERAS_BACKEND="jax", PYTHONPATH=str(ROOT), **env),
        capture_output=True, text=True, timeout=900,
    )


def _jax_arguments(corpus, output, heldout=None, **overrides):
    return _arguments(corpus, output, heldout, dynamic_masking="false", **overrides)


def _weights(output):
    pretrainer = keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))
    return [np.asarray(w) for w in pretrainer.weights]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretrain_jax")
    corpus = _write_corpus(root / "corpus.txt")
    heldout = _write_corpus(root / "heldout.txt", documents=6, seed=9)
    output = root / "straight"
    result = _run(_jax_arguments(corpus, output, heldout))
    assert result.returncode == 0, result.stderr[-3000:]
    return corpus, heldout, output, result


def test_writes_numpy_data_checkpoints_and_a_preset(uninterrupted):
    _, _, output, result = uninterrupted
    assert (output / "data" / "train.npz").is_file() and (output / "data" / "eval.npz").is_file()
    assert not list((output / "data").glob("*.tfrecord"))
    assert sorted(p.name for p in (output / "checkpoints").iterdir()) == [
        "step-000000004.npz", "step-000000008.npz", "step-000000012.npz",
    ]
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["train_steps"] == 12
    assert 0 <= metrics["heldout"]["mlm_accuracy"] <= 1
    assert "jax backend, 1 replica(s)" in result.stdout
    # The preset a JAX run wrote loads here, on TensorFlow.
    assert len(_weights(output)) > 10


def test_kill_9_then_same_command_gives_uninterrupted_weights(uninterrupted, tmp_path):
    corpus, heldout, straight, _ = uninterrupted
    output = tmp_path / "killed"
    killed = _run(_jax_arguments(corpus, output, heldout), KILL_AT_BATCH="6")
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert (output / "checkpoints" / "step-000000004.npz").is_file()
    assert not (output / "preset").exists()
    resumed = _run(_jax_arguments(corpus, output, heldout))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed at step 4" in resumed.stdout
    for got, expected in zip(_weights(output), _weights(straight), strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6)


def _teacher_directory(path, count=4200, dim=6):
    path.mkdir()
    (path / "texts.txt").write_text("\n".join(synthetic_sentences(count, seed=11)) + "\n")
    vectors = np.random.default_rng(0).normal(size=(count, dim)).astype("float32")
    np.save(path / "vectors.npy", vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return str(path)


def test_teacher_embeddings_train_a_head_and_resume_after_kill_9(uninterrupted, tmp_path):
    """--teacher_embeddings and --dynamic_masking together, off TensorFlow:
    teacher batch i joins pretraining batch i, so the resumed run ends with
    the uninterrupted run's weights, embedding head included."""
    corpus, heldout, _, _ = uninterrupted
    teacher = _teacher_directory(tmp_path / "teacher")

    def arguments(output):
        return _arguments(corpus, output, heldout, dynamic_masking="true",
                          teacher_embeddings=teacher, embedding_sequence_length=16)

    straight = tmp_path / "straight"
    result = _run(arguments(straight))
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((straight / "metrics.json").read_text())
    for name in ("sentence_embedding_cosine", "mlm_accuracy"):
        assert np.isfinite(metrics["train"][name]) and np.isfinite(metrics["heldout"][name])
    assert keras_albert.AlbertPretrainer.from_preset(str(straight / "preset")).sentence_embedding_dim == 6
    killed = tmp_path / "killed"
    stopped = _run(arguments(killed), KILL_AT_BATCH="6")
    assert stopped.returncode == -9, stopped.stderr[-2000:]
    resumed = _run(arguments(killed))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed at step 4" in resumed.stdout
    for got, expected in zip(_weights(killed), _weights(straight), strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_tokenized_corpus_and_time_budget_then_the_same_command_continues(uninterrupted, tmp_path):
    """What a GPU run does: a corpus tokenized beforehand (.npz) with the
    preset's vocabulary, continued from that preset, stopped by the wall-time
    budget at a checkpoint with a preset written; run again, it finishes."""
    from keras_albert.data.documents import read_documents
    from keras_albert.data.pretraining_instances import tokenize_documents
    from keras_albert.data.tokenized_corpus import write_tokenized_corpus

    corpus, heldout, straight, _ = uninterrupted
    proto = (straight / "preset" / "assets" / "tokenizer" / "vocabulary.spm").read_bytes()
    for name, source in (("train", corpus), ("heldout", heldout)):
        write_tokenized_corpus(
            tokenize_documents(read_documents([source]), proto), tmp_path / f"{name}.npz", 60
        )
    output = tmp_path / "budgeted"
    arguments = _jax_arguments(
        str(tmp_path / "train.npz"), output, str(tmp_path / "heldout.npz"),
        init_preset=str(straight / "preset"),
    )
    stopped = _run([*arguments, "--time_budget_minutes", "0.05"], TIME_BUDGET_RESERVE_SECONDS="1")
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["stopped_by_time_budget_at_step"] == 4
    assert "stopped at step 4 of 12 to stay within --time_budget_minutes=0.05" in stopped.stdout
    assert (output / "preset" / "config.json").is_file()
    finished = _run(arguments)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "resumed at step 4" in finished.stdout
    assert "stopped_by_time_budget_at_step" not in json.loads((output / "metrics.json").read_text())
    assert (output / "checkpoints" / "step-000000012.npz").is_file()


def test_mixed_corpus_kinds_and_tiny_budgets_are_refused(uninterrupted, tmp_path):
    corpus, _, _, _ = uninterrupted
    (tmp_path / "ids.npz").write_bytes(b"")
    mixed = _run(["pretrain", "--corpus", corpus, "--corpus", str(tmp_path / "ids.npz"),
                  "--output", str(tmp_path / "mixed"), "--vocab_size", "60"])
    assert mixed.returncode == 2 and "mixes tokenized corpora (.npz) with text files" in mixed.stderr
    assert not (tmp_path / "mixed").exists()
    tiny = _run(_jax_arguments(corpus, tmp_path / "tiny") + ["--time_budget_minutes", "1"])
    assert tiny.returncode == 2
    assert "`time_budget_minutes` must leave more than 90 s" in tiny.stderr
    assert not (tmp_path / "tiny").exists()
