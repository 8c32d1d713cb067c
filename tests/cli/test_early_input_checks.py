"""Missing input files, and lengths a preset's positions cannot hold, are
refused before TensorFlow is imported (0.5 s, not the 10 s its import
takes), and one flag spelling per flag in --help."""

import subprocess
import sys

import pytest

from keras_albert.cli.flag_types import tensorboard
from keras_albert.cli.main import COMMANDS
from keras_albert.cli.main import main
from keras_albert.cli.main import parse

ROOT = __file__.rsplit("/tests/", 1)[0]


@pytest.mark.parametrize("arguments, message", [
    (["finetune", "--preset=albert_tiny_en", "--task=classification", "--train=missing.tsv",
      "--eval=missing.tsv", "--output=out"], "error: `--train` does not exist: 'missing.tsv'"),
    (["pretrain", "--corpus", "missing*.txt", "--output=out"], "error: `corpus` entry 'missing*.txt' matches no file."),
    (["distill", "--teacher=albert_tiny_en", "--student_config={}", "--corpus=missing.txt", "--output=out"],
     "error: `corpus` entry 'missing.txt' matches no file."),
    # A corpus of blank lines once answered after TensorFlow's import, having
    # written the run's settings.
    (["pretrain", "--corpus=blank.txt", "--output=out"],
     "error: `corpus` holds no text: every line of its 1 file(s) ('blank.txt') is blank."),
    (["distill", "--teacher=albert_tiny_en", "--student_config={}", "--corpus=blank*.txt", "--output=out"],
     "error: `corpus` holds no text: every line of its 1 file(s) ('blank.txt') is blank."),
    (["predict", "--preset=albert_tiny_en_student_supersense", "--texts=missing.txt"],
     "error: `--texts` 'missing.txt' does not exist."),
    (["evaluate", "--preset=albert_tiny_en_student_supersense", "--data=missing.tsv"],
     "error: `--data` 'missing.tsv' does not exist."),
    # Not a missing file, but as plain from the preset's config.json alone.
    (["generate", "--preset=albert_tiny_en", "--prompt=It is"],
     "error: `preset` 'albert_tiny_en' holds AlbertPretrainer, a bidirectional encoder (causal=False in its "
     "config.json): it cannot continue text. Pass a causal LM preset: the bundled 'albert_tiny_causal_en', or one "
     "that `pretrain --objective=causal_lm` writes."),
])
def test_missing_files_answer_before_tensorflow_is_imported(tmp_path, arguments, message):
    (tmp_path / "blank.txt").write_text("\n  \n\t\n", encoding="utf-8")
    # `-X importtime` lists every module imported, on stderr.
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "keras_albert", *arguments],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60,
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    assert lines == [message]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "tensorflow" not in imported and "keras" not in imported
    assert not (tmp_path / "out").exists() and result.stdout == ""


@pytest.mark.parametrize("arguments", [
    ["finetune", "--preset=albert_tiny_en", "--task=classification", "--train=t.tsv", "--eval=t.tsv",
     "--output=out"],
    ["predict", "--preset=albert_tiny_en_student_supersense", "--texts=t.tsv", "--output=out"],
    ["evaluate", "--preset=albert_tiny_en_student_supersense", "--data=t.tsv", "--output=out"],
])
def test_lengths_past_the_presets_positions_answer_before_tensorflow_is_imported(tmp_path, arguments):
    # Once only the first text that long failed, mid-run, inside the embedding layer.
    (tmp_path / "t.tsv").write_text("text\tlabel\na dog\tnoun.animal\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "keras_albert", *arguments,
                             "--sequence_length=129"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60,
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    preset = arguments[1].split("=", 1)[1]
    assert lines == [f"error: `--sequence_length` 129 is more than the 128 positions of preset {preset!r} "
                     "(its max_sequence_length). Pass at most 128, or give the backbone more positions first: "
                     "keras_albert.extend_positions(backbone, max_sequence_length=129), then its "
                     "save_to_preset(dir) and the tokenizer's make a preset that takes it."]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "tensorflow" not in imported and "keras" not in imported
    assert not (tmp_path / "out").exists() and result.stdout == ""


@pytest.mark.parametrize("command, required", [
    ("finetune", ["--preset=p", "--task=classification", "--train=t", "--eval=e", "--output=o"]),
    ("pretrain", ["--corpus=c", "--output=o"]),
    ("distill", ["--teacher=t", "--student_config={}", "--corpus=c", "--output=o"]),
])
def test_one_tensorboard_flag_in_help_and_every_spelling_parses(command, required, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert "--[no]tensorboard: write TensorBoard logs to OUTPUT/logs (off: --notensorboard" in out
    assert "--[no]no_tensorboard" not in out and "  --no_tensorboard:" not in out
    for spelling, expected in [([], True), (["--notensorboard"], False), (["--no_tensorboard"], False),
                               (["--tensorboard=no"], False)]:
        assert tensorboard(parse([command, *required, *spelling]).flag_values) is expected


def test_aliases_are_shown_on_their_flag(capsys):
    assert main(["pretrain", "--help"]) == 0
    out = capsys.readouterr().out
    assert "  --vocab_size: SentencePiece pieces (also --vocabulary_size)\n" in out
    assert "--vocabulary_size:" not in out
    parsed = parse(["pretrain", "--corpus=c", "--output=o", "--vocabulary_size=500"])
    assert parsed.flag_values.vocab_size == 500


def test_top_level_help_names_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    commands = list(COMMANDS)
    assert {"pretrain", "finetune", "convert", "export", "distill", "publish", "predict", "evaluate"} <= set(commands)
    # The description line too (it once left out publish).
    assert f"ALBERT for Keras 3: {', '.join(commands)}." in out
    for command in commands:
        assert f"\n    {command} " in out


@pytest.mark.large
def test_pretrain_without_tensorboard_writes_no_logs(tmp_path):
    from tests.cli.test_pretrain_command import _arguments
    from tests.cli.test_pretrain_command import _write_corpus

    corpus = _write_corpus(tmp_path / "corpus.txt", documents=10)
    output = tmp_path / "run"
    assert main(_arguments(corpus, output, train_steps=4, checkpoint_every=4) + ["--notensorboard"]) == 0
    assert (output / "preset" / "config.json").is_file()
    assert not list(output.rglob("events.out.tfevents.*"))


@pytest.mark.parametrize("backend, hide, message", [
    ("tensorflw", "", "error: keras_albert runs on KERAS_BACKEND=tensorflow|jax|torch. "
                      "Received: KERAS_BACKEND='tensorflw'"),
    # As where torch is not installed; argv[0] "-m" as under `python -m`.
    ("torch", "sys.modules['torch'] = None; ", "error: KERAS_BACKEND=torch needs the 'torch' package, which is "
                                               "not installed: pip install torch (or choose another KERAS_BACKEND)."),
])
def test_an_unknown_or_missing_backend_answers_in_one_line_before_any_import(tmp_path, backend, hide, message):
    # Keras alone said "Unable to import backend : tensorflw", after the flags.
    (tmp_path / "t.txt").write_text("a dog\n", encoding="utf-8")
    code = (f"import sys; {hide}sys.argv = ['-m']; from keras_albert.cli.main import main; "
            "sys.exit(main(['predict', '--preset=albert_tiny_en_student_supersense', '--texts=t.txt']))")
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60,
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin", "KERAS_BACKEND": backend})
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if not line.startswith("import time:")] == [message]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "keras" not in imported and "tensorflow" not in imported and result.stdout == ""


@pytest.mark.parametrize("arguments", [
    ["finetune", "--task=classification", "--train=t.tsv", "--eval=t.tsv", "--output=out"],
    ["predict", "--texts=t.tsv", "--output=out"],
    ["evaluate", "--data=t.tsv", "--output=out"],
    ["generate", "--prompt=It is"],
    ["export", "--format=tflite", "--output=out"],
    ["publish", "--output=out"],
    ["pretrain", "--corpus=t.tsv", "--output=out", "--init_preset=albert_tiny"],
    ["convert", "--from=keras_albert", "--src=albert_tiny", "--dst=out"],
    ["distill", "--teacher=albert_tiny", "--student_config={}", "--corpus=t.tsv", "--output=out"],
])
def test_an_unknown_preset_answers_before_tensorflow_is_imported(tmp_path, arguments):
    # A typo once cost TensorFlow's import (seconds) before the same message.
    (tmp_path / "t.tsv").write_text("text\tlabel\na dog\tnoun.animal\n", encoding="utf-8")
    named = any("=albert_tiny" in argument for argument in arguments)
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "keras_albert", *arguments,
                             *([] if named else ["--preset=albert_tiny"])],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60,
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith("import time:")]
    assert len(lines) == 1 and lines[0].startswith("error: Unknown preset: preset='albert_tiny'. It is not a local "
                                                   "directory, a bundled preset, an official name")
    assert "'albert_tiny_en'" in lines[0]  # the names it could have meant
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "tensorflow" not in imported and "keras" not in imported
    assert not (tmp_path / "out").exists() and result.stdout == ""


@pytest.mark.parametrize("flags, message", [
    (["--train_steps=10", "--checkpoint_every=4"],
     "error: `--checkpoint_every` must divide `--train_steps` (each checkpoint closes an epoch). Received: "
     "--train_steps=10, --checkpoint_every=4"),
    (["--train_steps=997"], "error: `--train_steps=997` has no divisor from 10 to 100 to checkpoint at (each "
                            "checkpoint closes an epoch). Pass --checkpoint_every (a divisor of --train_steps), "
                            "or a --train_steps such as 1000."),
    (["--checkpoint_every=0"], "error: `--checkpoint_every` must be a positive integer. Received: 0"),
    (["--batch_size=0"], "error: `--batch_size` must be a positive integer. Received: 0"),
    (["--max_seq_length=6"], "error: `--max_seq_length` must be >= 8 ([CLS], two [SEP] and room for both "
                             "segments). Received: 6"),
    (["--max_predictions_per_seq=80", "--max_seq_length=64"],
     "error: `--max_predictions_per_seq` must be <= `--max_seq_length`. Received: --max_predictions_per_seq=80, "
     "--max_seq_length=64"),
    (["--masked_lm_prob=1.5"], "error: `--masked_lm_prob` must be in [0, 1]. Received: 1.5"),
    (["--learning_rate=-1"], "error: `--learning_rate` must be a finite number >= 0. Received: -1.0"),
])
def test_pretrain_numbers_answer_before_tensorflow_and_before_any_data(tmp_path, flags, message):
    # They were checked by the data and training stages: after the
    # vocabulary and the instances were built, under Python names.
    (tmp_path / "c.txt").write_text("The cat sat.\nIt was warm.\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "keras_albert", "pretrain", "--corpus=c.txt",
                             "--output=out", *flags], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                            env={"PYTHONPATH": ROOT, "PATH": "/usr/bin:/bin"})
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if not line.startswith("import time:")] == [message]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "tensorflow" not in imported and "keras" not in imported
    assert not (tmp_path / "out").exists() and result.stdout == ""
