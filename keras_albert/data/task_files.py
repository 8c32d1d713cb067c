"""Readers for fine-tuning data: classification tables, GLUE, SQuAD, RACE, CoNLL.

Every reader checks what it reads and names the file and line (or, for
JSON, the file and the record's path) of the first problem: a missing
column, a label outside the label set, an answer_start that does not point
at the answer text.
"""

import csv
import dataclasses
import io
import json
import pathlib


class TaskFileError(ValueError):
    """A fine-tuning file that cannot be read as the task needs."""


def _open_text(path):
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Data file not found: {str(path)!r}")
    try:
        # Decoded as is, not read in text mode: universal newlines would turn
        # a carriage return inside a quoted cell into a line feed. The readers
        # below split lines themselves ("\r\n" included). "utf-8-sig" drops
        # the BOM some editors write, which would otherwise stick to the
        # first column's name or make the first JSON line invalid.
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TaskFileError(f"{str(path)!r} is not UTF-8 text: {error}") from None


def _label(value, label_set, where, regression):
    if regression:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise TaskFileError(f"{where}: label {value!r} is not a number.") from None
    value = str(value)
    if label_set is not None and value not in label_set:
        raise TaskFileError(f"{where}: label {value!r} is not in the label set {list(label_set)}.")
    return value


@dataclasses.dataclass
class TextExamples:
    """Texts (one or two segments) and labels read from a table."""

    texts: list
    text_pairs: list  # None when single-segment
    labels: list  # strings (classification) or floats (regression); None if unlabelled
    label_set: list  # sorted class names, or None for regression


def _rows(path, text_columns, label_column, fieldnames=None):
    """(line number, {column: value}) from CSV, TSV or JSONL.

    `fieldnames` names the columns of a table without a header line.
    """
    text = _open_text(path)
    suffix = pathlib.Path(path).suffix.lower()
    if suffix in (".jsonl", ".json"):
        # JSON lines end at "\n" only: splitlines would also cut at U+2028,
        # U+0085 or a form feed, which JSON allows raw inside a string.
        for number, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as error:
                raise TaskFileError(f"{str(path)!r} line {number}: not JSON ({error}).") from None
            if not isinstance(row, dict):
                raise TaskFileError(f"{str(path)!r} line {number}: expected a JSON object.")
            yield number, row
        return
    if suffix not in (".csv", ".tsv", ".txt"):
        raise TaskFileError(
            f"{str(path)!r}: unknown table format {suffix!r}; accepted: .csv, .tsv, .jsonl."
        )
    records = _table_records(path, text, suffix)
    if fieldnames is None:
        if not records:
            raise TaskFileError(f"{str(path)!r} holds no examples.")
        header = records.pop(0)[1]
    else:
        header = list(fieldnames)
    wanted = list(text_columns) + ([label_column] if label_column else [])
    missing = [c for c in wanted if c not in header]
    if missing:
        raise TaskFileError(
            f"{str(path)!r} line 1: missing columns {missing}; the header has {header}."
        )
    for number, fields in records:
        if len(fields) != len(header):
            raise TaskFileError(
                f"{str(path)!r} line {number}: {len(fields)} fields where the "
                f"header has {len(header)} ({header}); the row reads {fields!r}. "
                "A text holding the delimiter (a tab in .tsv, a comma in .csv) "
                'must be quoted: "a<TAB>b".'
            )
        yield number, dict(zip(header, fields))


class _Csv(csv.Dialect):
    delimiter = ","
    quotechar = '"'
    doublequote = True
    skipinitialspace = False
    lineterminator = "\n"
    quoting = csv.QUOTE_MINIMAL
    strict = True


class _QuotedTsv(_Csv):
    """TSV whose fields may be quoted, RFC 4180 style ("a<TAB>b")."""

    delimiter = "\t"


class _BareTsv(_QuotedTsv):
    """GLUE's TSVs: quotes are plain characters, even at a field's start."""

    quoting = csv.QUOTE_NONE
    quotechar = None
    doublequote = False
    strict = False


def _records(text, dialect):
    """[(line number where the record starts, fields)], blank lines skipped."""
    reader = csv.reader(io.StringIO(text, newline=""), dialect=dialect)
    records, line = [], 1
    try:
        for fields in reader:
            if fields:
                records.append((line, fields))
            line = reader.line_num + 1
    except csv.Error as error:
        raise csv.Error(f"line {reader.line_num}: {error}") from None
    return records


def _table_records(path, text, suffix):
    """The records of a CSV or TSV table.

    A TSV is read with quoting when that reads every row with one field
    count, else as GLUE writes it (quotes are plain characters) when that
    does; if neither does, the reading whose quotes were well formed is
    kept, so that its first odd row is the one reported.
    """
    dialects = [_Csv] if suffix == ".csv" else [_QuotedTsv, _BareTsv]
    readings = []
    for dialect in dialects:
        try:
            records = _records(text, dialect)
        except csv.Error as error:
            readings.append(error)
            continue
        if len({len(fields) for _, fields in records}) <= 1:
            return records
        readings.append(records)
    for reading in readings:
        if not isinstance(reading, csv.Error):
            return reading
    raise TaskFileError(f"{str(path)!r} {readings[0]}; not a readable table.")


def read_text_examples(
    path,
    text_columns=("text",),
    label_column="label",
    label_set=None,
    regression=False,
    fieldnames=None,
):
    """Reads a CSV/TSV (with a header) or JSONL table of texts and labels.

    Args:
        path: the file; `.csv`, `.tsv` or `.jsonl`.
        text_columns: one column, or two for sentence pairs.
        label_column: the label column, or None for unlabelled data.
        label_set: accepted labels; None to take those found (classification).
        regression: labels are numbers.
        fieldnames: column names for a CSV/TSV without a header line.
    """
    if len(text_columns) not in (1, 2):
        raise ValueError(f"`text_columns` must name 1 or 2 columns. Received: {text_columns!r}")
    texts, pairs, labels = [], [], []
    for number, row in _rows(path, text_columns, label_column, fieldnames):
        where = f"{str(path)!r} line {number}"
        values = []
        for column in text_columns:
            if row.get(column) is None:
                raise TaskFileError(f"{where}: missing column {column!r}.")
            values.append(str(row[column]))
        texts.append(values[0])
        pairs.append(values[1] if len(values) == 2 else None)
        if label_column:
            if row.get(label_column) in (None, ""):
                raise TaskFileError(f"{where}: missing label column {label_column!r}.")
            labels.append(_label(row[label_column], label_set, where, regression))
    if not texts:
        raise TaskFileError(f"{str(path)!r} holds no examples.")
    if regression:
        found = None
    else:
        found = sorted(label_set) if label_set is not None else sorted(set(labels))
    return TextExamples(
        texts=texts,
        text_pairs=pairs if len(text_columns) == 2 else None,
        labels=labels if label_column else None,
        label_set=found,
    )


@dataclasses.dataclass
class SquadExample:
    id: str
    question: str
    context: str
    answers: list  # [(text, start)]; empty when impossible
    is_impossible: bool


def read_squad(path):
    """SQuAD v1.1 or v2.0 JSON -> [SquadExample], answers checked."""
    try:
        data = json.loads(_open_text(path))["data"]
    except (ValueError, KeyError, TypeError) as error:
        raise TaskFileError(f"{str(path)!r}: not SQuAD JSON with a 'data' list ({error}).") from None
    examples = []
    for a, article in enumerate(data):
        for p, paragraph in enumerate(article.get("paragraphs", [])):
            context = paragraph.get("context")
            for q, qa in enumerate(paragraph.get("qas", [])):
                where = f"{str(path)!r} data[{a}].paragraphs[{p}].qas[{q}] (id={qa.get('id')!r})"
                if not isinstance(context, str) or "question" not in qa:
                    raise TaskFileError(f"{where}: needs 'context' and 'question'.")
                answers = []
                for answer in qa.get("answers", []):
                    text, start = answer.get("text"), answer.get("answer_start")
                    if not isinstance(text, str) or not isinstance(start, int):
                        raise TaskFileError(f"{where}: an answer needs 'text' and an int 'answer_start'.")
                    if context[start:start + len(text)] != text:
                        raise TaskFileError(
                            f"{where}: answer_start={start} does not match the answer "
                            f"{text!r} (context has {context[start:start + len(text)]!r})."
                        )
                    answers.append((text, start))
                impossible = bool(qa.get("is_impossible", False))
                if not answers and not impossible:
                    raise TaskFileError(f"{where}: no answers and not marked is_impossible.")
                examples.append(SquadExample(str(qa.get("id", where)), qa["question"], context, answers, impossible))
    return examples


@dataclasses.dataclass
class ChoiceExample:
    context: str
    question: str
    choices: list
    label: int


def read_race(path, labelled=True):
    """RACE JSON files (one article each, or a directory of them).
    `labelled=False` reads records without `answers` too (label -1)."""
    path = pathlib.Path(path)
    files = sorted(path.rglob("*.txt")) + sorted(path.rglob("*.json")) if path.is_dir() else [path]
    examples = []
    for file in files:
        try:
            record = json.loads(_open_text(file))
            article, questions = record["article"], record["questions"]
            options = record["options"]
            answers = record["answers"] if labelled or "answers" in record else [None] * len(questions)
        except (ValueError, KeyError, TypeError) as error:
            fields = "article/questions/options/answers" if labelled else "article/questions/options"
            raise TaskFileError(f"{str(file)!r}: not a RACE record with {fields} ({error}).") from None
        for i, (question, choices, answer) in enumerate(zip(questions, options, answers)):
            letters = [chr(ord("A") + k) for k in range(len(choices))]
            if answer is not None and answer not in letters:
                raise TaskFileError(f"{str(file)!r} question {i}: answer {answer!r} is not one of {letters}.")
            label = -1 if answer is None else letters.index(answer)
            examples.append(ChoiceExample(article, question, list(choices), label))
    if not examples:
        raise TaskFileError(f"{str(path)!r} holds no RACE questions.")
    return examples


def read_conll(path, label_set=None, label_column=-1):
    """CoNLL columns (word first, label in `label_column`), blank line between sentences.

    Returns (sentences as word lists, label lists, sorted label set).
    """
    sentences, labels, words, tags = [], [], [], []
    for number, line in enumerate(_open_text(path).splitlines() + [""], 1):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if words:
                sentences.append(words)
                labels.append(tags)
                words, tags = [], []
            continue
        if len(fields) < 2:
            raise TaskFileError(f"{str(path)!r} line {number}: expected a word and a label, got {line!r}.")
        tag = fields[label_column]
        if label_set is not None and tag not in label_set:
            raise TaskFileError(f"{str(path)!r} line {number}: label {tag!r} is not in the label set {list(label_set)}.")
        words.append(fields[0])
        tags.append(tag)
    if not sentences:
        raise TaskFileError(f"{str(path)!r} holds no sentences.")
    found = sorted(label_set) if label_set is not None else sorted({t for row in labels for t in row})
    return sentences, labels, found
