"""The absl command line: flag files, list and boolean spellings, absl's
own flags, one-line errors for bad input, and what a new command needs."""

import logging
import subprocess
import sys

import pytest
from absl import flags

from keras_albert.cli import command_line
from keras_albert.cli import finetune_command
from keras_albert.cli import main as cli
from keras_albert.cli.progress_output import showing_progress

ROOT = __file__.rsplit("/tests/", 1)[0]
FINETUNE = ["finetune", "--preset=p", "--task=classification", "--train=t", "--eval=e", "--output=o"]


def _values(arguments):
    return cli.parse(arguments).flag_values


def test_flagfile_supplies_flags_and_later_flags_win(tmp_path):
    flagfile = tmp_path / "finetune.flags"
    flagfile.write_text(
        "# fine-tuning on pairs\n--preset=albert_tiny_en\n--task=regression\n"
        "--train=train.csv\n--eval=dev.csv\n--output=runs/sts\n--epochs=7\n"
        "--text_columns=a\n--text_columns=b\n"
    )
    values = _values(["finetune", f"--flagfile={flagfile}", "--epochs=9"])
    settings = finetune_command.settings_from(values)
    assert (settings.preset, settings.task, settings.epochs) == ("albert_tiny_en", "regression", 9)
    assert settings.text_columns == ["a", "b"]


@pytest.mark.parametrize("after, expected", [
    (["--corpus=b.txt"], ["b.txt"]),
    (["--corpus", "b.txt", "c.txt"], ["b.txt", "c.txt"]),
    (["--corpus=b.txt", "--corpus=c.txt"], ["b.txt", "c.txt"]),
    ([], ["a.txt", "a2.txt"]),
])
def test_list_flags_after_a_flagfile_replace_its_values(tmp_path, after, expected):
    flagfile = tmp_path / "pretrain.flags"
    flagfile.write_text("--corpus=a.txt\n--corpus=a2.txt\n--output=run\n--eval_corpus=held.txt\n")
    values = _values(["pretrain", f"--flagfile={flagfile}", *after])
    assert values.corpus == expected
    assert values.eval_corpus == ["held.txt"]  # not set again: kept


def test_a_later_flagfile_replaces_earlier_list_values(tmp_path):
    (tmp_path / "one.flags").write_text("--corpus=a.txt\n--output=run\n")
    (tmp_path / "two.flags").write_text("--corpus=b.txt\n")
    values = _values(["pretrain", "--corpus=x.txt", f"--flagfile={tmp_path / 'one.flags'}",
                      "--flagfile", str(tmp_path / "two.flags")])
    assert values.corpus == ["b.txt"]


def test_a_flagfile_that_is_not_utf8_is_named(tmp_path, capsys):
    flagfile = tmp_path / "latin1.flags"
    flagfile.write_bytes("--output=r\xe9sum\xe9\n".encode("latin-1"))
    assert cli.main(["pretrain", "--corpus=a.txt", f"--flagfile={flagfile}"]) == 2
    err = capsys.readouterr().err
    assert "`--flagfile`" in err and "latin1.flags" in err and "not UTF-8" in err


def test_pooling_flag_reaches_the_settings(capsys):
    assert finetune_command.settings_from(_values(FINETUNE)).pooling == "cls"
    assert finetune_command.settings_from(_values(FINETUNE + ["--pooling=mean"])).pooling == "mean"
    with pytest.raises(command_line.Exit):
        _values(FINETUNE + ["--pooling=max"])
    assert "--pooling=max: value should be one of <cls|mean>" in capsys.readouterr().err


@pytest.mark.parametrize("arguments, expected", [
    (["--text_columns", "a", "b"], ["a", "b"]),
    (["--text_columns=a", "--text_columns=b"], ["a", "b"]),
    (["--text_columns=a", "b", "--epochs=2"], ["a", "b"]),
    ([], ["text"]),
])
def test_list_flags_take_several_words_or_repeats(arguments, expected):
    assert _values(FINETUNE + arguments).text_columns == expected


def test_corpus_lists_and_the_vocabulary_size_alias():
    values = _values([
        "pretrain", "--corpus", "a.txt", "b*.txt", "--corpus=c.txt", "--output", "runs/x",
        "--vocabulary_size", "500", "--eval_corpus", "held.txt",
    ])
    assert values.corpus == ["a.txt", "b*.txt", "c.txt"]
    assert values.eval_corpus == ["held.txt"]
    assert values.vocab_size == 500


@pytest.mark.parametrize("flag, expected", [
    ("--jit_compile", True), ("--nojit_compile", False), ("--jit_compile=false", False),
    ("--jit_compile=no", False), ("--jit_compile=off", False), ("--jit_compile=0", False),
    ("--jit_compile=yes", True), ("--jit_compile=True", True),
])
def test_boolean_spellings(flag, expected):
    assert _values(["pretrain", "--corpus=c", "--output=o", flag]).jit_compile is expected


def test_jit_compile_unset_leaves_the_choice_to_the_backend():
    assert _values(["pretrain", "--corpus=c", "--output=o"]).jit_compile is None


def test_absl_flags_reach_absl_logging():
    from absl import logging as absl_logging

    try:
        _values(FINETUNE + ["--verbosity=1"])
        assert absl_logging.get_verbosity() == 1
    finally:
        flags.FLAGS["verbosity"].unparse()
    assert flags.FLAGS.is_parsed()


@pytest.mark.parametrize("arguments, message", [
    (FINETUNE[:2], "error: missing required flags --task, --train, --eval, --output "
                   "(python -m keras_albert finetune --help lists the flags)"),
    (FINETUNE[:-1], "error: missing required flag --output"),
    (FINETUNE + ["--lerning_rate=1"], "Did you mean: learning_rate ?"),
    (FINETUNE + ["--task=nope"], "error: flag --task=nope: value should be one of <classification|"),
    (FINETUNE + ["--epochs=two"], "error: flag --epochs=two: invalid literal for int()"),
    (FINETUNE + ["--tensorboard", "false"], "error: unexpected argument 'false' after --tensorboard: flags are written --name=value"),
    (FINETUNE + ["--notensorboard=1"], "error: --notensorboard=1 does not take an argument"),
    (FINETUNE + ["--text_columns"], "error: Missing value for flag --text_columns"),
    (FINETUNE + ["--text_columns", "--epochs=2"], "error: Missing value for flag --text_columns"),
    (FINETUNE + ["--flagfile=/no/such.flags"], "error: Unable to open flagfile: [Errno 2]"),
    (["export", "--preset=p", "--format=onnx", "--output=o"], "value should be one of <saved_model|tfhub|tflite>"),
    (["convert", "--from=tf1", "--src=a", "--dst=b", "--to=tf1"], "value should be one of <keras_albert|hf|keras_hub>"),
    (["finetuen", "--preset=p"], "error: unknown command 'finetuen'; did you mean 'finetune'? the commands: "),
    (["--corpus=a"], "error: unknown command '--corpus=a'; the commands: pretrain, finetune,"),
    ([], "error: name a command: pretrain, finetune, convert, export, distill, publish"),
])
def test_bad_command_lines_exit_2_with_one_line(capsys, arguments, message):
    assert cli.main(arguments) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    assert message in err[0]


def test_python_dash_m_runs_through_absl_app():
    # absl.app's own flags are parsed with the command's and obeyed:
    # --only_check_args stops before the command runs.
    result = subprocess.run(
        [sys.executable, "-m", "keras_albert", *FINETUNE, "--only_check_args"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    result = subprocess.run(
        [sys.executable, "-m", "keras_albert", "finetune", "--preset=p", "--task=squad"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: missing required flags --train, --eval, --output "
        "(python -m keras_albert finetune --help lists the flags)"
    ]


def test_gather_values_folds_a_list_after_one_flag():
    values = command_line.command_flags(finetune_command)
    assert command_line.gather_values(["--text_columns", "a", "b", "--epochs", "3"], values) == [
        "--text_columns=a", "--text_columns=b", "--epochs", "3"]
    # Words after a flag that takes one value are left to absl.
    assert command_line.gather_values(["--label_column", "y", "z"], values) == ["--label_column", "y", "z"]


HELLO_COMMAND = '''"""Say hello.

  python -m keras_albert hello --name=world
"""

from absl import flags

HELP = "say hello"
received = []


def define_flags(flag_values):
    flags.DEFINE_string("name", None, "who (required)", required=True, flag_values=flag_values)
    flags.DEFINE_integer("times", 1, "how often", flag_values=flag_values)


def run(flag_values):
    received.append((flag_values.name, flag_values.times))
    if flag_values.name == "nobody":
        raise ValueError("`--name` must name somebody.")
'''


def test_a_new_command_is_a_module_and_one_line(tmp_path, monkeypatch, capsys):
    """What `publish` (or any command) needs: a module with a docstring,
    HELP, define_flags and run; one entry in COMMANDS."""
    (tmp_path / "hello_command.py").write_text(HELLO_COMMAND)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli.COMMANDS, "hello", "hello_command")

    try:
        assert cli.main(["--help"]) == 0
        assert "    hello     say hello" in capsys.readouterr().out
        assert cli.main(["hello", "--help"]) == 0
        out = capsys.readouterr().out
        assert "  python -m keras_albert hello --name=world\n" in out and "--times: how often" in out
        assert cli.main(["hello", "--name=world", "--times", "3"]) == 0
        assert sys.modules["hello_command"].received == [("world", 3)]
        assert cli.main(["hello", "--name=nobody"]) == 2
        assert capsys.readouterr().err == "error: `--name` must name somebody.\n"
    finally:
        sys.modules.pop("hello_command", None)


def test_progress_lines_go_to_stdout_and_the_logger_is_restored(capsys):
    from keras_albert.utils.progress import logged_step

    logger = logging.getLogger("keras_albert.export.example")
    parent = logging.getLogger("keras_albert")
    before = (parent.level, parent.propagate, list(parent.handlers))
    with showing_progress():
        with logged_step(logger, "Converting"):
            pass
        logger.warning("No TPU; falling back to CPU.")
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("] Converting ...")
    assert lines[1].endswith("] Converting: done in 0.0 s")
    assert captured.err.endswith("] WARNING: No TPU; falling back to CPU.\n")
    assert (parent.level, parent.propagate, list(parent.handlers)) == before
    logger.info("not shown once the command is done")
    assert capsys.readouterr().out == ""


def test_text_files_keep_their_texts_whole(tmp_path):
    from keras_albert.cli.flag_types import read_lines

    path = tmp_path / "texts.txt"
    path.write_bytes("\ufefffirst text\r\nsecond\u2028still second\n\n".encode("utf-8"))
    assert read_lines(path, "--texts") == ["first text", "second\u2028still second"]
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(ValueError, match="`--texts` .*texts.txt.* is not UTF-8"):
        read_lines(str(path), "--texts")
