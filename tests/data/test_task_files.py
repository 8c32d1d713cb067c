"""Fine-tuning readers: every format, and malformed files named by file and line."""

import json

import pytest

from keras_albert.data.glue_tasks import read_glue
from keras_albert.data.task_files import TaskFileError
from keras_albert.data.task_files import read_conll
from keras_albert.data.task_files import read_race
from keras_albert.data.task_files import read_squad
from keras_albert.data.task_files import read_text_examples


def test_csv_tsv_and_jsonl_tables(tmp_path):
    (tmp_path / "a.csv").write_text('text,label\n"a, quoted text",pos\nplain,neg\n')
    (tmp_path / "a.tsv").write_text('text\tlabel\nsaid "hi\tpos\nplain\tneg\n')
    (tmp_path / "a.jsonl").write_text('{"text": "a", "label": "pos"}\n\n{"text": "b", "label": "neg"}\n')
    for name in ("a.csv", "a.tsv", "a.jsonl"):
        examples = read_text_examples(tmp_path / name)
        assert examples.label_set == ["neg", "pos"] and len(examples.texts) == 2
    assert read_text_examples(tmp_path / "a.csv").texts[0] == "a, quoted text"
    assert read_text_examples(tmp_path / "a.tsv").texts[0] == 'said "hi'
    (tmp_path / "pairs.tsv").write_text("s1\ts2\tscore\na\tb\t3.5\n")
    pairs = read_text_examples(tmp_path / "pairs.tsv", ("s1", "s2"), "score", regression=True)
    assert pairs.text_pairs == ["b"] and pairs.labels == [3.5] and pairs.label_set is None


@pytest.mark.parametrize(
    "content,kwargs,message",
    [
        ("text\tlabel\na\tpos\n", {"text_columns": ("sentence",)}, r"a.tsv' line 1: missing columns \['sentence'\]"),
        ("text\tlabel\na\tpos\nb\tmaybe\n", {"label_set": ["pos", "neg"]}, r"a.tsv' line 3: label 'maybe' is not in the label set"),
        ("text\tlabel\na\t\n", {}, "line 2: missing label column 'label'"),
        ("text\tlabel\na\tx\n", {"regression": True}, "line 2: label 'x' is not a number"),
    ],
)
def test_malformed_tables_name_file_and_line(tmp_path, content, kwargs, message):
    (tmp_path / "a.tsv").write_text(content)
    with pytest.raises(TaskFileError, match=message):
        read_text_examples(tmp_path / "a.tsv", **kwargs)


@pytest.mark.parametrize(
    "name, content, line, found",
    [
        # The hostile case: an extra tab once cut the text and shifted the label.
        ("a.tsv", "text\tlabel\nok\tpos\nhello\tworld\ta\n", 3, 3),
        ("a.tsv", "text\tlabel\nonly_text\n", 2, 1),
        ("a.csv", 'text,label\n"a, b",pos\nhello,world,a\n', 3, 3),
        # Line numbers count physical lines, blank ones and quoted newlines too.
        ("a.tsv", 'text\tlabel\n"two\nlines"\tpos\n\nx\ty\tz\n', 5, 3),
    ],
)
def test_rows_with_the_wrong_number_of_fields_are_errors(tmp_path, name, content, line, found):
    (tmp_path / name).write_text(content)
    with pytest.raises(TaskFileError) as error:
        read_text_examples(tmp_path / name)
    message = str(error.value)
    assert f"{name}' line {line}: {found} fields where the header has 2" in message
    assert "must be quoted" in message


def test_quoted_tsv_fields_may_hold_tabs_quotes_and_newlines(tmp_path):
    (tmp_path / "a.tsv").write_text(
        'text\tlabel\n"hello\tworld"\tpos\n"he said ""hi"""\tneg\n"a\nb"\tpos\n'
    )
    examples = read_text_examples(tmp_path / "a.tsv")
    assert examples.texts == ["hello\tworld", 'he said "hi"', "a\nb"]
    assert examples.labels == ["pos", "neg", "pos"]


def test_glue_style_bare_quotes_stay_text(tmp_path):
    # GLUE writes quotes unescaped, even at a field's start.
    (tmp_path / "a.tsv").write_text('text\tlabel\n"hi" he said\tpos\nsaid "hi\tneg\n')
    assert read_text_examples(tmp_path / "a.tsv").texts == ['"hi" he said', 'said "hi']


def test_jsonl_errors_and_missing_files(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "a", "label": "x"}\n{broken\n')
    with pytest.raises(TaskFileError, match="a.jsonl' line 2: not JSON"):
        read_text_examples(tmp_path / "a.jsonl")
    with pytest.raises(FileNotFoundError, match="nothing.tsv"):
        read_text_examples(tmp_path / "nothing.tsv")


def test_glue_layout(tmp_path):
    (tmp_path / "MRPC").mkdir()
    (tmp_path / "MRPC" / "train.tsv").write_text(
        "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tHe said \"yes\".\tHe agreed.\n"
    )
    (tmp_path / "CoLA").mkdir()
    (tmp_path / "CoLA" / "dev.tsv").write_text("gj04\t1\t\tThe cat sat.\ngj04\t0\t*\tCat the sat.\n")
    mrpc = read_glue("MRPC", tmp_path, "train")
    assert mrpc.texts == ['He said "yes".'] and mrpc.text_pairs == ["He agreed."] and mrpc.labels == ["1"]
    cola = read_glue("cola", tmp_path, "dev")
    assert cola.labels == ["1", "0"] and cola.texts[1] == "Cat the sat."
    with pytest.raises(ValueError, match="Unknown GLUE task"):
        read_glue("glue9", tmp_path)


def squad_file(tmp_path, answer_start=4, impossible=False):
    qa = {"id": "q1", "question": "Who?", "answers": [] if impossible else [{"text": "Anne", "answer_start": answer_start}]}
    if impossible:
        qa["is_impossible"] = True
    data = {"data": [{"paragraphs": [{"context": "Yes, Anne walked.", "qas": [qa]}]}]}
    (tmp_path / "squad.json").write_text(json.dumps(data))
    return tmp_path / "squad.json"


def test_squad_v1_and_v2(tmp_path):
    (example,) = read_squad(squad_file(tmp_path, answer_start=5))
    assert example.answers == [("Anne", 5)] and not example.is_impossible
    (impossible,) = read_squad(squad_file(tmp_path, impossible=True))
    assert impossible.is_impossible and impossible.answers == []
    with pytest.raises(TaskFileError, match=r"qas\[0\] \(id='q1'\): answer_start=4 does not match the answer 'Anne'"):
        read_squad(squad_file(tmp_path, answer_start=4))


def test_race_and_conll(tmp_path):
    record = {"article": "Anne walked.", "questions": ["Who walked?", "When _?"],
              "options": [["Anne", "Emma"], ["now", "then", "never"]], "answers": ["A", "C"]}
    (tmp_path / "race").mkdir()
    (tmp_path / "race" / "1.txt").write_text(json.dumps(record))
    examples = read_race(tmp_path / "race")
    assert [e.label for e in examples] == [0, 2] and len(examples[1].choices) == 3
    (tmp_path / "race" / "1.txt").write_text(json.dumps(dict(record, answers=["A", "D"])))
    with pytest.raises(TaskFileError, match="1.txt' question 1: answer 'D' is not one of"):
        read_race(tmp_path / "race")

    (tmp_path / "a.conll").write_text("-DOCSTART- O\n\nAnne B-PER\nwalked O\n\nEmma B-PER\n")
    sentences, labels, label_set = read_conll(tmp_path / "a.conll")
    assert sentences == [["Anne", "walked"], ["Emma"]] and label_set == ["B-PER", "O"]
    with pytest.raises(TaskFileError, match="a.conll' line 3: label 'B-PER' is not in the label set"):
        read_conll(tmp_path / "a.conll", label_set=["O"])
    (tmp_path / "b.conll").write_text("Anne\n")
    with pytest.raises(TaskFileError, match="b.conll' line 1: expected a word and a label"):
        read_conll(tmp_path / "b.conll")


def test_malformed_csv_quote_names_file_and_line(tmp_path):
    (tmp_path / "a.csv").write_text('text,label\nok,x\n"a" b,x\n')
    with pytest.raises(TaskFileError, match=r"a.csv' line 3: .*not a readable table"):
        read_text_examples(tmp_path / "a.csv")


def test_jsonl_lines_end_at_line_feeds_only(tmp_path):
    # JSON allows U+2028, U+0085 and a form feed raw inside a string.
    text = "a\u2028b\x85c\x0cd"
    record = json.dumps({"text": text, "label": "pos"}, ensure_ascii=False)
    (tmp_path / "a.jsonl").write_bytes((record + "\r\n" + record + "\n").encode("utf-8"))
    examples = read_text_examples(tmp_path / "a.jsonl")
    assert examples.texts == [text, text] and examples.labels == ["pos", "pos"]


@pytest.mark.parametrize("name", ["a.csv", "a.tsv", "a.jsonl", "squad.json"])
def test_a_utf8_bom_is_dropped(tmp_path, name):
    content = {
        "a.csv": "text,label\nx,pos\n",
        "a.tsv": "text\tlabel\nx\tpos\n",
        "a.jsonl": '{"text": "x", "label": "pos"}\n',
        "squad.json": json.dumps({"data": []}),
    }[name]
    (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + content.encode("utf-8"))
    if name == "squad.json":
        assert read_squad(tmp_path / name) == []
    else:
        examples = read_text_examples(tmp_path / name)
        assert examples.texts == ["x"] and examples.labels == ["pos"]


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    (tmp_path / "a.tsv").write_bytes(b"text\tlabel\n\xff\tpos\n")
    with pytest.raises(TaskFileError, match=r"a.tsv' is not UTF-8 text"):
        read_text_examples(tmp_path / "a.tsv")
