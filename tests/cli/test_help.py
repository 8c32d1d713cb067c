"""`--help` answers without importing TensorFlow, and reads well.

Runs on every backend; the TFLite quantizations are checked against the
exporter where TensorFlow is installed:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_help.py
"""

import subprocess
import sys
import time

import pytest

from keras_albert.cli import distill_command
from keras_albert.cli import finetune_command
from keras_albert.cli import flag_choices
from keras_albert.cli.main import main
from keras_albert.cli.main import parse

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
    # The bound leaves room for a loaded machine; unloaded it takes ~0.15 s
    # (importing TensorFlow alone takes 5 s or more).
    assert seconds < 2


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
    assert result.returncode == 0, result.stderr
    for command in ("pretrain", "finetune", "convert", "export", "distill", "publish"):
        assert f"    {command}" in result.stdout


def test_help_shows_each_flag_with_its_default_and_no_absl_flags(capsys):
    assert main(["export", "--help"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    batch = lines.index("  --batch_size: raw-string tflite: fixed batch size")
    assert lines[batch + 1].strip() == "(default: '1')"
    assert "  --quantize: <none|float16|dynamic|int8>: tflite only: none (float32), float16," in lines
    assert "--format: <saved_model|tfhub|tflite>: what to write (required)" in out
    assert "--helpfull" in out and "--flagfile=FILE" in out
    assert "-v,--verbosity:" not in out  # --helpfull lists absl's flags


@pytest.mark.parametrize("flag", ["--helpfull", "-h", "--helpshort"])
def test_help_flags_answer_before_required_flags_are_checked(capsys, flag):
    assert main(["convert", flag]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m keras_albert convert")
    assert "--from: <tf1|hf|keras_hub|tfhub|keras_albert>: format of --src (required)" in out
    if flag == "--helpfull":
        for absl_flag in ("-v,--verbosity", "--log_dir", "--[no]run_with_pdb", "--[no]logtostderr"):
            assert absl_flag in out
        # The command's flags come first.
        assert out.index("--from:") < out.index("--verbosity")
    else:
        assert "--log_dir:" not in out


def test_flag_choices_match_the_library():
    # Where they are defined (strategy.py, tf.distribute's, re-exports them).
    from keras_albert.models.albert_classifier import POOLING_CHOICES
    from keras_albert.training.precision import PRECISION_POLICIES
    from keras_albert.training.scope import STRATEGY_NAMES

    assert flag_choices.STRATEGY_NAMES == STRATEGY_NAMES
    assert flag_choices.PRECISION_POLICIES == PRECISION_POLICIES
    assert flag_choices.POOLING_CHOICES == POOLING_CHOICES


def test_quantize_choices_match_the_tflite_exporter():
    pytest.importorskip("tensorflow", reason="TFLite export is TensorFlow's")
    from keras_albert.export.tflite_export import QUANTIZATIONS

    assert flag_choices.QUANTIZATIONS == QUANTIZATIONS


@pytest.mark.parametrize("command, required, module", [
    ("finetune", ["--preset=p", "--task=classification", "--train=t", "--eval=e", "--output=o"], finetune_command),
    ("distill", ["--teacher=t", "--student_config={}", "--corpus=c", "--output=o"], distill_command),
])
@pytest.mark.parametrize("flags, expected", [
    ([], True), (["--tensorboard=false"], False), (["--no_tensorboard"], False),
    (["--notensorboard"], False), (["--tensorboard=true"], True), (["--tensorboard"], True),
])
def test_tensorboard_flags(command, required, module, flags, expected):
    parsed = parse([command, *required, *flags])
    assert module.settings_from(parsed.flag_values).tensorboard is expected


def test_bad_tensorboard_value_exits_2(capsys):
    code = main(["finetune", "--preset=p", "--task=classification", "--train=t", "--eval=e",
                 "--output=o", "--tensorboard=maybe"])
    assert code == 2
    assert capsys.readouterr().err == (
        "error: flag --tensorboard=maybe: expected true or false (also 1/0, yes/no, on/off)\n"
    )
