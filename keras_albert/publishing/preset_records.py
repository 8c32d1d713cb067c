"""The records that travel with a preset: how it was trained, what it scored.

A preset may hold its own records (the bundled ones: `pretraining_metrics.
json`, `student_report.json`); a preset written by `finetune`, `pretrain`
or `distill` sits in `OUTPUT/preset` beside the run's `OUTPUT/metrics.json`.
A pretraining run's `OUTPUT/settings.json` (how its data was made) comes
along. `find_records` collects them; `describe_record` turns one into the
card's provenance sentences and the model's own results, and
`recorded_hyperparameters` lists the settings the records hold, quoting
each file's own numbers and words.
"""

import dataclasses
import json
import os
import pathlib

from keras_albert.presets.preset_validation import MAX_JSON_BYTES
from keras_albert.utils.regular_files import check_regular_file

# Records a preset directory may hold itself.
RECORD_FILES = ("metrics.json", "pretraining_metrics.json", "student_report.json")
# Where the run's record goes in the published directory.
RUN_RECORD_DIR = "training_run"
# Which row of a bundled preset's student report is that preset
# (tools/student_report.py; the report's other rows are the models it was
# compared with).
BUNDLED_REPORT_ROWS = {"albert_tiny_en_student_supersense": "student, task-distilled"}


@dataclasses.dataclass
class Record:
    """One record: where it was found, where it is published, what it is."""

    source: pathlib.Path
    published_as: str
    kind: str  # finetuning | pretraining | pretraining_settings | distillation | student_report | other
    data: dict
    # A student report's row that is this preset (the others are other models).
    own_row: str = None


def record_kind(data):
    """Which pipeline wrote `data`, told by the keys each one writes."""
    if not isinstance(data, dict):
        return "other"
    if "best" in data and "selection_metric" in data:
        return "finetuning"
    if "models" in data and "task" in data:
        return "student_report"
    if "student_parameters" in data and "teacher" in data:
        return "distillation"
    if "train_steps" in data and ("heldout" in data or "train" in data):
        return "pretraining"
    if "dupe_factor" in data and "max_predictions_per_seq" in data:
        return "pretraining_settings"
    return "other"


def _read(path, published_as, follow_link=True):
    # A run's record beside a local preset is never a link (it would be
    # published); one inside was checked with the preset.
    check_regular_file(path, "The preset's record", MAX_JSON_BYTES, follow_link)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"The preset's record {str(path)!r} cannot be read as JSON: {error}") from None
    return Record(path, published_as, record_kind(data), data)


def find_records(preset_dir):
    """The records of the preset in `preset_dir`, its own first."""
    preset_dir = pathlib.Path(preset_dir)
    records = [_read(preset_dir / name, name) for name in RECORD_FILES if (preset_dir / name).is_file()]
    for record in records:
        if record.kind == "student_report":
            record.own_row = record.data.get("preset_row") or BUNDLED_REPORT_ROWS.get(preset_dir.name)
    if preset_dir.name != "preset":
        return records
    for name in ("metrics.json", "settings.json"):
        run_record = preset_dir.parent / name
        if os.path.lexists(run_record):
            record = _read(run_record, f"{RUN_RECORD_DIR}/{name}", follow_link=False)
            if record.kind != "other":  # only what a keras_albert pipeline wrote
                records.append(record)
    return records


def recorded_label_names(records):
    """The class names `finetune` recorded (its metrics.json `labels`), or None."""
    for record in records:
        if record.kind == "finetuning" and isinstance(record.data.get("labels"), list):
            return record.data["labels"]
    return None



@dataclasses.dataclass
class Result:
    """One figure the published model itself scored, as its record states it."""

    metric: str  # the record's name for it, e.g. "validation_accuracy"
    value: float
    data: str  # the data, in words, e.g. "`dev.tsv`"
    split: str  # which part of it, in words
    dataset: str  # a short identifier of the data (a Hub dataset id where known)
    record: str  # the published record file that states it
    task: str = None  # the pipeline tag it measures; None: the model's own
    examples: int = None  # how many examples it was measured on, where recorded
    dataset_config: str = None


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:.4f}"


def _setting(value):
    return f"{value:g}" if isinstance(value, float) else _number(value)


# A student report's settings, in the card's words (tools/student_report.py).
_REPORT_SETTINGS = {
    "train_examples": "labelled training examples", "test_examples": "held-out examples",
    "epochs": "teacher fine-tuning epochs", "learning_rate": "teacher fine-tuning learning rate",
    "student_epochs": "student epochs", "student_learning_rate": "student learning rate",
    "distill_temperature": "distillation temperature", "distill_alpha": "distillation alpha (soft-target weight)",
}


def _file_name(value):
    return pathlib.PurePath(str(value)).name or str(value)


def _data(run, split):
    """(words, dataset identifier, config) for the run's `split` file."""
    if run.get("glue_task"):
        return f"GLUE {run['glue_task']} (`{run[split]}`)", "nyu-mll/glue", str(run["glue_task"]).lower()
    if run.get("tfds"):
        return f"the `{run[split]}` split of TFDS `{run['tfds']}`", str(run["tfds"]), None
    return f"`{run[split]}`", _file_name(run[split]), None


def selection(data):
    """How a finetuning record chose the epoch it kept: "last" (none was
    chosen), "validation" (on data held out of training, not the reported
    evaluation data) or "evaluation" (older records: on the reported data)."""
    metric = data.get("selection_metric")
    if metric == "last epoch":
        return "last"
    if data.get("selection_data") and str(metric).startswith("validation_"):
        return "validation"
    return "evaluation"


def _finetuning(record):
    data, where = record.data, record.published_as
    run = data.get("data") or {}
    history = data.get("history") or []
    source = f" from `{data['preset']}`" if data.get("preset") else ""
    examples = f"{run['train_examples']:,} examples of " if run.get("train_examples") else ""
    train = f" on {examples}{_data(run, 'train')[0]}" if run.get("train") else ""
    evaluation, eval_id, eval_config = _data(run, "eval") if run.get("eval") else (
        "the evaluation data", "evaluation data", None)
    chosen = selection(data)
    if chosen == "last":
        choice = "the last epoch kept (no validation split, so nothing chose it)"
    elif chosen == "validation":
        choice = f"kept, chosen by {data['selection_metric']} on {data['selection_data']}"
    else:
        choice = f"kept, chosen by {data.get('selection_metric')} on {evaluation}"
    provenance = [
        f"Fine-tuned{source} for the `{data.get('task')}` task{train} with "
        f"`python -m keras_albert finetune`; epoch {data.get('best_epoch')} of "
        f"{len(history) or '?'} {choice} (`{where}`)."
    ]
    train_words, train_id, train_config = _data(run, "train") if run.get("train") else (
        "the training data", "training data", None)
    results = []
    for name, value in (data.get("best") or {}).items():
        if name in ("epoch", "loss") or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if name.startswith("validation_"):
            results.append(Result(name, value, train_words, f"validation: {data.get('selection_data')}",
                                  train_id, where, examples=run.get("validation_examples"),
                                  dataset_config=train_config))
        else:
            results.append(Result(name, value, evaluation, "evaluation", eval_id, where,
                                  examples=run.get("eval_examples"), dataset_config=eval_config))
    return provenance, results


def _pretraining(record):
    data, where = record.data, record.published_as
    tokens = f" ({_number(data['train_tokens'])} tokens)" if data.get("train_tokens") else ""
    causal = data.get("objective") == "causal_lm"
    objectives = "next-token prediction" if causal else "masked-LM and sentence-level objectives"
    sentences = [f"Pretrained for {_number(data.get('train_steps'))} steps{tokens} with {objectives} (`{where}`)."]
    if data.get("recipe"):
        sentences.append(f"Recipe: {data['recipe']}.")
    if data.get("knowledge"):
        sentences.append(f"Where its knowledge comes from: {data['knowledge']}.")
    corpus = data.get("heldout_corpus", "the held-out corpus")
    results = [
        Result(f"pretraining {name}", value, corpus, "held out of pretraining", "heldout-corpus", where,
               task="text-generation" if causal else "fill-mask")
        for name, value in (data.get("heldout") or {}).items()
        # "tokens" is how many were scored, a count rather than a result.
        if isinstance(value, (int, float)) and not isinstance(value, bool) and name != "tokens"
    ]
    return sentences, results


def _pretraining_settings(record):
    corpus = record.data.get("corpus")
    names = ", ".join(f"`{_file_name(c)}`" for c in corpus) if isinstance(corpus, list) else None
    return ([f"Pretraining data made from {names} (`{record.published_as}`)."] if names else []), []


def _distillation(record):
    data, where = record.data, record.published_as
    return [
        f"Distilled from `{data.get('teacher')}` ({_number(data.get('teacher_parameters'))} "
        f"backbone parameters) into a student of {_number(data.get('student_parameters'))} "
        f"with `python -m keras_albert distill` (`{where}`)."
    ], []


# What a student report's row measured, in the card's words.
# (The int8 TFLite accuracy is of another file, not of the published model.)
_REPORT_METRICS = ("accuracy",)


def _student_report(record):
    """The report compares several models; only the row of the preset it
    travels with (`Record.own_row`) is this model's. Without one, none is."""
    data, where = record.data, record.published_as
    settings = data.get("fine_tuning") or {}
    counts = ""
    if settings.get("train_examples") and settings.get("test_examples"):
        counts = (f": {settings['train_examples']:,} labelled training examples, "
                  f"{settings['test_examples']:,} in the test split")
    models = data.get("models") or {}
    own = record.own_row
    others = [name for name in models if name != own]
    sentences = [f"Teacher and students compared on {data['task']}{counts} (`{where}`)."]
    if own in models:
        sentences.append(f"This model is the report's `{own}` row; its other rows "
                         f"({', '.join(f'`{name}`' for name in others)}) are other models, not quoted here.")
    # student_report.py scores every model on the task's test split, which
    # none of its choices read.
    results = [
        Result(key, models[own][key], data["task"], "test split", "wordnet-supersense", where,
               examples=settings.get("test_examples"))
        for key in _REPORT_METRICS if own in models and key in models[own]
    ]
    return sentences, results


_DESCRIBERS = {
    "finetuning": _finetuning,
    "pretraining": _pretraining,
    "pretraining_settings": _pretraining_settings,
    "distillation": _distillation,
    "student_report": _student_report,
}


def describe_record(record):
    """(provenance sentences, the model's own `Result`s) of a record, in the
    record's own words and numbers."""
    describe = _DESCRIBERS.get(record.kind)
    if describe is None:
        return [f"`{record.published_as}`: published as found, not summarised here."], []
    return describe(record)


# Settings of a pretraining run's settings.json, in the card's words.
_PRETRAINING_SETTINGS = (
    ("vocabulary_size", "SentencePiece vocabulary size"), ("max_seq_length", "sequence length (pieces)"),
    ("max_predictions_per_seq", "masked positions per sequence"), ("masked_lm_prob", "masking rate"),
    ("dupe_factor", "masking passes over the corpus (dupe factor)"),
    ("sentence_task", "sentence-level task"), ("seed", "seed"), ("num_groups", "shared layer groups"),
    ("dropout", "dropout"),
)


def _scalar(value):
    return isinstance(value, (int, float, str)) and not isinstance(value, bool) or value is None


def recorded_hyperparameters(records):
    """[(setting, value, record file)] for the settings the records hold;
    what no record holds is left out, never guessed."""
    rows = []
    for record in records:
        data, where = record.data, record.published_as

        def add(name, value, where=where):
            if value is not None and value != "":
                rows.append((name, _setting(value), where))

        if record.kind == "finetuning":
            run = data.get("data") or {}
            add("peak learning rate", data.get("learning_rate"))
            add("epochs trained", len(data.get("history") or []) or None)
            add("epoch kept", data.get("best_epoch"))
            add("head fitted on frozen features first (epoch 0)",
                "yes" if data.get("head_warm_start") else ("no" if "head_warm_start" in data else None))
            add("epoch chosen by", data.get("selection_metric"))
            add("validation data", data.get("selection_data"))
            add("training examples", run.get("train_examples"))
            add("validation examples", run.get("validation_examples"))
            add("evaluation examples", run.get("eval_examples"))
            for name, value in (data.get("settings") or {}).items():
                if _scalar(value):
                    add(name.replace("_", " "), value)
        elif record.kind == "pretraining":
            add("training steps", data.get("train_steps"))
        elif record.kind == "pretraining_settings":
            for key, name in _PRETRAINING_SETTINGS:
                add(name, data.get(key))
        elif record.kind == "student_report":
            for name, value in (data.get("fine_tuning") or {}).items():
                if _scalar(value):
                    add(_REPORT_SETTINGS.get(name, name.replace("_", " ")), value)
        elif record.kind == "distillation":
            add("teacher", data.get("teacher"))
            for stage in data.get("stages") or []:
                if isinstance(stage, dict):
                    add(f"distillation steps ({stage.get('stage')})", stage.get("steps"))
    return rows
