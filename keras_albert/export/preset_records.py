"""The records that travel with a preset: how it was trained, what it scored.

A preset may hold its own records (the bundled ones: `pretraining_metrics.
json`, `student_report.json`); a preset written by `finetune`, `pretrain`
or `distill` sits in `OUTPUT/preset` beside the run's `OUTPUT/metrics.json`.
`find_records` collects both; `describe_record` turns one into the card's
provenance sentences and metric rows, quoting the file's own numbers.
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


@dataclasses.dataclass
class Record:
    """One record: where it was found, where it is published, what it is."""

    source: pathlib.Path
    published_as: str
    kind: str  # finetuning | pretraining | distillation | student_report | other
    data: dict


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
    run_record = preset_dir.parent / "metrics.json"
    if preset_dir.name == "preset" and os.path.lexists(run_record):
        record = _read(run_record, f"{RUN_RECORD_DIR}/metrics.json", follow_link=False)
        if record.kind != "other":  # only what a keras_albert pipeline wrote
            records.append(record)
    return records


def recorded_label_names(records):
    """The class names `finetune` recorded (its metrics.json `labels`), or None."""
    for record in records:
        if record.kind == "finetuning" and isinstance(record.data.get("labels"), list):
            return record.data["labels"]
    return None


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:.4f}"


def _data_name(run, split):
    if run.get("tfds"):
        return f"the `{run[split]}` split of TFDS `{run['tfds']}`"
    if run.get("glue_task"):
        return f"GLUE {run['glue_task']} (`{run[split]}`)"
    return f"`{run[split]}`"


def _finetuning(record):
    data, where = record.data, record.published_as
    run = data.get("data") or {}
    history = data.get("history") or []
    source = f" from `{data['preset']}`" if data.get("preset") else ""
    examples = f"{run['train_examples']:,} examples of " if run.get("train_examples") else ""
    train = f" on {examples}{_data_name(run, 'train')}" if run.get("train") else ""
    evaluation = _data_name(run, "eval") if run.get("eval") else "the evaluation data"
    # Records since the recommended recipe name the held-out part of the
    # training data that chose the epoch; older ones chose on the eval data.
    chooser = data.get("selection_data") or evaluation
    if data.get("selection_metric") == "last epoch":
        choice = "the last epoch kept"
    else:
        choice = f"kept, chosen by {data.get('selection_metric')} on {chooser}"
    provenance = [
        f"Fine-tuned{source} for the `{data.get('task')}` task{train} with "
        f"`python -m keras_albert finetune`; epoch {data.get('best_epoch')} of "
        f"{len(history) or '?'} {choice} (`{where}`)."
    ]
    best = data.get("best") or {}
    rows = [
        (name, _number(value),
         f"{data.get('selection_data') if name.startswith('validation_') else evaluation}, "
         f"best epoch (`{where}`)")
        for name, value in best.items() if name not in ("epoch", "loss")
    ]
    return provenance, rows


def _pretraining(record):
    data, where = record.data, record.published_as
    sentences = [f"Pretrained for {_number(data.get('train_steps'))} steps with masked-LM and "
                 f"sentence-level objectives (`{where}`)."]
    if data.get("recipe"):
        sentences.append(f"Recipe: {data['recipe']}.")
    if data.get("knowledge"):
        sentences.append(f"Where its knowledge comes from: {data['knowledge']}.")
    corpus = data.get("heldout_corpus", "the held-out corpus")
    rows = [
        (f"pretraining {name}", _number(value), f"{corpus} (`{where}`)")
        for name, value in (data.get("heldout") or {}).items()
    ]
    return sentences, rows


def _distillation(record):
    data, where = record.data, record.published_as
    return [
        f"Distilled from `{data.get('teacher')}` ({_number(data.get('teacher_parameters'))} "
        f"backbone parameters) into a student of {_number(data.get('student_parameters'))} "
        f"with `python -m keras_albert distill` (`{where}`)."
    ], []


def _student_report(record):
    data, where = record.data, record.published_as
    settings = data.get("fine_tuning") or {}
    counts = ""
    if settings.get("train_examples") and settings.get("test_examples"):
        counts = (f": {settings['train_examples']:,} labelled training examples, "
                  f"{settings['test_examples']:,} held-out")
    sentences = [f"Teacher and students compared on {data['task']}{counts} (`{where}`)."]
    rows = []
    for name, row in (data.get("models") or {}).items():
        for key in ("accuracy", "tflite_int8_accuracy", "latency_int8_ms"):
            if key in row:
                rows.append((f"{name}: {key}", _number(row[key]), f"{data['task']} (`{where}`)"))
    return sentences, rows


_DESCRIBERS = {
    "finetuning": _finetuning,
    "pretraining": _pretraining,
    "distillation": _distillation,
    "student_report": _student_report,
}


def describe_record(record):
    """(provenance sentences, metric rows (name, value, measured on)) of a
    record, in the record's own words and numbers."""
    describe = _DESCRIBERS.get(record.kind)
    if describe is None:
        return [f"`{record.published_as}`: published as found, not summarised here."], []
    return describe(record)
