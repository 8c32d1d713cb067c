"""What `predict_texts` and `evaluate_classifier` take, and the checks that
need no model; imports nothing heavy, so the CLI reads the defaults for its
flags and checks its inputs before TensorFlow is imported."""

import dataclasses
import numbers
import pathlib

from keras_albert.presets.preset_kind import check_preset_known
from keras_albert.presets.preset_kind import check_preset_positions
from keras_albert.presets.preset_kind import local_preset_or_none
from keras_albert.presets.preset_kind import task_class_name
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.backend import requested_backend
from keras_albert.utils.regular_files import check_regular_file

STDIN = STDOUT = "-"
OUTPUT_FORMATS = ("jsonl", "tsv")
# Table files read by column (`text_columns`); any other file is one text a line.
TABLE_SUFFIXES = (".tsv", ".csv", ".jsonl")


@dataclasses.dataclass
class PredictSettings:
    """Everything `python -m keras_albert predict` takes (see its --help).

    Example:

    ```python
    from keras_albert.pipelines.prediction_settings import PredictSettings
    from keras_albert.pipelines.predicting import predict_texts

    rows = predict_texts(PredictSettings(
        texts="texts.txt", preset="runs/my_task/preset", output="predictions.jsonl"))
    print(rows[0]["label"], rows[0]["probability"])
    ```
    """

    # One text a line ("-": standard input), or a .tsv/.csv/.jsonl table
    # whose `text_columns` are read.
    texts: str
    # A text classifier preset (the preset/ that `finetune` writes, or a
    # bundled name), or a serving SavedModel (its serving/); exactly one.
    preset: str = None
    saved_model: str = None
    # A file, or "-" for standard output.
    output: str = STDOUT
    # "jsonl" or "tsv"; None: tsv for an output ending in .tsv, else jsonl.
    format: str = None
    # For table inputs: one column, or two for text pairs.
    text_columns: tuple = ("text",)
    batch_size: int = 32
    # Pieces per text; None: the preset's own (a SavedModel has its own).
    sequence_length: int = None
    # Replace an existing output file.
    overwrite: bool = False
    # A question-answering preset answers "" where it rates "no answer"
    # above every span (SQuAD v2); otherwise always a span.
    allow_no_answer: bool = False


@dataclasses.dataclass
class EvaluateSettings:
    """Everything `python -m keras_albert evaluate` takes (see its --help).

    Example:

    ```python
    from keras_albert.pipelines.evaluating import evaluate_classifier
    from keras_albert.pipelines.prediction_settings import EvaluateSettings

    report = evaluate_classifier(EvaluateSettings(data="dev.tsv", preset="runs/my_task/preset"))
    print(report["metrics"]["accuracy"])
    ```
    """

    # A labelled .tsv/.csv/.jsonl table.
    data: str
    preset: str = None
    saved_model: str = None
    # A JSON file, or "-" for standard output.
    output: str = STDOUT
    text_columns: tuple = ("text",)
    label_column: str = "label"
    batch_size: int = 32
    sequence_length: int = None
    overwrite: bool = False


def output_format(settings):
    """The format the output is written in (`PredictSettings.format`)."""
    if settings.format is not None:
        return settings.format
    return "tsv" if str(settings.output).lower().endswith(".tsv") else "jsonl"


def _check_model_source(settings):
    if bool(settings.preset) == bool(settings.saved_model):
        given = "both" if settings.preset else "neither"
        raise ValueError(
            "Pass exactly one of `--preset` (a text classifier preset, e.g. the preset/ that "
            "`finetune` writes) and `--saved_model` (a serving SavedModel, e.g. its serving/). "
            f"Received {given}."
        )
    if settings.saved_model:
        backend = requested_backend()
        if backend != "tensorflow":
            raise ValueError(
                f"`--saved_model` runs with TensorFlow only (KERAS_BACKEND=tensorflow); this run is "
                f"on KERAS_BACKEND={backend}: pass the classifier as `--preset` instead."
            )
        directory = pathlib.Path(settings.saved_model)
        if not (directory / "saved_model.pb").is_file():
            what = "does not exist" if not directory.exists() else "holds no saved_model.pb"
            raise FileNotFoundError(
                f"`--saved_model` {settings.saved_model!r} {what}: pass the directory of a "
                "serving SavedModel (the serving/ that `finetune` or `export --format=saved_model` writes)."
            )
    elif pathlib.Path(settings.preset).is_file():
        raise ValueError(f"`--preset` {settings.preset!r} is a file; pass a preset directory or a bundled name.")
    else:
        check_preset_known(settings.preset)


def _check_input_file(path, flag, allow_stdin=False, allow_directory=False):
    if allow_stdin and path == STDIN:
        return
    if not path:
        raise ValueError(f"`{flag}` is empty; pass a file{' or - (standard input)' if allow_stdin else ''}.")
    if not pathlib.Path(path).exists():
        raise FileNotFoundError(f"`{flag}` {path!r} does not exist.")
    if pathlib.Path(path).is_dir():
        if allow_directory:  # RACE: a directory of JSON records
            return
        raise ValueError(f"`{flag}` {path!r} is a directory; pass a file.")
    if check_regular_file(path, f"`{flag}`", follow_link=True).stat().st_size == 0:
        raise ValueError(f"`{flag}` {path!r} is empty; it must hold at least one text.")


def _check_output(settings):
    if settings.output == STDOUT:
        return
    if not settings.output:
        raise ValueError("`--output` is empty; pass a file, or - for standard output.")
    path = pathlib.Path(settings.output)
    if path.is_dir():
        raise ValueError(f"`--output` {settings.output!r} is a directory; pass a file.")
    if path.exists() and not settings.overwrite:
        raise ValueError(f"`--output` {settings.output!r} exists; pass --overwrite to replace it.")
    check_writable_directory(path.parent, name="--output")


def _check_numbers(settings):
    batch_size = settings.batch_size
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
        raise ValueError(f"`--batch_size` must be a positive integer. Received: {batch_size!r}")
    length = settings.sequence_length
    if length is not None and (isinstance(length, bool) or not isinstance(length, numbers.Integral) or length < 2):
        raise ValueError(
            f"`--sequence_length` must be an integer >= 2 (room for [CLS] and [SEP]). Received: {length!r}")
    if settings.preset:
        check_preset_positions(settings.preset, length)
    if len(settings.text_columns) not in (1, 2):
        raise ValueError(
            f"`--text_columns` takes one column, or two for pairs. Received: {list(settings.text_columns)}")


def check_predict_settings(settings):
    """Fails on bad input before any model is loaded or anything written:
    one line naming the flag, the value and what is accepted."""
    _check_model_source(settings)
    _check_input_file(settings.texts, "--texts", allow_stdin=not chooses_options(settings.preset),
                      allow_directory=chooses_options(settings.preset))
    if answers_questions(settings.preset) and (
        settings.texts == STDIN or pathlib.Path(settings.texts).suffix.lower() not in TABLE_SUFFIXES
    ):
        raise ValueError(
            f"`--preset` {settings.preset!r} answers questions from contexts, so `--texts` must be a table "
            f"({', '.join(TABLE_SUFFIXES)}) with a question and a context column (`question` and `context`, "
            f"or the two --text_columns). Received: --texts={settings.texts!r}"
        )
    if settings.format is not None and settings.format not in OUTPUT_FORMATS:
        raise ValueError(f"`--format` must be one of {OUTPUT_FORMATS}. Received: {settings.format!r}")
    _check_numbers(settings)
    _check_output(settings)


def _preset_task_name(preset):
    """The task class a local or bundled preset holds (its task.json, read
    without Keras), or None."""
    directory = local_preset_or_none(preset) if preset else None
    if directory is None:
        return None
    try:
        return task_class_name(directory)
    except ValueError:
        return None  # loading names what is wrong with it


def tags_words(preset):
    """Whether `preset` is a token classifier preset: `evaluate` then reads
    CoNLL columns."""
    return _preset_task_name(preset) == "AlbertTokenClassifier"


def chooses_options(preset):
    """Whether `preset` is a multiple-choice preset: `predict` and
    `evaluate` then read RACE JSON."""
    return _preset_task_name(preset) == "AlbertMultipleChoice"


def answers_questions(preset):
    """Whether `preset` is a span question-answering preset: `predict` then
    reads (question, context) rows."""
    return _preset_task_name(preset) == "AlbertQuestionAnswerer"


def check_evaluate_settings(settings):
    """As `check_predict_settings`, for `evaluate`."""
    _check_model_source(settings)
    _check_input_file(settings.data, "--data", allow_directory=chooses_options(settings.preset))
    if tags_words(settings.preset) or answers_questions(settings.preset) or chooses_options(settings.preset):
        _check_numbers(settings)
        _check_output(settings)
        return  # CoNLL columns under any name (CoNLL-2003's own files have no suffix), SQuAD or RACE JSON
    if pathlib.Path(settings.data).suffix.lower() not in TABLE_SUFFIXES:
        raise ValueError(
            f"`--data` {settings.data!r} must be a labelled table: {', '.join(TABLE_SUFFIXES)} "
            "(a header naming --text_columns and --label_column)."
        )
    if not settings.label_column:
        raise ValueError("`--label_column` is empty; name the column holding the labels.")
    _check_numbers(settings)
    _check_output(settings)
