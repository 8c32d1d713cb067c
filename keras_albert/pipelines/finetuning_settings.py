"""What `run_finetuning` takes; imports nothing heavy, so the CLI can read
the defaults for its flags without importing TensorFlow."""

import dataclasses
import pathlib

from keras_albert.pipelines.classifier_recipe import ClassifierRecipe
from keras_albert.presets.official_presets import OFFICIAL_PRESETS
from keras_albert.presets.official_presets import PRESET_ALIASES
from keras_albert.presets.preset_kind import check_preset_known
from keras_albert.presets.preset_kind import check_preset_positions
from keras_albert.presets.preset_kind import local_preset_directory
from keras_albert.presets.preset_kind import local_preset_or_none
from keras_albert.presets.preset_kind import preset_max_sequence_length
from keras_albert.presets.preset_kind import task_class_name

# The recommended recipe's settings, shared with `make demo` and
# benchmarks/transfer.py (see classifier_recipe.py for what was measured).
RECIPE = ClassifierRecipe()
FINETUNING_TASKS = ("classification", "regression", "squad", "multiple_choice", "token_classification")


@dataclasses.dataclass
class FinetuneSettings:
    """Everything `python -m keras_albert finetune` takes (see its --help).

    Example:

    ```python
    from keras_albert.pipelines import FinetuneSettings, run_finetuning

    metrics = run_finetuning(FinetuneSettings(
        preset="albert_tiny_en", task="classification",
        train="train.tsv", eval="dev.tsv", output="runs/my_task"))
    print(metrics["best"])
    ```
    """

    preset: str
    task: str
    # Files, or directories for GLUE and RACE, or split names with `tfds`.
    train: str
    eval: str
    # Gets metrics.json, curves.png, preset/, serving/ and logs/.
    output: str
    glue_task: str = None
    tfds: str = None
    tfds_data_dir: str = None
    # One column, or two for text pairs.
    text_columns: tuple = ("text",)
    label_column: str = "label"
    # Pieces per example (squad: per window); None: 128, or the preset's
    # positions where it has fewer. Longer than its positions is refused.
    sequence_length: int = None
    # classification / regression: the head on the pooled [CLS] ("cls") or
    # on the tokens' mean ("mean"), as `AlbertClassifier(pooling=)`.
    pooling: str = "cls"
    # squad: pieces between window starts.
    doc_stride: int = 128
    epochs: int = RECIPE.epochs
    batch_size: int = RECIPE.batch_size
    # None: the recipe's rate for the backbone's width
    # (`keras_albert.pipelines.recommended_learning_rate`).
    learning_rate: float = RECIPE.learning_rate
    warmup_fraction: float = RECIPE.warmup_fraction
    # Share of the training examples held back to pick the best epoch and
    # stop early; the evaluation data is scored, never used to choose.
    # 0: train on everything for exactly `epochs` epochs, keep the last.
    validation_fraction: float = RECIPE.validation_fraction
    # Epochs without a better validation score before training stops;
    # None: every epoch trains and the best is kept.
    patience: int = RECIPE.patience
    # Classification: fit the head on the frozen model's features first.
    head_warm_start: bool = RECIPE.head_warm_start
    strategy: str = "auto"
    seed: int = 0
    # Task distillation (classification): a classifier preset fine-tuned on
    # the same labels, and unlabelled texts that only the teacher labels.
    teacher: str = None
    transfer_texts: str = None
    distill_temperature: float = 2.0
    distill_alpha: float = 0.5
    # TensorBoard logs in OUTPUT/logs (training and evaluation per epoch).
    tensorboard: bool = True
    # On TensorFlow, OUTPUT/serving: a SavedModel that takes raw strings,
    # checked against Keras (what an export costs). False skips it, for
    # sweeps; `python -m keras_albert export` makes it later.
    serving: bool = True


DEFAULT_SEQUENCE_LENGTH = 128


def finetune_sequence_length(settings):
    """The pieces per example the run uses: `settings.sequence_length`, or
    128 cut to a local preset's positions (a downloaded preset's are known
    once loaded; Google's have 512)."""
    if settings.sequence_length is not None:
        return settings.sequence_length
    directory = local_preset_or_none(settings.preset)
    maximum = None if directory is None else preset_max_sequence_length(directory)
    return DEFAULT_SEQUENCE_LENGTH if maximum is None else min(DEFAULT_SEQUENCE_LENGTH, maximum)


def check_finetune_files(settings):
    """The input files exist (the messages `run_finetuning` gives). Cheap:
    the CLI runs it before importing TensorFlow."""
    check_preset_known(settings.preset)
    check_preset_positions(settings.preset, settings.sequence_length)
    names = [] if settings.tfds else ["train", "eval"]
    for name in names:
        if not pathlib.Path(getattr(settings, name)).exists():
            raise FileNotFoundError(f"`--{name}` does not exist: {getattr(settings, name)!r}")
    if settings.transfer_texts and not pathlib.Path(settings.transfer_texts).is_file():
        raise FileNotFoundError(f"`--transfer_texts` does not exist: {settings.transfer_texts!r}")
    if settings.teacher:
        check_teacher_preset(settings.teacher)


# Task distillation learns from these: the teacher's logits over the labels.
TEACHER_CLASSES = ("AlbertClassifier", "AlbertTextClassifier")


def check_teacher_preset(teacher):
    """`--teacher` names a classifier preset: it exists (a directory or a
    bundled preset) and its task.json is a classifier's. Cheap: run before
    TensorFlow is imported and before the student is loaded. Presets only
    downloaded (hub handles) are checked when loaded."""
    try:
        directory = local_preset_directory(teacher)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"`--teacher` does not exist: {teacher!r} (give a classifier preset: finetune's "
            "OUTPUT/preset or a bundled one such as 'albert_tiny_en_student_supersense')."
        ) from None
    problem = None
    if directory is None and (teacher in OFFICIAL_PRESETS or teacher in PRESET_ALIASES):
        problem = "it is one of Google's released backbones"
    elif directory is not None:
        if not directory.is_dir():
            raise ValueError(f"`--teacher` {teacher!r} is a file; a preset is a directory.")
        task = task_class_name(directory)
        if task is None:
            problem = "it is a backbone preset (no task.json)"
        elif task not in TEACHER_CLASSES:
            problem = f"its task is {task}"
    if problem is not None:
        raise ValueError(
            f"`--teacher` {teacher!r} is not a classifier: {problem}. Give a classifier "
            "fine-tuned on the same labels, e.g. `finetune`'s OUTPUT/preset."
        )
