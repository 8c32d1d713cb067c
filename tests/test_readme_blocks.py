"""The README's code blocks run as written.

Each ```python block runs in a fresh namespace in a temporary directory;
placeholders (a preset path, a fine-tuned teacher, an exported file) are
replaced by bundled presets or by files this test makes, and long fits by
a step or an epoch. Each ``python -m keras_albert`` command in a shell
block is parsed by the command's own argument parser: its subcommand and
every flag it uses must exist and take the values written.
"""

import argparse
import importlib
import pathlib
import re
import shlex
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", ROOT / "benchmarks" / "README.md"]

# Placeholders and long runs: what each becomes when the block is tested.
REPLACEMENTS = {
    '"path/to/preset"': '"albert_tiny_en"',
    "steps_per_epoch=1000": "steps_per_epoch=2",
    "train_size=512, test_size=128": "train_size=16, test_size=8",
    "epochs=4,": "epochs=1,",
}
# Blocks that train (tens of seconds each) or need a file written by a slow
# step (a TFLite conversion) run with the large tests.
LARGE_MARKERS = ("model_text.tflite", ".fit(", "distill_classifier(")


def code_blocks(path):
    """(language, first line number, dedented code) of each fenced block."""
    blocks, language, start, lines, indent = [], None, 0, [], ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^(\s*)```(\w*)\s*$", line)
        if fence and language is None:
            indent, language, start, lines = fence.group(1), fence.group(2) or "text", number, []
        elif fence and fence.group(1) == indent:
            blocks.append((language, start + 1, textwrap.dedent("\n".join(lines))))
            language = None
        elif language is not None:
            lines.append(line)
    assert language is None, f"{path}: unclosed block from line {start}"
    return blocks


def _python_blocks():
    params = []
    for path in READMES:
        for language, line, code in code_blocks(path):
            if language != "python":
                continue
            marks = [pytest.mark.large] if any(m in code for m in LARGE_MARKERS) else []
            params.append(
                pytest.param(code, id=f"{path.relative_to(ROOT)}:{line}", marks=marks)
            )
    return params


def _commands():
    """Every `python -m keras_albert ...` command in a shell block, as argv."""
    params = []
    for path in READMES:
        for language, line, code in code_blocks(path):
            if language not in ("text", "sh", "bash", "shell", "console"):
                continue
            joined = code.replace("\\\n", " ")
            for offset, command in enumerate(joined.splitlines()):
                if not command.lstrip().startswith("python -m keras_albert"):
                    continue  # output shown as text may hold a lone quote
                words = shlex.split(command, comments=True)
                if words[:3] == ["python", "-m", "keras_albert"]:
                    params.append(
                        pytest.param(words[3:], id=f"{path.relative_to(ROOT)}:{line}:{words[3]}:{offset}")
                    )
    return params


def test_blocks_are_found():
    assert len(_python_blocks()) >= 6
    assert len(_commands()) >= 15


def _make_teacher_preset(directory):
    import keras_albert

    teacher = keras_albert.AlbertClassifier.from_preset("albert_tiny_en", num_classes=26)
    teacher.save_to_preset(str(directory))


def _export_raw_string_tflite(path):
    from keras_albert.cli.main import main

    assert main([
        "export", "--preset=albert_tiny_en_student_supersense", "--format=tflite",
        "--raw_strings", "--quantize=dynamic", "--sequence_length=32", f"--output={path}",
    ]) == 0


@pytest.mark.parametrize("code", _python_blocks())
def test_python_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for old, new in REPLACEMENTS.items():
        code = code.replace(old, new)
    if "runs/teacher/preset" in code:
        _make_teacher_preset(tmp_path / "runs" / "teacher" / "preset")
    if "model_text.tflite" in code:
        _export_raw_string_tflite(tmp_path / "model_text.tflite")
    exec(compile(code, "<README block>", "exec"), {"__name__": "__readme__"})


def _command_parser(command):
    from keras_albert.cli.main import COMMANDS

    assert command in COMMANDS, f"no command {command!r}; known: {sorted(COMMANDS)}"
    module = COMMANDS[command]
    if isinstance(module, str):  # commands named by module, imported lazily
        module = importlib.import_module(module)
    parser = argparse.ArgumentParser(prog=f"python -m keras_albert {command}", exit_on_error=False)
    module.add_arguments(parser)
    return parser


@pytest.mark.parametrize("argv", _commands())
def test_command_flags_parse(argv):
    parser = _command_parser(argv[0])
    flags = [word.split("=", 1)[0] for word in argv[1:] if word.startswith("--")]
    known = set(parser._option_string_actions)
    assert not set(flags) - known, f"unknown flags {sorted(set(flags) - known)} in {argv}"
    if "..." in argv:
        # Elided flags: what is written must still parse, so the flags
        # elided may be the required ones.
        for action in parser._actions:
            action.required = False
        argv = [word for word in argv if word != "..."]
        parser.parse_args(argv[1:])
    else:
        parser.parse_args(argv[1:])
