"""Fine-tune an ALBERT preset on a task and keep the best epoch.

  python -m keras_albert finetune --preset=albert_tiny_en --task=classification \\
      --train=train.tsv --eval=dev.tsv --output=runs/my_task

Tasks: classification and regression (CSV/TSV/JSONL, or a GLUE directory
with --glue_task), squad (SQuAD v1.1/v2.0 JSON), multiple_choice (RACE
JSON) and token_classification (CoNLL). Each epoch is scored on --eval;
the best epoch's weights are kept. OUTPUT gets metrics.json (every epoch,
the best one), curves.png (loss and metric per epoch), preset/ (the best
model) and serving/ (a SavedModel that takes raw strings).

With --teacher (classification), the model learns a fine-tuned teacher's
predictions as well as the labels (`keras_albert.distill.
TaskDistillationLoss`); --transfer_texts adds unlabelled texts that only
the teacher labels:

  python -m keras_albert finetune --preset=albert_tiny_en_student \
      --task=classification --train=train.tsv --eval=dev.tsv \
      --teacher=runs/teacher/preset --transfer_texts=unlabelled.txt \
      --output=runs/student
"""

import json
import pathlib
import sys

import keras
import numpy as np

from keras_albert.cli.finetuning_tasks import TASKS
from keras_albert.cli.finetuning_tasks import make_task
from keras_albert.pipelines.training_curves import plot_training_curves
from keras_albert.distill.task_distillation import UNLABELLED
from keras_albert.distill.task_distillation import TaskDistillationLoss
from keras_albert.distill.task_distillation import distillation_targets
from keras_albert.distill.task_distillation import teacher_logits
from keras_albert.export.serving_saved_model import export_serving_saved_model
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.training.schedules import WarmupLinearDecay
from keras_albert.training.strategy import STRATEGY_NAMES
from keras_albert.training.strategy import resolve_strategy
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.atomic_file import write_file_atomically

HELP = "fine-tune a preset on classification, regression, SQuAD, RACE or CoNLL data"


def add_arguments(parser):
    add = parser.add_argument
    add("--preset", required=True, help="preset name or directory")
    add("--task", required=True, choices=TASKS)
    add("--train", required=True, help="training file (a directory for GLUE or RACE)")
    add("--eval", required=True, help="evaluation file (a directory for GLUE or RACE)")
    add("--output", required=True, help="directory for metrics, curves, preset, serving model")
    add("--glue_task", default=None, help="GLUE task name; --train/--eval are then the GLUE directory")
    add("--tfds", default=None,
        help="TFDS dataset (e.g. glue/sst2) read from a local copy; --train/--eval are split names")
    add("--tfds_data_dir", default=None, help="where the TFDS dataset was prepared")
    add("--text_columns", nargs="+", default=["text"], help="one column, or two for pairs")
    add("--label_column", default="label")
    add("--sequence_length", type=int, default=128)
    add("--doc_stride", type=int, default=128, help="squad: pieces between window starts")
    add("--epochs", type=int, default=3)
    add("--batch_size", type=int, default=32)
    add("--learning_rate", type=float, default=5e-5)
    add("--warmup_fraction", type=float, default=0.1)
    add("--strategy", choices=STRATEGY_NAMES, default="auto")
    add("--seed", type=int, default=0)
    distill = parser.add_argument_group(
        "task distillation (classification): learn a fine-tuned teacher's predictions")
    distill.add_argument("--teacher", default=None,
                         help="a classifier preset fine-tuned on the same labels (same order: finetune sorts them)")
    distill.add_argument("--transfer_texts", default=None,
                         help="unlabelled in-domain texts, one per line, that the teacher labels")
    distill.add_argument("--distill_temperature", type=float, default=2.0)
    distill.add_argument("--distill_alpha", type=float, default=0.5,
                         help="weight of the teacher's soft targets on labelled examples")


def _check(args):
    for name in ("epochs", "batch_size", "sequence_length", "doc_stride"):
        value = getattr(args, name)
        if value < 1:
            raise ValueError(f"`--{name}` must be a positive integer. Received: {value}")
    if not args.learning_rate > 0:
        raise ValueError(f"`--learning_rate` must be > 0. Received: {args.learning_rate}")
    output = pathlib.Path(args.output)
    if args.tfds and args.task not in ("classification", "regression"):
        raise ValueError(f"`--tfds` reads text classification data; --task={args.task!r} cannot use it.")
    if output.exists() and not output.is_dir():
        raise ValueError(f"`--output` {str(output)!r} exists and is a file.")
    # Before any training: outputs that cannot be written, or that would
    # replace something this command did not write.
    check_writable_directory(output, name="--output")
    check_replaceable(output / "preset", "preset", name="--output")
    check_replaceable(output / "serving", "saved_model", name="--output")
    if args.teacher and args.task != "classification":
        raise ValueError(f"`--teacher` distils classifiers only; received --task={args.task!r}.")
    if args.transfer_texts and not args.teacher:
        raise ValueError("`--transfer_texts` needs `--teacher` (the teacher labels them).")
    if args.transfer_texts and not pathlib.Path(args.transfer_texts).is_file():
        raise FileNotFoundError(f"`--transfer_texts` does not exist: {args.transfer_texts!r}")
    for name in ("train", "eval"):
        if not args.tfds and not pathlib.Path(getattr(args, name)).exists():
            raise FileNotFoundError(f"`--{name}` does not exist: {getattr(args, name)!r}")
    return output


def _compile(model, args, steps, loss="auto"):
    schedule = WarmupLinearDecay(
        peak_learning_rate=args.learning_rate,
        warmup_steps=max(1, int(args.warmup_fraction * steps)),
        total_steps=steps,
    )
    # Distillation targets are not class ids: no default accuracy metric
    # then (each epoch is scored on --eval anyway).
    metrics = "auto" if loss == "auto" else []
    model.compile(optimizer=keras.optimizers.AdamW(schedule, weight_decay=0.01), loss=loss, metrics=metrics)


def _steps_per_epoch(fit_arguments):
    import tensorflow as tf

    x = fit_arguments["x"]
    if isinstance(x, tf.data.Dataset):
        return int(x.cardinality().numpy())
    first = x[0] if isinstance(x, tuple) else next(iter(x.values())) if isinstance(x, dict) else x
    return -(-len(first) // fit_arguments["batch_size"])


def with_teacher_targets(args, task, train):
    """`(x, targets)` with the teacher's logits (plus unlabelled transfer
    texts) and the distillation loss that reads them."""
    loss = TaskDistillationLoss(args.distill_temperature, args.distill_alpha)
    teacher = AlbertClassifier.from_preset(args.teacher)
    if teacher.num_classes != len(task.label_set):
        raise ValueError(
            f"`--teacher` predicts {teacher.num_classes} classes; the training file has "
            f"{len(task.label_set)} labels {list(task.label_set)}."
        )
    x, y = train
    if args.transfer_texts:
        if isinstance(x, tuple):
            raise ValueError("`--transfer_texts` holds single texts; this task has text pairs.")
        extra = [line for line in pathlib.Path(args.transfer_texts).read_text("utf-8").splitlines() if line.strip()]
        print(f"Teacher labels {len(extra)} transfer texts", flush=True)
        x = list(x) + extra
        y = np.concatenate([y, np.full(len(extra), UNLABELLED, y.dtype)])
    return (x, distillation_targets(teacher_logits(teacher, x), y)), loss


def run(args):
    output = _check(args)
    keras.utils.set_random_seed(args.seed)
    task = make_task(args)
    print(f"Reading {args.train!r} and {args.eval!r}", flush=True)
    train = task.read(args.train, "train")
    evaluation = task.read(args.eval, "eval")
    # Only once the inputs are read and checked: a bad input leaves no
    # empty output directory behind.
    output.mkdir(parents=True, exist_ok=True)
    strategy = resolve_strategy(args.strategy)
    with strategy.scope():
        model = task.build(args.preset)
        loss = "auto"
        if args.teacher:
            train_targets, loss = with_teacher_targets(args, task, train)
            fit_arguments = task.fit_arguments(model, train_targets)
        else:
            fit_arguments = task.fit_arguments(model, train)
        _compile(model, args, args.epochs * _steps_per_epoch(fit_arguments), loss)
    primary = task.metrics[0]
    history, best = [], None
    best_weights = output / "best.weights.h5"
    verbose = 1 if sys.stdout.isatty() else 2
    for epoch in range(1, args.epochs + 1):
        print(f"Epoch {epoch}/{args.epochs}", flush=True)
        logs = model.fit(epochs=1, verbose=verbose, **fit_arguments).history
        scores = task.score(model, evaluation)
        row = {"epoch": epoch, "loss": float(logs["loss"][-1]), **scores}
        history.append(row)
        print("  eval: " + ", ".join(f"{k}={v:.4f}" for k, v in scores.items()), flush=True)
        if best is None or scores[primary] > best[primary]:
            best = row
            model.save_weights(str(best_weights))
    model.load_weights(str(best_weights))
    results = {
        "task": args.task,
        "preset": args.preset,
        "selection_metric": primary,
        "best_epoch": best["epoch"],
        "best": best,
        "history": history,
        "labels": getattr(task, "label_set", None),
    }
    with atomic_directory(output / "preset") as staging:
        model.save_to_preset(staging)
    metrics_path = output / "metrics.json"
    if task.serving:
        pair = isinstance(train, tuple) and isinstance(train[0], tuple)
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
    plot_training_curves(history, primary, output / "curves.png")
    write_file_atomically(metrics_path, json.dumps(results, indent=2))
    print(f"Best epoch {best['epoch']}: {primary}={best[primary]:.4f}. Wrote {output}", flush=True)
    return results
