"""A quiet terminal when keras_hub was imported first: `pretrain` and
`predict` write nothing on stderr a user cannot act on (TensorFlow's
notices, SentencePiece's resource check, retracing warnings); real
warnings, errors and a dying process's last lines still show. Every
command of README.md, run as a user runs it, is held to the same in
tests/test_readme_blocks.py's walk.

Each command runs in a fresh `python -m keras_albert` process, as a user
runs it, with the user's environment (no TF_CPP_MIN_LOG_LEVEL set). The
in-process tf.data check skips without TensorFlow:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_quiet_stderr.py
"""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from tests.cli.progress_lines import PROGRESS_LINE
from tests.conftest import synthetic_sentences

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARK = "<<keras_albert imported from here>>"
TINY_CONFIG = json.dumps(dict(num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
                              intermediate_dim=32, max_sequence_length=32))


def _environment():
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return dict(env, PYTHONPATH=str(ROOT))


def _run(arguments, keras_hub_first=False):
    if keras_hub_first:
        # TensorFlow's import lines come before keras_albert exists; what
        # follows the mark is keras_albert's to keep quiet.
        command = [sys.executable, "-c", textwrap.dedent(f"""
            import runpy, sys
            import keras_hub
            print({MARK!r}, file=sys.stderr, flush=True)
            sys.argv = ["keras_albert"] + sys.argv[1:]
            runpy.run_module("keras_albert", run_name="__main__")
        """)] + arguments
    else:
        command = [sys.executable, "-m", "keras_albert"] + arguments
    result = subprocess.run(command, env=_environment(), capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stderr.splitlines()
    if keras_hub_first:
        lines = lines[lines.index(MARK) + 1:]
    return lines


def _unexpected(lines, progress_allowed=False):
    return [line for line in lines if not (progress_allowed and PROGRESS_LINE.fullmatch(line))]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("quiet")
    (root / "texts.txt").write_text("a cat on the mat\nthe river stone\n")
    lines = synthetic_sentences(160, seed=0)
    (root / "corpus.txt").write_text("\n\n".join("\n".join(lines[i:i + 8]) for i in range(0, 160, 8)) + "\n")
    return root


@pytest.mark.large
def test_predict_writes_only_its_progress_on_stderr_after_keras_hub(files):
    # keras_hub imported before keras_albert: nothing after keras_albert's import.
    lines = _run(["predict", "--preset=albert_tiny_en_student_supersense", f"--texts={files / 'texts.txt'}"],
                 keras_hub_first=True)
    assert _unexpected(lines, progress_allowed=True) == []
    assert any("Classifying 2 texts" in line for line in lines)


@pytest.mark.large
def test_pretrain_writes_nothing_on_stderr(files):
    lines = _run(["pretrain", "--corpus", str(files / "corpus.txt"), "--output", str(files / "pretrained"),
                  "--config", TINY_CONFIG, "--vocab_size=60", "--max_seq_length=32",
                  "--max_predictions_per_seq=5", "--dupe_factor=1", "--num_shards=1", "--batch_size=8",
                  "--train_steps=4", "--warmup_steps=1", "--checkpoint_every=4"], keras_hub_first=True)
    assert (files / "pretrained" / "preset" / "config.json").is_file()
    assert _unexpected(lines) == []


def test_a_reset_seed_does_not_make_the_tokenizer_warn(capfd):
    """`keras.utils.set_random_seed` deletes the SentencePiece resource; the
    tokenizer's check in the next graph (a tf.data map, as the pipelines
    tokenize) finds it gone (two NOT_FOUND warnings from TensorFlow) and
    re-creates it, saying nothing."""
    tf = pytest.importorskip("tensorflow", reason="tf.data and its SentencePiece resource are TensorFlow's")
    import keras

    import keras_albert

    tokenizer = keras_albert.AlbertTokenizer.from_preset("albert_tiny_en")

    def tokenized():
        return [ids.numpy().tolist() for ids in tf.data.Dataset.from_tensor_slices(["a cat"]).map(tokenizer)]

    first = tokenized()
    capfd.readouterr()
    keras.utils.set_random_seed(1)
    assert tokenized() == first
    assert capfd.readouterr().err == ""
