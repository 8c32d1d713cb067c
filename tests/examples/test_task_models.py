"""examples/task_models.py: flags, a quick --help, and every task at a small setting."""

import os
import pathlib
import subprocess
import sys
import time

import pytest

from tests.scripts import load_script

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "task_models.py"


def run(*flags, timeout=900):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *flags],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=timeout,
    )


def test_help_lists_the_flags_without_training():
    started = time.perf_counter()
    result = run("--help", timeout=60)
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    for flag in ("--tasks", "--examples", "--epochs", "--preset", "--seed"):
        assert flag in result.stdout
    # The example commands stay on their own lines.
    assert "\n    python examples/task_models.py --tasks qa tagging" in result.stdout
    print(f"--help took {elapsed:.2f} s")
    assert elapsed < 10


@pytest.mark.parametrize("flags, message", [
    (("--examples", "3"), "--examples must be >= 12"),
    (("--epochs", "0"), "--epochs must be >= 1"),
    (("--tasks", "translation"), "invalid choice"),
])
def test_bad_flags_exit_2_naming_the_flag(flags, message):
    result = run(*flags, timeout=60)
    assert result.returncode == 2
    assert message in result.stderr


@pytest.mark.large
def test_every_task_runs_at_a_small_setting(capsys):
    # In this process (no new interpreter to start): what is checked is
    # that each task trains and answers, not how the script is launched.
    # 12 glosses, the fewest the flags allow, give each task one training
    # batch and a test part of 2: every task still trains and answers.
    assert load_script("examples/task_models.py").main(["--examples", "12", "--epochs", "1"]) == 0
    printed = capsys.readouterr().out
    for line in ("QA: exact match", "multiple choice (4 options): accuracy", "token classification: word accuracy"):
        assert line in printed
