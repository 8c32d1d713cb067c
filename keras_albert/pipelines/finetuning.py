"""Fine-tune an ALBERT preset on a task and keep the best epoch.

`run_finetuning(FinetuneSettings(...))` is what `python -m keras_albert
finetune` runs, with the recommended recipe (`ClassifierRecipe`'s
defaults): a validation split carved from the training data picks the best
epoch (and, with `patience`, stops training once it stops improving); the
evaluation data is scored every epoch and never used to choose; ties go
to the later epoch. A classifier's head is first fitted on the frozen
model's features and scored as epoch 0. The training loop is the package's
one (`keras_albert.training.fine_tuning_loop`); the best epoch's weights are
kept in memory, never written beside the outputs.

OUTPUT holds exactly `OUTPUT_CONTENTS` (what each name is; the README
lists the same): metrics.json, curves.png, preset/, serving/ (TensorFlow
only), logs/ (unless `tensorboard=False`) and keras_albert's marker.

With a `teacher` (classification), the model learns a fine-tuned teacher's
predictions as well as the labels (`keras_albert.distill.
TaskDistillationLoss`); `transfer_texts` adds unlabelled texts that only
the teacher labels.
"""

import json
import numbers
import os
import pathlib
import sys

import keras
import numpy as np

from keras_albert.data.validation_split import validation_indices
from keras_albert.distill.task_distillation import UNLABELLED
from keras_albert.distill.task_distillation import TaskDistillationLoss
from keras_albert.distill.task_distillation import distillation_targets
from keras_albert.distill.task_distillation import teacher_logits
from keras_albert.models.albert_classifier import POOLING_CHOICES
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.pipelines.classifier_fine_tuning import warm_start_head
from keras_albert.pipelines.classifier_recipe import recommended_learning_rate
from keras_albert.pipelines.finetuning_settings import FINETUNING_TASKS
from keras_albert.pipelines.finetuning_settings import RECIPE
from keras_albert.pipelines.finetuning_settings import FinetuneSettings  # noqa: F401 (re-export)
from keras_albert.pipelines.finetuning_settings import check_teacher_preset
from keras_albert.pipelines.finetuning_settings import finetune_sequence_length
from keras_albert.pipelines.finetuning_tasks import make_task
from keras_albert.pipelines.training_curves import plot_training_curves
from keras_albert.presets.preset_kind import check_preset_positions
from keras_albert.presets.preset_kind import too_long_for_positions
from keras_albert.training.batch_streams import stream_fit
from keras_albert.training.epoch_logging import EVALUATION_PREFIX
from keras_albert.training.epoch_logging import VALIDATION_PREFIX
from keras_albert.training.epoch_logging import EpochScores
from keras_albert.training.fine_tuning_loop import fit_keeping_best
from keras_albert.training.optimizers import warmup_decay_optimizer
from keras_albert.training.optimizers import warmup_steps_for
from keras_albert.training.scope import STRATEGY_NAMES
from keras_albert.training.scope import training_scope
from keras_albert.utils.atomic_directory import MARKER_FILE
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.atomic_file import write_file_atomically
from keras_albert.utils.backend import is_tf_dataset
from keras_albert.utils.label_file import check_label_lines
from keras_albert.utils.regular_files import MiB
from keras_albert.utils.regular_files import read_regular_bytes
from keras_albert.utils.run_directory import check_run_outputs
from keras_albert.utils.run_directory import record_run_outputs
from keras_albert.utils.run_directory import remove_run_outputs

# What a run writes in OUTPUT (logs/ only gains new event files).
RUN_OUTPUTS = ("metrics.json", "curves.png", "preset", "serving")
# Everything a finished run leaves in OUTPUT, and what it is.
OUTPUT_CONTENTS = {
    "metrics.json": "every epoch's scores on the evaluation data and the validation split, the kept epoch, the run's settings",
    "curves.png": "training loss and the selection metric per epoch, epoch 0 (the fitted head) included",
    "preset/": "the kept epoch's model, a keras-hub preset",
    "serving/": "a SavedModel that takes raw strings (KERAS_BACKEND=tensorflow only; not with serving=False)",
    "logs/": "TensorBoard: train/, validation/ and eval/ runs, epoch 0 included (tensorboard=True)",
    MARKER_FILE: "keras_albert's marker: the names runs wrote here, which a later run may replace",
}
# Written by earlier versions, removed when the marker says a run wrote them.
FORMER_OUTPUTS = ("best.weights.h5",)


def _finetuning_run(output):
    """A run written before runs were recorded: its metrics.json is a
    finetune record (its own keys), not a file that happens to be named so."""
    try:
        metrics = json.loads(read_regular_bytes(output / "metrics.json", max_bytes=64 * MiB))
    except (OSError, ValueError):
        return False
    return isinstance(metrics, dict) and {"best", "selection_metric", "history"} <= set(metrics)


def check_finetune_settings(settings):
    """Fails on a bad value before any data or model is loaded.

    Messages name the flag (`--epochs`, as the CLI spells the field), the
    value and what is accepted. Returns the output directory as a path.
    """
    if settings.task not in FINETUNING_TASKS:
        raise ValueError(f"`--task` must be one of {FINETUNING_TASKS}. Received: {settings.task!r}")
    if settings.strategy not in STRATEGY_NAMES:
        raise ValueError(f"`--strategy` must be one of {STRATEGY_NAMES}. Received: {settings.strategy!r}")
    # Every task runs on every backend (off TensorFlow the preprocessors pack
    # in Python and NumPy); TFDS and the serving export are TensorFlow's.
    backend = keras.config.backend()
    if backend != "tensorflow" and settings.tfds:
        raise ValueError(f"`--tfds` reads with tensorflow-datasets: it needs KERAS_BACKEND=tensorflow (this run: {backend}).")
    for name in ("epochs", "batch_size", "sequence_length", "doc_stride"):
        value = getattr(settings, name)
        if name == "sequence_length" and value is None:
            continue  # the default: 128, or the preset's positions where fewer
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"`--{name}` must be a positive integer. Received: {value}")
    check_preset_positions(settings.preset, settings.sequence_length)
    if settings.learning_rate is not None and not settings.learning_rate > 0:
        raise ValueError(f"`--learning_rate` must be > 0. Received: {settings.learning_rate}")
    if not 0 <= settings.validation_fraction < 0.5:
        raise ValueError(
            f"`--validation_fraction` must be in [0, 0.5). Received: {settings.validation_fraction}")
    if settings.patience is not None and (isinstance(settings.patience, bool) or not isinstance(
            settings.patience, numbers.Integral) or settings.patience < 1):
        raise ValueError(f"`--patience` must be a positive integer. Received: {settings.patience}")
    if not 0 <= settings.warmup_fraction <= 1:
        raise ValueError(f"`--warmup_fraction` must be in [0, 1]. Received: {settings.warmup_fraction}")
    if len(settings.text_columns) not in (1, 2):
        raise ValueError(
            f"`--text_columns` takes one column, or two for pairs. Received: {list(settings.text_columns)}")
    if settings.teacher:
        if not settings.distill_temperature > 0:
            raise ValueError(
                f"`--distill_temperature` must be > 0. Received: {settings.distill_temperature}")
        if not 0 <= settings.distill_alpha <= 1:
            raise ValueError(f"`--distill_alpha` must be in [0, 1]. Received: {settings.distill_alpha}")
    output = pathlib.Path(settings.output)
    if settings.pooling not in POOLING_CHOICES:
        raise ValueError(f"`--pooling` must be one of {POOLING_CHOICES}. Received: {settings.pooling!r}")
    if settings.pooling != "cls" and settings.task not in ("classification", "regression"):
        raise ValueError(
            f"`--pooling` sets a classifier's or regressor's head; --task={settings.task!r} has none.")
    if settings.tfds and settings.task not in ("classification", "regression"):
        raise ValueError(f"`--tfds` reads text classification data; --task={settings.task!r} cannot use it.")
    if output.exists() and not output.is_dir():
        raise ValueError(f"`--output` {str(output)!r} exists and is a file.")
    # Before any training: outputs that cannot be written, or that would
    # replace something this pipeline did not write.
    check_writable_directory(output, name="--output")
    check_replaceable(output / "preset", "preset", name="--output")
    if settings.serving:
        check_replaceable(output / "serving", "saved_model", name="--output")
    elif os.path.lexists(output / "serving"):
        # Kept, it would sit beside a preset it no longer matches.
        raise ValueError(
            f"`--noserving`: `--output` {str(output)!r} already holds serving/ (an earlier run's "
            "SavedModel would no longer match the preset this run writes). Remove it, pass a new "
            "--output, or leave out --noserving.")
    check_run_outputs(output, RUN_OUTPUTS, legacy=_finetuning_run)
    if settings.teacher and settings.task != "classification":
        raise ValueError(f"`--teacher` distils classifiers only; received --task={settings.task!r}.")
    if settings.transfer_texts and not settings.teacher:
        raise ValueError("`--transfer_texts` needs `--teacher` (the teacher labels them).")
    if settings.transfer_texts and not pathlib.Path(settings.transfer_texts).is_file():
        raise FileNotFoundError(f"`--transfer_texts` does not exist: {settings.transfer_texts!r}")
    if settings.teacher:
        # Before the student is loaded: a teacher that cannot teach.
        check_teacher_preset(settings.teacher)
    for name in ("train", "eval"):
        if not settings.tfds and not pathlib.Path(getattr(settings, name)).exists():
            raise FileNotFoundError(f"`--{name}` does not exist: {getattr(settings, name)!r}")
    return output


def run_settings(settings):
    """The run's settings as metrics.json records them (`publish`'s model
    card lists them): what was asked for, before the run decides anything
    (`learning_rate` None: the recipe's rate for the width, recorded at the
    top level as the peak rate used; `sequence_length` None: 128 or the
    preset's fewer positions, recorded at the top level as the length used)."""
    return {
        "preset": settings.preset, "batch_size": settings.batch_size, "seed": settings.seed,
        "epochs_requested": settings.epochs, "learning_rate": settings.learning_rate,
        "warmup_fraction": settings.warmup_fraction, "weight_decay": RECIPE.weight_decay,
        "sequence_length": settings.sequence_length, "validation_fraction": settings.validation_fraction,
        "patience": settings.patience, "head_warm_start": bool(settings.head_warm_start),
        "pooling": settings.pooling, "teacher": settings.teacher,
    }


def _compile(model, learning_rate, settings, steps, loss="auto"):
    optimizer = warmup_decay_optimizer(learning_rate, steps, warmup_steps_for(steps, settings.warmup_fraction),
                                       weight_decay=RECIPE.weight_decay)
    # No compiled metrics: Keras's progress line then shows the training
    # loss alone, and every score comes on the line that names its split
    # (the task's own metrics on the validation split and the evaluation
    # data); a training-batch accuracy there read as one of them.
    model.compile(optimizer=optimizer, loss=loss, metrics=[])


def _steps_per_epoch(fit_arguments):
    x = fit_arguments["x"]
    if is_tf_dataset(x):
        return int(x.cardinality().numpy())
    if isinstance(x, keras.utils.PyDataset):
        return len(x)
    first = x[0] if isinstance(x, tuple) else next(iter(x.values())) if isinstance(x, dict) else x
    return -(-len(first) // fit_arguments["batch_size"])


def _take(data, indices):
    """The examples at `indices` of a task's data, in any of the shapes the
    tasks read: lists, arrays, and tuples or dicts of them."""
    if isinstance(data, tuple):
        return tuple(_take(part, indices) for part in data)
    if isinstance(data, dict):
        return {key: _take(value, indices) for key, value in data.items()}
    if isinstance(data, np.ndarray):
        return data[indices]
    return [data[i] for i in indices]


def split_validation(data, fraction, seed, stratify=False):
    """(training, validation) parts of a task's training data, at random,
    each in the file's order; validation is None when `fraction` is 0.
    `stratify`: `data` is (x, class ids), and each class gives its share."""
    if not fraction:
        return data, None
    labels = data[1] if stratify else None
    kept, held = validation_indices(_count(data), fraction, seed, name="--validation_fraction", labels=labels)
    return _take(data, np.sort(kept)), _take(data, np.sort(held))


def _warm_start(settings, task, model, train, validation):
    """Fits a classifier's head on the frozen model's features (the recipe's
    LP-FT); other tasks and task distillation train as they are."""
    if not (settings.head_warm_start and settings.task == "classification" and not settings.teacher):
        return False
    (x, y), (val_x, val_y) = train, validation if validation is not None else ([], [])
    print("Fitting the head on the frozen model's features", flush=True)
    warm_start_head(model, x, y, val_x, val_y, settings.batch_size, settings.seed)
    return True


def with_teacher_targets(settings, task, train):
    """`(x, targets)` with the teacher's logits (plus unlabelled transfer
    texts) and the distillation loss that reads them."""
    loss = TaskDistillationLoss(settings.distill_temperature, settings.distill_alpha)
    teacher = AlbertClassifier.from_preset(settings.teacher)
    if teacher.num_classes != len(task.label_set):
        raise ValueError(
            f"`--teacher` predicts {teacher.num_classes} classes; the training file has "
            f"{len(task.label_set)} labels {list(task.label_set)}."
        )
    if teacher.label_names is not None and list(teacher.label_names) != list(task.label_set):
        # Same count, other meaning: class id i would be another class.
        raise ValueError(
            f"`--teacher` names its classes {teacher.label_names}; the training file's labels, "
            f"in class-id order, are {list(task.label_set)}."
        )
    x, y = train
    extra = []
    if settings.transfer_texts:
        if isinstance(x, tuple):
            raise ValueError("`--transfer_texts` holds single texts; this task has text pairs.")
        text = pathlib.Path(settings.transfer_texts).read_text("utf-8")
        extra = [line for line in text.splitlines() if line.strip()]
        x = list(x) + extra
        y = np.concatenate([y, np.full(len(extra), UNLABELLED, y.dtype)])
    print(f"Teacher {settings.teacher!r} labels {len(x)} texts ({len(extra)} transfer texts)", flush=True)
    return (x, distillation_targets(teacher_logits(teacher, x), y)), loss


def _task(settings, sequence_length):
    return make_task(
        settings.task, sequence_length=sequence_length, batch_size=settings.batch_size,
        seed=settings.seed, doc_stride=settings.doc_stride, glue_task_name=settings.glue_task,
        tfds=settings.tfds, tfds_data_dir=settings.tfds_data_dir,
        text_columns=settings.text_columns, label_column=settings.label_column,
        pooling=settings.pooling,
    )


def _count(data):
    """Examples read by a task's `read`: (x, y) pairs or a list of examples."""
    return len(data[1]) if isinstance(data, tuple) else len(data)


def _splits(task, evaluation, validation, settings):
    """The splits scored after every epoch, named as the user named them:
    `EpochScores` triples (log prefix, description, scorer)."""
    splits = [(EVALUATION_PREFIX, f"evaluation data (--eval {settings.eval!r})",
               lambda model: task.score(model, evaluation))]
    if validation is not None:
        splits.append((VALIDATION_PREFIX, f"validation split ({settings.validation_fraction:g} of --train, held out)",
                       lambda model: task.score(model, validation)))
    return splits


def _row(epoch, logs):
    """A metrics.json history row from an epoch's logs: the evaluation
    scores under their own names, the validation ones as `validation_*`."""
    row = {"epoch": epoch, "loss": float(logs["loss"]) if "loss" in logs else None}
    for name, value in logs.items():
        if name.startswith(EVALUATION_PREFIX):
            row[name[len(EVALUATION_PREFIX):]] = float(value)
    for name, value in logs.items():
        if name.startswith(VALIDATION_PREFIX):
            row["validation_" + name[len(VALIDATION_PREFIX):]] = float(value)
    return row


def run_finetuning(settings):
    """Fine-tunes `settings.preset`; returns the metrics dict it writes to
    OUTPUT/metrics.json (`best`, `best_epoch`, `history`, `labels`, ...)."""
    output = check_finetune_settings(settings)
    keras.utils.set_random_seed(settings.seed)
    sequence_length = finetune_sequence_length(settings)
    task = _task(settings, sequence_length)
    print(f"Reading {settings.train!r} and {settings.eval!r}", flush=True)
    train = task.read(settings.train, "train")
    if getattr(task, "label_set", None) is not None:
        # The labels become class names, written one per line to labels.txt.
        check_label_lines(list(task.label_set), f"--train {settings.train!r} labels")
    evaluation = task.read(settings.eval, "eval")
    train, validation = split_validation(train, settings.validation_fraction, settings.seed,
                                         stratify=settings.task == "classification")
    # Only once the inputs are read and checked: a bad input leaves no
    # empty output directory behind.
    output.mkdir(parents=True, exist_ok=True)
    record_run_outputs(output, RUN_OUTPUTS + ("logs",))
    remove_run_outputs(output, FORMER_OUTPUTS)
    scope = training_scope(settings.strategy)
    print(f"Loading {settings.preset!r}", flush=True)
    with scope:
        model = task.build(settings.preset)
        maximum = model.backbone.max_sequence_length
        if sequence_length > maximum:  # a downloaded preset, known once loaded
            raise too_long_for_positions(settings.preset, sequence_length, maximum)
        learning_rate = settings.learning_rate or recommended_learning_rate(model.backbone.hidden_dim)
        print(f"Peak learning rate {learning_rate:g}", flush=True)
        # Before the training dataset is built: the head's fit reads the
        # texts through the same preprocessor.
        warmed = _warm_start(settings, task, model, train, validation)
        loss = "auto"
        if settings.teacher:
            train_targets, loss = with_teacher_targets(settings, task, train)
            fit_arguments = task.fit_arguments(model, train_targets)
        else:
            fit_arguments = task.fit_arguments(model, train)
        _compile(model, learning_rate, settings, settings.epochs * _steps_per_epoch(fit_arguments), loss)
    primary = task.metrics[0]
    scores = EpochScores(_splits(task, evaluation, validation, settings))
    warm_row = epoch_zero = None
    if warmed:
        # The fitted head before any fine-tuning is "epoch 0": kept if no
        # epoch reaches its validation score.
        epoch_zero = scores.score(model)
        print(f"Epoch 0 (the fitted head, before fine-tuning)\n  {scores.describe(epoch_zero)}", flush=True)
        warm_row = _row(0, epoch_zero)
    outcome = fit_keeping_best(
        model, settings.epochs, fit=stream_fit(model),
        monitor=f"{VALIDATION_PREFIX}{primary}" if validation is not None else None,
        monitor_description=f"validation {primary}", patience=settings.patience,
        epoch_zero=epoch_zero, scores=scores,
        tensorboard_dir=output / "logs" if settings.tensorboard else None,
        verbose=1 if sys.stdout.isatty() else 2, **fit_arguments,
    )
    logged = outcome.history.history
    history = [_row(epoch + 1, {name: values[epoch] for name, values in logged.items()})
               for epoch in range(outcome.epochs_run)]
    best = warm_row if outcome.kept_epoch == 0 else history[outcome.kept_epoch - 1]
    results = {
        "task": settings.task,
        "preset": settings.preset,
        "selection_metric": f"validation_{primary}" if validation is not None else "last epoch",
        "selection_data": (f"{settings.validation_fraction:g} of the training examples, held out"
                           if validation is not None else None),
        "learning_rate": learning_rate,
        "sequence_length": sequence_length,
        "settings": run_settings(settings),
        "best_epoch": best["epoch"],
        "best": best,
        "head_warm_start": warm_row,
        "history": history,
        "labels": getattr(task, "label_set", None),
        # What it was trained and scored on (model cards quote it).
        "data": {
            "train": settings.train, "eval": settings.eval,
            "train_examples": _count(train), "eval_examples": _count(evaluation),
            "validation_examples": _count(validation) if validation is not None else 0,
            "glue_task": settings.glue_task, "tfds": settings.tfds,
        },
    }
    print(f"Writing the best epoch's model to {str(output / 'preset')!r}", flush=True)
    with atomic_directory(output / "preset") as staging:
        model.save_to_preset(staging)
    metrics_path = output / "metrics.json"
    skipped = ("--noserving" if not settings.serving else
               "export needs KERAS_BACKEND=tensorflow" if task.serving and keras.config.backend() != "tensorflow"
               else None)
    if skipped:
        print(f"Serving SavedModel: not written ({skipped}); `python -m keras_albert export --preset "
              f"{str(output / 'preset')!r}` makes it on TensorFlow.", flush=True)
    elif task.serving:
        pair = isinstance(train, tuple) and isinstance(train[0], tuple)
        print(f"Exporting the serving SavedModel to {str(output / 'serving')!r}", flush=True)
        try:
            export_serving_saved_model(
                model, output / "serving", pair=pair, check_texts=task.check_texts(train)
            )
        except ValueError as error:
            # The training is not lost with the export: keep and name it.
            results["serving_error"] = str(error)
            write_file_atomically(metrics_path, json.dumps(results, indent=2))
            raise ValueError(
                f"The serving SavedModel failed its check: {error} The trained "
                f"model is kept: preset {str(output / 'preset')!r}, metrics "
                f"{str(metrics_path)!r}; export it later with `python -m "
                "keras_albert export`."
            ) from None
        results["serving_saved_model"] = str(output / "serving")
    plot_training_curves(([warm_row] if warm_row else []) + history, primary, output / "curves.png")
    write_file_atomically(metrics_path, json.dumps(results, indent=2))
    chosen = (f"the best validation {primary}, {best[f'validation_{primary}']:.4f}"
              if validation is not None else "the last epoch")
    print(f"Kept epoch {best['epoch']} ({chosen}): {primary}={best[primary]:.4f} on the evaluation data "
          f"(--eval). Wrote {output}", flush=True)
    return results


def export_serving_saved_model(*args, **kwargs):
    """`keras_albert.export.export_serving_saved_model`, imported when a run
    on TensorFlow exports (the export package needs TensorFlow)."""
    from keras_albert.export.serving_saved_model import (
        export_serving_saved_model as export,
    )

    return export(*args, **kwargs)
