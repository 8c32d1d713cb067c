"""`pretrain` end to end on JAX with TensorFlow unimportable: NumPy
instance files, checkpoints and a preset that TensorFlow loads; killed with
SIGKILL and run again, it ends with the uninterrupted run's weights, with
stored masks, and with dynamic masks and a teacher's sentence embeddings
together (that dynamic masking draws other masks than the stored ones,
repeatably: tests/pipelines/test_pretraining_inputs.py)."""

import json

import numpy as np
import pytest

import keras_albert
from tests.backends.cli_batches import run_batch
from tests.cli.test_pretrain_command import _arguments
from tests.cli.test_pretrain_command import _write_corpus
from tests.conftest import synthetic_sentences

pytestmark = pytest.mark.large


def _jax_arguments(corpus, output, heldout=None, **overrides):
    return _arguments(corpus, output, heldout, dynamic_masking="false", **overrides)


def _weights(output):
    pretrainer = keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))
    return [np.asarray(w) for w in pretrainer.weights]


def _teacher_directory(path, count=4200, dim=6):
    path.mkdir()
    (path / "texts.txt").write_text("\n".join(synthetic_sentences(count, seed=11)) + "\n")
    vectors = np.random.default_rng(0).normal(size=(count, dim)).astype("float32")
    np.save(path / "vectors.npy", vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return str(path)


def _tokenize(corpus, heldout, preset, directory):
    """The corpora as .npz token ids, with the preset's vocabulary (here, on
    TensorFlow)."""
    from keras_albert.data.documents import read_documents
    from keras_albert.data.pretraining_instances import tokenize_documents
    from keras_albert.data.tokenized_corpus import write_tokenized_corpus

    proto = (preset / "assets" / "tokenizer" / "vocabulary.spm").read_bytes()
    for name, source in (("train", corpus), ("heldout", heldout)):
        write_tokenized_corpus(tokenize_documents(read_documents([source]), proto), directory / f"{name}.npz", 60)
    return str(directory / "train.npz"), str(directory / "heldout.npz")


class _Killed:
    """What a job that SIGKILLed its process returns: the process's status."""

    def __init__(self, process):
        self.returncode, self.stdout, self.stderr = process.returncode, "", process.stderr


def _batch(jobs, directory):
    """{name: the job's result} for `jobs` ({name: job}) run in one JAX
    process; a job that killed the process (the last) gets `_Killed`."""
    # The runs train the same tiny model: XLA compiles its programs once,
    # through the session's cache (conftest.jax_compilation_cache).
    process, results = run_batch(list(jobs.values()), directory)
    assert len(results) >= len(jobs) - 1, process.stderr[-3000:]
    done = {name: _Result(result) for name, result in zip(jobs, results)}
    return {name: done.get(name, _Killed(process)) for name in jobs}


class _Result:
    def __init__(self, result):
        self.returncode, self.stdout, self.stderr = result["returncode"], result["stdout"], result["stderr"]
        self.looked_at = result["looked_at"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every pretrain command line of this file, in three JAX processes (a
    process start costs seconds): each kill -9 ends its process, and the
    same command line run again resumes in the next."""
    root = tmp_path_factory.mktemp("pretrain_jax")
    corpus = _write_corpus(root / "corpus.txt")
    heldout = _write_corpus(root / "heldout.txt", documents=6, seed=9)
    teacher = _teacher_directory(root / "teacher")
    (root / "ids.npz").write_bytes(b"")

    def teacher_arguments(output):
        return _arguments(corpus, root / output, heldout, dynamic_masking="true",
                          teacher_embeddings=teacher, embedding_sequence_length=16)

    runs = dict(root=root, corpus=corpus, heldout=heldout)
    runs.update(_batch({
        "straight": {"argv": _jax_arguments(corpus, root / "straight", heldout)},
        "teacher_straight": {"argv": teacher_arguments("teacher_straight")},
        "mixed": {"argv": ["pretrain", "--corpus", corpus, "--corpus", str(root / "ids.npz"),
                           "--output", str(root / "mixed"), "--vocab_size", "60"]},
        "tiny": {"argv": _jax_arguments(corpus, root / "tiny") + ["--time_budget_minutes", "1"]},
        "killed": {"argv": _jax_arguments(corpus, root / "killed", heldout), "kill_at_batch": 6},
    }, root / "first"))
    # What the killed run left, before the next command line resumes it.
    runs["killed_left"] = sorted(str(p.relative_to(root / "killed")) for p in root.joinpath("killed").rglob("*"))
    runs.update(_batch({
        "resumed": {"argv": _jax_arguments(corpus, root / "killed", heldout)},
        "teacher_killed": {"argv": teacher_arguments("teacher_killed"), "kill_at_batch": 6},
    }, root / "second"))
    tokenized = root / "tokenized"
    tokenized.mkdir()
    train_ids, heldout_ids = _tokenize(corpus, heldout, root / "straight" / "preset", tokenized)
    budgeted = _jax_arguments(train_ids, root / "budgeted", heldout_ids, init_preset=str(root / "straight" / "preset"))
    runs.update(_batch({
        "teacher_resumed": {"argv": teacher_arguments("teacher_killed")},
        "budget_stopped": {
            "argv": [*budgeted, "--time_budget_minutes", "0.05"], "time_budget_reserve_seconds": 1,
            # The next command line rewrites them.
            "look_at": [str(root / "budgeted" / name) for name in ("metrics.json", "preset/config.json")],
        },
        "budget_finished": {"argv": budgeted},
    }, root / "third"))
    return runs


def test_writes_numpy_data_checkpoints_and_a_preset(runs):
    result, output = runs["straight"], runs["root"] / "straight"
    assert result.returncode == 0, result.stderr[-3000:]
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


def test_kill_9_then_same_command_gives_uninterrupted_weights(runs):
    killed, resumed = runs["killed"], runs["resumed"]
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert "checkpoints/step-000000004.npz" in runs["killed_left"]
    assert "preset" not in runs["killed_left"]
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed at step 4" in resumed.stdout
    for got, expected in zip(_weights(runs["root"] / "killed"), _weights(runs["root"] / "straight"), strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_teacher_embeddings_train_a_head_and_resume_after_kill_9(runs):
    """--teacher_embeddings and --dynamic_masking together, off TensorFlow:
    teacher batch i joins pretraining batch i, so the resumed run ends with
    the uninterrupted run's weights, embedding head included."""
    straight, killed = runs["root"] / "teacher_straight", runs["root"] / "teacher_killed"
    assert runs["teacher_straight"].returncode == 0, runs["teacher_straight"].stderr[-3000:]
    metrics = json.loads((straight / "metrics.json").read_text())
    for name in ("sentence_embedding_cosine", "mlm_accuracy"):
        assert np.isfinite(metrics["train"][name]) and np.isfinite(metrics["heldout"][name])
    assert keras_albert.AlbertPretrainer.from_preset(str(straight / "preset")).sentence_embedding_dim == 6
    assert runs["teacher_killed"].returncode == -9, runs["teacher_killed"].stderr[-2000:]
    resumed = runs["teacher_resumed"]
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed at step 4" in resumed.stdout
    for got, expected in zip(_weights(killed), _weights(straight), strict=True):
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_tokenized_corpus_and_time_budget_then_the_same_command_continues(runs):
    """What a GPU run does: a corpus tokenized beforehand (.npz) with the
    preset's vocabulary, continued from that preset, stopped by the wall-time
    budget at a checkpoint with a preset written; run again, it finishes."""
    stopped, finished, output = runs["budget_stopped"], runs["budget_finished"], runs["root"] / "budgeted"
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    metrics = json.loads(stopped.looked_at[str(output / "metrics.json")])
    assert metrics["stopped_by_time_budget_at_step"] == 4
    assert "stopped at step 4 of 12 to stay within --time_budget_minutes=0.05" in stopped.stdout
    assert stopped.looked_at[str(output / "preset" / "config.json")] is not None
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "resumed at step 4" in finished.stdout
    assert "stopped_by_time_budget_at_step" not in json.loads((output / "metrics.json").read_text())
    assert (output / "checkpoints" / "step-000000012.npz").is_file()


def test_mixed_corpus_kinds_and_tiny_budgets_are_refused(runs):
    mixed, tiny = runs["mixed"], runs["tiny"]
    assert mixed.returncode == 2 and "mixes tokenized corpora (.npz) with text files" in mixed.stderr
    assert not (runs["root"] / "mixed").exists()
    assert tiny.returncode == 2
    assert "`time_budget_minutes` must leave more than 90 s" in tiny.stderr
    assert not (runs["root"] / "tiny").exists()
