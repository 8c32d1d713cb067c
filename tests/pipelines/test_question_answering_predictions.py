"""`predict` with a question-answering preset (what `finetune
--task=squad` writes): one answer per table row, the span
`AlbertQuestionAnswerer.answer` gives, as JSON lines or TSV; a file of
plain lines refused before the model loads."""

import csv
import io
import json

import pytest

import keras_albert
from keras_albert.cli.main import main
from keras_albert.data import task_metrics

ROWS = [
    {"question": "where did emma live?", "context": "emma lived at hartfield near the village."},
    {"question": "who wrote?", "context": " ".join(["the cat sat on the mat"] * 12)},  # several windows
]


@pytest.fixture(scope="module")
def answerer_preset(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertQuestionAnswererPreprocessor(tokenizer, sequence_length=32, doc_stride=8)
    model = keras_albert.AlbertQuestionAnswerer(backbone, preprocessor=preprocessor)
    directory = tmp_path_factory.mktemp("answerer") / "preset"
    model.save_to_preset(str(directory))
    return directory, model


def test_each_row_gets_the_answer_the_model_gives(answerer_preset, tmp_path, capsys):
    directory, model = answerer_preset
    table = tmp_path / "questions.jsonl"
    table.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={table}"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = model.answer([r["question"] for r in ROWS], [r["context"] for r in ROWS])
    assert [row["question"] for row in rows] == [r["question"] for r in ROWS]
    assert [row["answer"] for row in rows] == [e["text"] for e in expected]
    for row, answer in zip(rows, expected):
        assert row["context"][row["start"]:row["end"]] == row["answer"]
        assert row["score"] == pytest.approx(answer["score"], abs=1e-5)


def test_tsv_and_other_column_names(answerer_preset, tmp_path, capsys):
    directory, _ = answerer_preset
    table = tmp_path / "questions.tsv"
    table.write_text("q\tpassage\n" + "".join(f"{r['question']}\t{r['context']}\n" for r in ROWS), encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={table}", "--text_columns=q",
                 "--text_columns=passage", "--format=tsv", "--allow_no_answer"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out), delimiter="\t"))
    assert rows[0] == ["question", "answer", "start", "end", "score"]
    assert [row[0] for row in rows[1:]] == [r["question"] for r in ROWS]


def test_a_file_of_lines_is_refused_before_loading(answerer_preset, tmp_path, capsys):
    directory, _ = answerer_preset
    (tmp_path / "questions.txt").write_text("where did emma live?\n", encoding="utf-8")
    assert main(["predict", f"--preset={directory}", f"--texts={tmp_path / 'questions.txt'}"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("error: ")
    assert "answers questions from contexts, so `--texts` must be a table" in err
    assert "Loading preset" not in err


def test_evaluate_scores_a_squad_file_as_finetune_does(answerer_preset, tmp_path):
    directory, model = answerer_preset
    context = ROWS[0]["context"]
    squad = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": "1", "question": "where did emma live?", "is_impossible": False,
         "answers": [{"text": "hartfield", "answer_start": context.index("hartfield")}]},
        {"id": "2", "question": "who sang?", "is_impossible": True, "answers": []},
    ]}]}]}
    (tmp_path / "dev.json").write_text(json.dumps(squad), encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'dev.json'}",
                 f"--output={tmp_path / 'report.json'}"]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["questions"] == 2 and report["allow_no_answer"] is True
    predicted = model.answer(["where did emma live?", "who sang?"], [context] * 2, allow_no_answer=True)
    expected = task_metrics.squad_scores([p["text"] for p in predicted], [["hartfield"], [""]])
    assert report["metrics"] == pytest.approx(expected)

    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    assert main(["evaluate", f"--preset={directory}", f"--data={tmp_path / 'bad.json'}"]) == 2
