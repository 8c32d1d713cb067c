"""The README's code blocks run as written.

Each ```python block runs in a fresh namespace in a temporary directory;
placeholders (a preset path, a fine-tuned teacher, an exported file) are
replaced by bundled presets or by files this test makes, and long fits by
a step or an epoch. Each ``python -m keras_albert`` command in a shell
block (or in inline code, where a table says what to download first) is
parsed by the command's own absl flags: its command and every flag it uses
must exist and take the values written.

The large `test_shell_blocks_run_in_order` runs every shell block of
README.md as pasted (long trainings shortened, as `SHELL_REPLACEMENTS`
says), in order, in one temporary directory holding a copy of
`examples/`, in the user's environment: each must exit with status 0,
write what its ``--output``/``--dst`` flags name and write nothing on
stderr but progress lines. The blocks of two example scripts are run by
their own tests instead (`RUN_BY_THEIR_TESTS`). `examples/data/` holds the
files they run on; `test_readme_data_is_rebuilt_and_not_held_out` rebuilds
them.
"""

import ast
import importlib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from tests.cli.progress_lines import PROGRESS_LINE
from tests.scripts import load_script

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
LARGE_MARKERS = ("model_text.tflite", "classifier.tflite", ".fit(", "distill_classifier(")


def shortened(code, replacements):
    """`code` with each placeholder or long run of `replacements` replaced."""
    for old, new in replacements.items():
        code = code.replace(old, new)
    return code


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
    """Every `python -m keras_albert ...` command in a shell block or inline code, as argv."""
    params = []
    for path in READMES:
        for language, line, code in code_blocks(path):
            if language not in ("text", "sh", "bash", "shell", "console"):
                continue
            joined = code.replace("\\\n", " ")
            for offset, command in enumerate(joined.splitlines()):
                if not command.lstrip().startswith("python -m keras_albert"):
                    continue  # Output blocks hold prose, not shell words.
                words = shlex.split(command, comments=True)
                if words[:3] == ["python", "-m", "keras_albert"]:
                    params.append(
                        pytest.param(words[3:], id=f"{path.relative_to(ROOT)}:{line}:{words[3]}:{offset}")
                    )
        for line, command in _inline_commands(path):
            words = shlex.split(command)
            params.append(pytest.param(words[3:], id=f"{path.relative_to(ROOT)}:{line}:{words[3]}:inline"))
    return params


def _inline_commands(path):
    """(line number, command) of each `python -m keras_albert ...` code span in a table row.

    Commands that need downloaded data sit in tables beside what to
    download; prose spans such as `python -m keras_albert COMMAND ...`
    and a bare `python -m keras_albert pretrain` are not command lines.
    """
    found, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(r"^\s*```", line):
            fenced = not fenced
        elif not fenced and line.startswith("|"):
            spans = re.findall(r"`(python -m keras_albert \w[^`]* --[^`]+)`", line)
            found += [(number, span) for span in spans]
    return found


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


def _export_metadata_tflite(path):
    from keras_albert.cli.main import main

    # A classifier with label names: TFLite metadata by default.
    assert main([
        "export", "--preset=albert_tiny_en_student_supersense", "--format=tflite", f"--output={path}",
    ]) == 0


@pytest.mark.parametrize("code", _python_blocks())
def test_python_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = shortened(code, REPLACEMENTS)
    if "runs/teacher/preset" in code:
        _make_teacher_preset(tmp_path / "runs" / "teacher" / "preset")
    # The TFLite files the README's export block writes, where the block reads them.
    for name, export in (("model_text.tflite", _export_raw_string_tflite),
                         ("classifier.tflite", _export_metadata_tflite)):
        for written in sorted(set(re.findall(rf'"([^"]*{re.escape(name)})"', code))):
            (tmp_path / written).parent.mkdir(parents=True, exist_ok=True)
            export(tmp_path / written)
    exec(compile(code, "<README block>", "exec"), {"__name__": "__readme__"})


@pytest.mark.parametrize("argv", _commands())
def test_command_flags_parse(argv):
    from keras_albert.cli import command_line
    from keras_albert.cli.main import COMMANDS

    assert argv[0] in COMMANDS, f"no command {argv[0]!r}; known: {sorted(COMMANDS)}"
    module = importlib.import_module(COMMANDS[argv[0]])
    flag_values = command_line.command_flags(module)
    arguments = argv[1:]
    if "..." in arguments:
        # Elided flags: what is written must still parse, so the flags
        # elided may be the required ones.
        for flag in flag_values.get_flags_for_module(module.__name__):
            flag.validators.clear()
        arguments = [word for word in arguments if word != "..."]
    # Raises on an unknown flag, a bad value or a stray argument.
    command_line.parse_flags(flag_values, arguments)


@pytest.mark.parametrize("code", [param.values[0] for param in _python_blocks()])
def test_python_blocks_print_what_they_show(code):
    # A bare expression shows its value in a notebook, but prints nothing
    # when the block is pasted into a script or `python -`.
    for statement in ast.parse(code).body:
        shown = isinstance(statement, ast.Expr) and not isinstance(statement.value, (ast.Call, ast.Constant))
        assert not shown, f"a bare expression prints nothing: {ast.unparse(statement)!r}; wrap it in print()"
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            name = ast.unparse(statement.value.func)
            assert not name.endswith(".predict"), f"{name}(...) alone prints nothing; wrap it in print()"


# --- Every shell block of README.md, as pasted, in order -------------------

MAKE_DATA = ROOT / "examples" / "data" / "make_readme_data.py"
# A shell block's first line runs a program (after any VAR=value words);
# other unlabelled blocks hold output or transcripts.
SHELL_COMMAND = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(?:python|make|pip|bash|sh)\b")
# `make demo` is the 20-minute demo (tests/examples/test_quickstart.py runs
# its script on a small sample) and `make test` is this suite.
NOT_RUN = {"make demo", "make test"}
BLOCK_TIMEOUT_SECONDS = 900
# Long trainings in shell blocks, shortened as REPLACEMENTS shortens the
# Python blocks': the commands after them still read what they write.
# The causal example's 600 steps took 157 s of the walk's 448 s alone (757 s
# beside the other xdist worker), the JAX example's 2,000 glosses 64 s.
SHELL_REPLACEMENTS = {
    "examples/causal_generation.py --steps 600": "examples/causal_generation.py --steps 30",
    "KERAS_BACKEND=jax python examples/other_backends.py": (
        "KERAS_BACKEND=jax python examples/other_backends.py --train_size 256 --eval_size 200"),
}
# A block that runs an example script is run, as pasted and shortened, by
# that script's own test (through `readme_shell_block`), which also checks
# what the script prints; the walk leaves it to that test rather than train
# the same model twice (the causal example ran in both: 64 s each).
RUN_BY_THEIR_TESTS = {
    "examples/causal_generation.py": "tests/examples/test_causal_generation.py",
    "examples/other_backends.py": "tests/examples/test_other_backends.py",
}
# Flags that name what a command writes.
WRITES = re.compile(r"(?:^|\s)--(?:output|dst)[= ](\S+)")


def shell_blocks(path=ROOT / "README.md"):
    """(first line number, code) of each block of shell commands, in order."""
    return [
        (line, code)
        for language, line, code in code_blocks(path)
        if language in ("text", "sh", "bash", "shell", "console") and SHELL_COMMAND.match(code.lstrip())
    ]


def runnable_blocks(path=ROOT / "README.md"):
    return [
        (line, code) for line, code in shell_blocks(path)
        if {c.strip() for c in code.splitlines() if c.strip()} - NOT_RUN
    ]


def readme_shell_block(script):
    """(first line number, code) of README.md's one shell block that runs
    `script`, shortened as the walk shortens it."""
    found = [(line, code) for line, code in runnable_blocks() if script in code]
    assert len(found) == 1, f"README.md: {len(found)} shell blocks run {script}; expected one"
    line, code = found[0]
    return line, shortened(code, SHELL_REPLACEMENTS)


def claimed_outputs(code):
    """The paths a block's --output/--dst flags name."""
    joined = code.replace("\\\n", " ")
    return [shlex.split(match)[0] for match in WRITES.findall(joined)]


def run_block(line, code, directory, timeout=BLOCK_TIMEOUT_SECONDS, python_path=()):
    """Runs one block with bash in `directory`, with `python_path` before
    the repository on PYTHONPATH; fails naming the block, its status and
    stderr. Returns the finished process (its stdout)."""
    # The user's environment: no TF_CPP_MIN_LOG_LEVEL (this suite sets one).
    environment = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    # `python` is this interpreter, as in the virtual environment `make` builds.
    environment["PATH"] = f"{pathlib.Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    environment["PYTHONPATH"] = os.pathsep.join([*map(str, python_path), str(ROOT)])
    try:
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", code], cwd=directory, env=environment,
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"README.md:{line}: the block ran past {timeout} s:\n{code}")
    assert result.returncode == 0, (
        f"README.md:{line}: exit status {result.returncode}:\n{code}\n"
        f"stderr (end):\n{result.stderr[-3000:]}"
    )
    for written in claimed_outputs(code):
        assert (directory / written).exists(), f"README.md:{line}: {written} was not written:\n{code}"
    return result


def test_shell_blocks_are_found():
    lines = [code for _, code in runnable_blocks()]
    for expected in ("finetune", "pretrain", "export", "distill", "publish", "convert", "predict"):
        assert any(f"keras_albert {expected}" in code for code in lines), expected
    assert any("--teacher=" in code for code in lines)
    # Every block that the test leaves out is one of the named ones.
    runnable = runnable_blocks()
    left_out = [code for block in shell_blocks() if block not in runnable for code in block[1:]]
    assert all(set(code.split("\n")) <= NOT_RUN for code in left_out), left_out
    # A replacement whose text left the README would silently run the long form.
    for old in SHELL_REPLACEMENTS:
        assert any(old in code for code in lines), f"no shell block holds {old!r}"
    # The blocks the walk leaves to a script's test: one each, and that test
    # takes it from here.
    for script, test in RUN_BY_THEIR_TESTS.items():
        readme_shell_block(script)
        assert f'readme_shell_block("{script}")' in (ROOT / test).read_text(), (
            f"{test} must run README.md's block for {script}")


def test_run_block_fails_on_a_broken_block(tmp_path):
    with pytest.raises(AssertionError, match="exit status 3"):
        run_block(1, "true\npython -c 'import sys; sys.exit(3)'\ntrue", tmp_path)
    with pytest.raises(AssertionError, match="runs/x was not written"):
        run_block(2, "python -c 'print(1)' --output=runs/x", tmp_path)
    assert claimed_outputs("a --dst=d \\\n  --output o") == ["d", "o"]


@pytest.mark.large
def test_shell_blocks_run_in_order(tmp_path):
    """Every shell block of README.md as pasted, from a copy of what it reads."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    seconds, noise = [], {}
    for line, code in runnable_blocks():
        if any(script in code for script in RUN_BY_THEIR_TESTS):
            continue
        started = time.monotonic()
        result = run_block(line, shortened(code, SHELL_REPLACEMENTS), tmp_path)
        seconds.append((line, round(time.monotonic() - started)))
        unexpected = [text for text in result.stderr.splitlines() if not PROGRESS_LINE.fullmatch(text)]
        if unexpected:
            noise[f"README.md:{line}"] = unexpected
    print("seconds per block (README.md line, seconds):", seconds, "total", sum(s for _, s in seconds))
    # What a user sees: nothing on stderr but progress lines.
    assert noise == {}


@pytest.mark.large
def test_readme_data_is_rebuilt_and_not_held_out():
    from keras_albert.datasets.heldout import HeldOutGuard

    files = load_script(MAKE_DATA.relative_to(ROOT)).readme_data()
    for name, text in files.items():
        assert (MAKE_DATA.parent / name).read_text(encoding="utf-8") == text, (
            f"examples/data/{name} differs from what make_readme_data.py writes")
    guard = HeldOutGuard()
    for name in ("supersense_train.tsv", "supersense_dev.tsv", "unlabelled.txt", "corpus.txt"):
        lines = [row.split("\t")[0] for row in files[name].splitlines() if row]
        held_out = [(row, guard.match(row)) for row in lines if guard.contains(row)]
        assert not held_out, f"examples/data/{name} holds held-out text: {held_out[:3]}"
    train = {row.split("\t")[0] for row in files["supersense_train.tsv"].splitlines()[1:]}
    dev = {row.split("\t")[0] for row in files["supersense_dev.tsv"].splitlines()[1:]}
    unlabelled = set(files["unlabelled.txt"].splitlines())
    assert not (train & dev) and not (train & unlabelled) and not (dev & unlabelled)
    total = sum(path.stat().st_size for path in MAKE_DATA.parent.iterdir() if path.is_file())
    assert total < 300_000, f"examples/data holds {total} bytes; keep it small"
