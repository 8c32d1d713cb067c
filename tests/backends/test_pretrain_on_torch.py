"""`pretrain` on PyTorch, TensorFlow blocked, with the CLI's defaults: it
trains without `torch.compile` (the backend's default; on this CPU the
same 40-step tiny run took 103 s with it and 8 s without). `--jit_compile`
turning it on is `tests/cli/test_flags.py` and `tests/models/test_jit_default.py`."""

import os
import pathlib
import subprocess
import sys

import pytest

from tests.cli.test_pretrain_command import _arguments
from tests.cli.test_pretrain_command import _write_corpus

pytestmark = pytest.mark.large

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKER = pathlib.Path(__file__).with_name("cli_worker.py")


def _pretrain(tmp_path, **overrides):
    corpus = _write_corpus(tmp_path / "corpus.txt")
    arguments = _arguments(corpus, tmp_path / "run", dynamic_masking="false", train_steps=4,
                           checkpoint_every=4, **overrides)
    return subprocess.run(
        [sys.executable, str(WORKER), *arguments],
        env=dict(os.environ, KERAS_BACKEND="torch", PYTHONPATH=str(ROOT)),
        capture_output=True, text=True, timeout=900,
    )


def test_the_default_is_eager_on_torch(tmp_path):
    result = _pretrain(tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "training: jit_compile=False" in result.stdout
    assert (tmp_path / "run" / "preset").is_dir()
