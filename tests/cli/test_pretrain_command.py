"""`python -m keras_albert pretrain`: end to end, kill -9 and resume, bad input.

Processes of their own where a process is what is checked (the real entry
point end to end, each kill -9); the rest runs `main(argv)` in this
process: each fresh process costs seconds of TensorFlow's import.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys

import numpy as np
import pytest

import keras_albert
from tests.conftest import synthetic_sentences
from tests.in_process import command_in_this_process

ROOT = pathlib.Path(__file__).resolve().parents[2]
KILLER = pathlib.Path(__file__).with_name("kill_during_pretraining.py")
TINY_CONFIG = json.dumps(
    dict(num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
         intermediate_dim=32, max_sequence_length=32, dropout=0.1)
)


def _write_corpus(path, documents=30, sentences=8, seed=0):
    lines = synthetic_sentences(documents * sentences, seed=seed)
    text = "\n\n".join(
        "\n".join(lines[i : i + sentences]) for i in range(0, len(lines), sentences)
    )
    path.write_text(text + "\n")
    return str(path)


def _arguments(corpus, output, eval_corpus=None, **overrides):
    values = dict(
        config=TINY_CONFIG, vocab_size=60, max_seq_length=32,
        max_predictions_per_seq=5, dupe_factor=2, num_shards=2, batch_size=8,
        train_steps=12, warmup_steps=2, learning_rate=0.01, checkpoint_every=4,
        dynamic_masking="true",
    )
    values.update(overrides)
    arguments = ["pretrain", "--corpus", corpus, "--output", str(output)]
    if eval_corpus:
        arguments += ["--eval_corpus", eval_corpus]
    for name, value in values.items():
        # absl: a boolean's value follows "="; other values either way.
        arguments += [f"--{name}={value}"] if value in ("true", "false") else [f"--{name}", str(value)]
    return arguments


def _run(arguments, script=None, **env):
    command = [sys.executable] + ([str(script)] if script else ["-m", "keras_albert"])
    return subprocess.run(
        command + arguments,
        env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
        capture_output=True, text=True, timeout=600,
    )


def _final_weights(output):
    pretrainer = keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))
    return [w.numpy() for w in pretrainer.weights]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretrain")
    corpus = _write_corpus(root / "corpus.txt")
    heldout = _write_corpus(root / "heldout.txt", documents=6, seed=9)
    output = root / "straight"
    result = _run(_arguments(corpus, output, heldout))
    assert result.returncode == 0, result.stderr[-3000:]
    return corpus, heldout, output, result


@pytest.mark.large
def test_pretrain_writes_every_artifact(uninterrupted):
    _, _, output, result = uninterrupted
    for name in ("vocabulary.spm", "settings.json", "metrics.json", "preset/config.json",
                 "preset/task.json", "preset/tokenizer.json", "preset/preprocessor.json"):
        assert (output / name).is_file(), name
    assert len(list((output / "data").glob("train-*.tfrecord"))) == 2
    assert list((output / "logs").rglob("events.out.tfevents.*"))
    metrics = json.loads((output / "metrics.json").read_text())
    for name in ("mlm_accuracy", "mlm_loss", "sentence_order_accuracy", "sentence_order_loss"):
        assert np.isfinite(metrics["heldout"][name])
    # Progress is shown.
    assert "vocabulary:" in result.stdout and "Steps 9-12 of 12 (checkpoint interval 3/3); run 66 % done" in result.stdout
    # The preset serves a classifier with the trained vocabulary.
    classifier = keras_albert.AlbertClassifier.from_preset(str(output / "preset"), num_classes=3)
    assert classifier.predict(["the cat sat on the mat."], verbose=0).shape == (1, 3)


@pytest.mark.large
def test_kill_9_then_same_command_gives_uninterrupted_weights(uninterrupted, tmp_path, capsys):
    corpus, heldout, straight, _ = uninterrupted
    output = tmp_path / "resumed"
    arguments = _arguments(corpus, output, heldout)
    killed = _run(arguments, script=KILLER, KILL_AT_STEP="6")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not (output / "preset").exists()
    assert (output / "checkpoints" / "ckpt-4.index").is_file()

    status, out, err = command_in_this_process(arguments, capsys)
    assert status == 0, err[-3000:]
    assert "resumed at step 4" in out
    for a, b in zip(_final_weights(straight), _final_weights(output)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.large
def test_rerun_with_other_data_settings_is_refused(uninterrupted, capsys):
    corpus, _, output, _ = uninterrupted
    status, _, err = command_in_this_process(_arguments(corpus, output, max_seq_length=64), capsys)
    assert status == 2
    assert "max_seq_length: 32 -> 64" in err


@pytest.mark.large
@pytest.mark.parametrize(
    "content, overrides, message",
    [
        ("", {}, "holds no text"),
        ("\n\n   \n", {}, "holds no text"),
        (None, {"max_seq_length": 6}, "max_seq_length"),
        (None, {"vocab_size": 100000}, "vocab"),
        (None, {"train_steps": 10}, "checkpoint_every"),
    ],
)
def test_bad_input_gives_a_clear_error_and_no_preset(tmp_path, capsys, content, overrides, message):
    corpus = tmp_path / "corpus.txt"
    if content is None:
        _write_corpus(corpus, documents=4)
    else:
        corpus.write_text(content)
    output = tmp_path / "run"
    # In this process a traceback is an exception out of `main`: the test errors.
    status, _, err = command_in_this_process(_arguments(str(corpus), output, **overrides), capsys)
    assert status != 0
    assert message in err.lower() or message in err
    assert "Traceback" not in err
    assert not (output / "preset").exists()


@pytest.mark.large
def test_missing_corpus_is_named(tmp_path, capsys):
    status, _, err = command_in_this_process(_arguments(str(tmp_path / "nothing*.txt"), tmp_path / "run"), capsys)
    assert status == 2
    assert "nothing*.txt" in err and "matches no file" in err


@pytest.mark.large
def test_non_utf8_corpus_is_reported_with_its_file(tmp_path, capsys):
    corpus = tmp_path / "latin1.txt"
    corpus.write_bytes("caf\xe9 au lait.\nthe cat sat.\n".encode("latin-1"))
    status, _, err = command_in_this_process(_arguments(str(corpus), tmp_path / "run"), capsys)
    assert status != 0
    assert "latin1.txt" in err
    assert "Traceback" not in err


@pytest.mark.large
def test_run_that_failed_on_its_corpus_does_not_bind_the_next(tmp_path, capsys):
    from keras_albert.cli.main import main

    output = tmp_path / "run"
    # A corpus of blank lines is refused before anything is written.
    (tmp_path / "empty.txt").write_text("\n")
    assert main(_arguments(str(tmp_path / "empty.txt"), output)) == 2
    assert not output.exists()
    # One that fails while its vocabulary is built has written its settings.
    broken = tmp_path / "latin1.txt"
    broken.write_bytes("caf\xe9 au lait.\nthe cat sat.\n".encode("latin-1"))
    assert main(_arguments(str(broken), output)) == 2
    settings = json.loads((output / "settings.json").read_text())
    assert settings["data_complete"] is False
    corpus = _write_corpus(tmp_path / "corpus.txt", documents=6)
    # The corrected corpus is a change of data settings; it was refused.
    assert main(_arguments(corpus, output, train_steps=2, checkpoint_every=2)) == 0, capsys.readouterr().err
    settings = json.loads((output / "settings.json").read_text())
    assert settings["corpus"] == [corpus] and settings["data_complete"] is True
    assert (output / "preset" / "config.json").is_file()


@pytest.mark.large
def test_kill_inside_each_file_operation_then_rerun_cleans_up(tmp_path, capsys):
    # Killed inside the vocabulary's, then the data's, then the preset's
    # write: each run finds what the kill before it left half-written.
    corpus = _write_corpus(tmp_path / "corpus.txt", documents=8)
    output = tmp_path / "run"
    arguments = _arguments(corpus, output, train_steps=4, checkpoint_every=4)
    # What each stage leaves half-written; the previous kill's is gone.
    for stage, written in (("vocabulary", ".vocabulary.spm."), ("data", ".tfrecord."), ("preset", ".preset.")):
        killed = _run(arguments, script=KILLER, KILL_AT_STAGE=stage)
        assert killed.returncode == -signal.SIGKILL, (stage, killed.stderr[-3000:])
        assert not (output / "preset").exists()
        leftovers = [p.name for p in output.rglob("*") if ".partial." in p.name or ".tmp-" in p.name]
        assert leftovers, f"the kill left nothing half-written: it did not hit the {stage} file operation"
        assert all(written in name for name in leftovers), (stage, leftovers)
    status, _, err = command_in_this_process(arguments, capsys)
    assert status == 0, err[-3000:]
    assert keras_albert.AlbertPretrainer.from_preset(str(output / "preset"))
    assert [p.name for p in output.rglob("*") if ".partial." in p.name or ".tmp-" in p.name] == []


@pytest.mark.large
def test_resume_with_other_model_settings_names_the_runs_own(uninterrupted, capsys):
    from keras_albert.cli.main import main

    # The shared run, asked to go on for more steps with other model settings.
    corpus, heldout, output, _ = uninterrupted
    settings = (output / "settings.json").read_bytes()
    checkpoints = sorted(p.name for p in (output / "checkpoints").rglob("*"))
    capsys.readouterr()
    # Once "incompatible tensor with shape (8000,) ... adam_m" from Keras.
    assert main(_arguments(corpus, output, heldout, train_steps=16, num_groups=2)) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "started with no --num_groups (this run: --num_groups=2)" in error
    assert "leave out --num_groups" in error and "adam_m" not in error
    assert main(_arguments(corpus, output, heldout, train_steps=16, dropout=0.2)) == 2
    assert "leave out --dropout" in capsys.readouterr().err
    # Nothing written by the refused runs.
    assert (output / "settings.json").read_bytes() == settings
    assert sorted(p.name for p in (output / "checkpoints").rglob("*")) == checkpoints
