"""A reader that stops early (`python -m keras_albert --help | head -3`)
ends the command quietly: no BrokenPipeError traceback on stderr."""

import subprocess
import sys

import pytest

ROOT = __file__.rsplit("/tests/", 1)[0]


@pytest.mark.parametrize("arguments", [["--help"], ["finetune", "--help"]])
def test_help_into_a_closed_pipe_ends_quietly(tmp_path, arguments):
    process = subprocess.Popen([sys.executable, "-m", "keras_albert", *arguments], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    # Closed before the command writes (it takes a tenth of a second to
    # start): its first write meets a reader that has left, as under `| head`.
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141  # 128 + SIGPIPE, as a shell reports it
    assert stderr == ""
