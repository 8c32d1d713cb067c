"""The GLUE benchmark's directory layout: files, columns, labels, metrics."""

import dataclasses
import pathlib

from keras_albert.data.task_files import read_text_examples


@dataclasses.dataclass(frozen=True)
class GlueTask:
    directory: str
    text_columns: tuple
    label_column: str
    labels: tuple  # () for regression
    metrics: tuple  # the first is the one to select checkpoints on
    dev_file: str = "dev.tsv"
    fieldnames: tuple = None  # for files without a header line


_NLI = ("contradiction", "entailment", "neutral")
_RTE = ("entailment", "not_entailment")

GLUE_TASKS = {
    "cola": GlueTask("CoLA", ("sentence",), "label", ("0", "1"), ("matthews_correlation", "accuracy"),
                     fieldnames=("source", "label", "original_label", "sentence")),
    "sst2": GlueTask("SST-2", ("sentence",), "label", ("0", "1"), ("accuracy",)),
    "mrpc": GlueTask("MRPC", ("#1 String", "#2 String"), "Quality", ("0", "1"), ("f1", "accuracy")),
    "qqp": GlueTask("QQP", ("question1", "question2"), "is_duplicate", ("0", "1"), ("f1", "accuracy")),
    "stsb": GlueTask("STS-B", ("sentence1", "sentence2"), "score", (), ("pearson", "spearman")),
    "mnli": GlueTask("MNLI", ("sentence1", "sentence2"), "gold_label", _NLI, ("accuracy",),
                     dev_file="dev_matched.tsv"),
    "qnli": GlueTask("QNLI", ("question", "sentence"), "label", _RTE, ("accuracy",)),
    "rte": GlueTask("RTE", ("sentence1", "sentence2"), "label", _RTE, ("accuracy",)),
    "wnli": GlueTask("WNLI", ("sentence1", "sentence2"), "label", ("0", "1"), ("accuracy",)),
}


def glue_task(name):
    key = name.lower().replace("-", "").replace("_", "")
    if key not in GLUE_TASKS:
        raise ValueError(f"Unknown GLUE task {name!r}; known: {sorted(GLUE_TASKS)}.")
    return GLUE_TASKS[key]


def read_glue(name, glue_dir, split="train"):
    """`TextExamples` for one split of a GLUE task under `glue_dir`.

    `glue_dir` is the directory the GLUE download script writes (one
    sub-directory per task: `SST-2/train.tsv`, `MNLI/dev_matched.tsv`, ...).
    """
    task = glue_task(name)
    if split not in ("train", "dev"):
        raise ValueError(f"`split` must be 'train' or 'dev'. Received: split={split!r}")
    file = pathlib.Path(glue_dir) / task.directory / ("train.tsv" if split == "train" else task.dev_file)
    return read_text_examples(
        file,
        text_columns=task.text_columns,
        label_column=task.label_column,
        label_set=list(task.labels) or None,
        regression=not task.labels,
        fieldnames=list(task.fieldnames) if task.fieldnames else None,
    )
