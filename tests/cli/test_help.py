"""`--help` answers without importing TensorFlow, and reads well."""

import subprocess
import sys
import time

import pytest

from keras_albert.cli import flag_choices
from keras_albert.cli.main import build_parser

ROOT = __file__.rsplit("/tests/", 1)[0]


@pytest.mark.parametrize("command", [[], ["finetune"], ["distill"]])
def test_help_is_fast(command):
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "keras_albert", *command, "--help"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    seconds = time.monotonic() - start
    print(f"python -m keras_albert {' '.join(command)} --help: {seconds:.2f} s")
    assert result.returncode == 0, result.stderr
    assert "usage: python -m keras_albert" in result.stdout
    # The bound leaves room for a loaded machine; unloaded it takes ~0.1 s
    # (importing TensorFlow alone takes 5 s or more).
    assert seconds < 5


def test_help_keeps_example_commands_on_their_own_lines():
    result = subprocess.run(
        [sys.executable, "-m", "keras_albert", "finetune", "--help"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    lines = result.stdout.splitlines()
    first = [i for i, line in enumerate(lines)
             if line.startswith("  python -m keras_albert finetune --preset=albert_tiny_en ")]
    assert first, result.stdout
    assert lines[first[0]].endswith("\\")
    assert lines[first[0] + 1].strip().startswith("--train=train.tsv")
    assert "--no_tensorboard" in result.stdout


def test_top_level_help_lists_every_command():
    result = subprocess.run(
        [sys.executable, "-m", "keras_albert", "--help"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    for command in ("pretrain", "finetune", "convert", "export", "distill"):
        assert f"    {command}" in result.stdout


def test_flag_choices_match_the_library():
    from keras_albert.export.tflite_export import QUANTIZATIONS
    from keras_albert.training.strategy import PRECISION_POLICIES
    from keras_albert.training.strategy import STRATEGY_NAMES

    assert flag_choices.STRATEGY_NAMES == STRATEGY_NAMES
    assert flag_choices.PRECISION_POLICIES == PRECISION_POLICIES
    assert flag_choices.QUANTIZATIONS == QUANTIZATIONS


@pytest.mark.parametrize("command, required", [
    ("finetune", ["--preset=p", "--task=classification", "--train=t", "--eval=e", "--output=o"]),
    ("distill", ["--teacher=t", "--student_config={}", "--corpus=c", "--output=o"]),
])
@pytest.mark.parametrize("flags, expected", [
    ([], True), (["--tensorboard=false"], False), (["--no_tensorboard"], False),
    (["--tensorboard=true"], True),
])
def test_tensorboard_flags(command, required, flags, expected):
    args = build_parser().parse_args([command, *required, *flags])
    assert args.tensorboard is expected


def test_bad_tensorboard_value_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(
            ["finetune", "--preset=p", "--task=classification", "--train=t", "--eval=e",
             "--output=o", "--tensorboard=maybe"])
    assert exit_info.value.code == 2
    assert "--tensorboard" in capsys.readouterr().err
