"""`predict` and `evaluate` with a multiple-choice preset (what `finetune
--task=multiple_choice` writes): RACE JSON in, each question's options
scored as the model scores them, accuracy as `finetune` reports it."""

import json

import numpy as np
import pytest

import keras_albert
from keras_albert.cli.main import main

ARTICLE = "emma walked to the river with her sister and saw a heron."
RECORD = {"article": ARTICLE, "questions": ["where did emma walk?", "what did she see?"],
          "options": [["the river", "the town", "the sea"], ["a heron", "a cat", "a ship"]],
          "answers": ["A", "A"]}


@pytest.fixture(scope="module")
def chooser_preset(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertMultipleChoicePreprocessor(tokenizer, sequence_length=32)
    model = keras_albert.AlbertMultipleChoice(backbone, preprocessor=preprocessor)
    directory = tmp_path_factory.mktemp("chooser") / "preset"
    model.save_to_preset(str(directory))
    return directory, model


def _probabilities(model):
    logits = model.predict({"context": [ARTICLE] * 2, "question": RECORD["questions"],
                            "choices": RECORD["options"]}, verbose=0)
    logits = np.asarray(logits)
    return np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)


def test_predict_scores_each_question_without_answers(chooser_preset, tmp_path, capsys):
    directory, model = chooser_preset
    unlabelled = {key: value for key, value in RECORD.items() if key != "answers"}
    (tmp_path / "race").mkdir()
    (tmp_path / "race" / "1.json").write_text(json.dumps(unlabelled), encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={tmp_path / 'race'}"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = _probabilities(model)
    assert [row["question"] for row in rows] == RECORD["questions"]
    for row, options, probabilities in zip(rows, RECORD["options"], expected):
        assert row["options"] == options
        assert row["choice"] == "ABC"[probabilities.argmax()] and row["answer"] == options[probabilities.argmax()]
        np.testing.assert_allclose(list(row["probabilities"].values()), probabilities, atol=1e-5)


def test_evaluate_reports_accuracy_as_finetune_does(chooser_preset, tmp_path):
    directory, model = chooser_preset
    (tmp_path / "dev.json").write_text(json.dumps(RECORD), encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'dev.json'}",
                 f"--output={tmp_path / 'report.json'}"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["questions"] == 2
    assert report["metrics"]["accuracy"] == pytest.approx(np.mean(_probabilities(model).argmax(-1) == 0))


def test_a_file_that_is_not_race_is_refused_in_one_line(chooser_preset, tmp_path, capsys):
    directory, _ = chooser_preset
    (tmp_path / "texts.txt").write_text("a line of text\n", encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={tmp_path / 'texts.txt'}",
                 f"--output={tmp_path / 'rows.jsonl'}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: `--texts`") and "is not RACE JSON" in err[-1]
    assert not (tmp_path / "rows.jsonl").exists()
    unlabelled = {key: value for key, value in RECORD.items() if key != "answers"}
    (tmp_path / "dev.json").write_text(json.dumps(unlabelled), encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'dev.json'}"]) == 2
    assert "article/questions/options/answers" in capsys.readouterr().err
