"""`python -m keras_albert finetune` for every task on tiny files.

Runs on every backend, TensorFlow installed or not; the serving SavedModel
is written on TensorFlow only, and is loaded, like TFDS datasets are read,
in test_finetune_serving_and_tfds.py:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/cli/test_finetune_command.py
"""

import json

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.cli.main import main
from tests.conftest import _WORDS


@pytest.fixture(scope="module")
def preset(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    path = tmp_path_factory.mktemp("preset")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
    )
    backbone.save_to_preset(str(path))
    tokenizer.save_to_preset(str(path))
    return str(path)


def run(preset, tmp_path, task, train, evaluation, *extra):
    output = tmp_path / "out"
    code = main([
        "finetune", f"--preset={preset}", f"--task={task}", f"--train={train}",
        f"--eval={evaluation}", f"--output={output}", "--epochs=2", "--batch_size=8",
        "--sequence_length=24", "--learning_rate=1e-3", *extra,
    ])
    assert code == 0
    metrics = json.loads((output / "metrics.json").read_text())
    assert len(metrics["history"]) == 2
    # The fitted head before fine-tuning (classification) is epoch 0.
    rows = metrics["history"] + [row for row in [metrics["head_warm_start"]] if row]
    best = max(row[metrics["selection_metric"]] for row in rows)
    assert metrics["best"][metrics["selection_metric"]] == best
    assert (output / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (output / "preset" / "task.json").is_file()
    return output, metrics


def serving_only_on_tensorflow(output):
    """The serving SavedModel is TensorFlow's: written where the run is on
    TensorFlow, and only there (the run says how to make it elsewhere)."""
    return (output / "serving" / "saved_model.pb").is_file() == (keras.config.backend() == "tensorflow")


def classification_file(directory):
    rng = np.random.default_rng(0)
    rows = ["text\tlabel"] + [
        f"{' '.join(rng.choice(_WORDS, 4))} {animal}\t{label}"
        for animal, label in [("cat", "pet"), ("fish", "wild")] * 20
    ]
    (directory / "train.tsv").write_text("\n".join(rows) + "\n")
    return directory / "train.tsv"


@pytest.mark.large
def test_classification(preset, tmp_path):
    train = classification_file(tmp_path)
    output, metrics = run(preset, tmp_path, "classification", train, train)
    assert metrics["labels"] == ["pet", "wild"] and "accuracy" in metrics["best"]
    assert serving_only_on_tensorflow(output)
    restored = keras_albert.AlbertClassifier.from_preset(str(output / "preset"))
    assert restored.num_classes == 2


@pytest.mark.large
def test_regression_pairs(preset, tmp_path):
    rows = ["a,b,score"] + [f"the cat,the {w},{i % 5}.0" for i, w in enumerate(_WORDS[:30])]
    (tmp_path / "train.csv").write_text("\n".join(rows) + "\n")
    output, metrics = run(
        preset, tmp_path, "regression", tmp_path / "train.csv", tmp_path / "train.csv",
        "--text_columns", "a", "b", "--label_column=score", "--noserving",
    )
    assert set(metrics["best"]) >= {"pearson", "spearman"}
    # --noserving: no SavedModel on any backend.
    assert not (output / "serving").exists() and "serving_saved_model" not in metrics


@pytest.mark.large
def test_squad_multiple_choice_and_tokens(preset, tmp_path):
    qas = [{"id": str(i), "question": "which animal?", "answers": [{"text": "cat", "answer_start": 4}]} for i in range(8)]
    squad = {"data": [{"paragraphs": [{"context": "the cat sleeps in the garden", "qas": qas}]}]}
    (tmp_path / "squad.json").write_text(json.dumps(squad))
    output, metrics = run(preset, tmp_path / "s", "squad", tmp_path / "squad.json", tmp_path / "squad.json")
    assert set(metrics["best"]) >= {"f1", "exact_match"} and serving_only_on_tensorflow(output)

    race = {"article": "the cat sleeps", "questions": ["who sleeps?"] * 8,
            "options": [["the cat", "a dog", "a fish"]] * 8, "answers": ["A"] * 8}
    (tmp_path / "race").mkdir()
    (tmp_path / "race" / "1.txt").write_text(json.dumps(race))
    output, metrics = run(preset, tmp_path / "m", "multiple_choice", tmp_path / "race", tmp_path / "race")
    assert "accuracy" in metrics["best"] and serving_only_on_tensorflow(output)

    (tmp_path / "a.conll").write_text("\n\n".join(["the O\ncat ANIMAL\nsleeps O"] * 10) + "\n")
    output, metrics = run(preset, tmp_path / "t", "token_classification", tmp_path / "a.conll", tmp_path / "a.conll")
    assert metrics["labels"] == ["ANIMAL", "O"] and serving_only_on_tensorflow(output)


def test_bad_arguments_exit_2(preset, tmp_path, capsys):
    (tmp_path / "train.tsv").write_text("text\tlabel\na\tx\n")
    (tmp_path / "eval.tsv").write_text("text\tlabel\na\ty\n")
    base = [f"--preset={preset}", "--task=classification", f"--output={tmp_path / 'out'}"]
    cases = [
        ([f"--train={tmp_path / 'missing.tsv'}", f"--eval={tmp_path / 'eval.tsv'}"], "does not exist"),
        ([f"--train={tmp_path / 'train.tsv'}", f"--eval={tmp_path / 'eval.tsv'}"], "label 'y' is not in the label set"),
        ([f"--train={tmp_path / 'train.tsv'}", f"--eval={tmp_path / 'train.tsv'}", "--epochs=0"], "--epochs"),
    ]
    for arguments, message in cases:
        assert main(["finetune", *base, *arguments]) == 2
        assert message in capsys.readouterr().err


def biased_teacher(preset, path, num_classes, favourite):
    """A classifier preset that always predicts class `favourite`."""
    teacher = keras_albert.AlbertClassifier.from_preset(preset, num_classes=num_classes)
    kernel, bias = teacher.output_dense.get_weights()
    bias[:] = -10.0
    bias[favourite] = 10.0
    teacher.output_dense.set_weights([np.zeros_like(kernel), bias])
    teacher.save_to_preset(str(path))
    return str(path)


@pytest.mark.large
def test_classification_distilled_from_a_teacher(preset, tmp_path):
    rows = ["text\tlabel"] + [f"the {animal}\t{label}" for animal, label in [("cat", "pet"), ("fish", "wild")] * 20]
    (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
    (tmp_path / "transfer.txt").write_text("a cat\n\na fish\nthe dog\n")
    teacher = biased_teacher(preset, tmp_path / "teacher", 2, favourite=1)
    # alpha=1: labelled rows learn the teacher's predictions only, so the
    # student follows the teacher ("wild" for everything) over the labels.
    _, metrics = run(
        preset, tmp_path, "classification", tmp_path / "train.tsv", tmp_path / "train.tsv",
        f"--teacher={teacher}", f"--transfer_texts={tmp_path / 'transfer.txt'}",
        "--distill_alpha=1.0", "--distill_temperature=1.0", "--noserving",
    )
    assert metrics["best"]["accuracy"] == pytest.approx(0.5)


@pytest.mark.large
def test_bad_distillation_arguments_exit_2(preset, tmp_path, capsys):
    # Ten of each: a tenth is held out for validation.
    (tmp_path / "train.tsv").write_text("text\tlabel\n" + "a cat\tx\na dog\ty\n" * 10)
    (tmp_path / "scores.csv").write_text("text,label\n" + "a cat,1.0\n" * 10)
    three_classes = biased_teacher(preset, tmp_path / "teacher3", 3, favourite=0)
    base = [f"--preset={preset}", f"--output={tmp_path / 'out'}"]
    train = [f"--train={tmp_path / 'train.tsv'}", f"--eval={tmp_path / 'train.tsv'}"]
    cases = [
        (["--task=classification", *train, f"--teacher={three_classes}"], "predicts 3 classes"),
        (["--task=regression", f"--train={tmp_path / 'scores.csv'}", f"--eval={tmp_path / 'scores.csv'}",
          f"--teacher={three_classes}"], "distils classifiers only"),
        (["--task=classification", *train, f"--transfer_texts={tmp_path / 'train.tsv'}"], "needs `--teacher`"),
        (["--task=classification", *train, f"--teacher={three_classes}",
          f"--transfer_texts={tmp_path / 'nothing.txt'}"], "`--transfer_texts` does not exist"),
        (["--task=classification", *train, f"--teacher={three_classes}", "--distill_alpha=2"], "alpha"),
    ]
    for arguments, message in cases:
        assert main(["finetune", *base, *arguments]) == 2, message
        assert message in capsys.readouterr().err
