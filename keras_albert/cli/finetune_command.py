"""Fine-tune an ALBERT preset on a task and keep the best epoch.

  python -m keras_albert finetune --preset=albert_tiny_en --task=classification \\
      --train=train.tsv --eval=dev.tsv --output=runs/my_task

Tasks: classification and regression (CSV/TSV/JSONL, or a GLUE directory
with --glue_task), squad (SQuAD v1.1/v2.0 JSON), multiple_choice (RACE
JSON) and token_classification (CoNLL). Each epoch is scored on --eval;
the best epoch's weights are kept. OUTPUT gets metrics.json (every epoch,
the best one), curves.png (loss and metric per epoch), preset/ (the best
model), serving/ (a SavedModel that takes raw strings) and logs/
(TensorBoard; --no_tensorboard turns it off).

With --teacher (classification), the model learns a fine-tuned teacher's
predictions as well as the labels (`keras_albert.distill.
TaskDistillationLoss`); --transfer_texts adds unlabelled texts that only
the teacher labels:

  python -m keras_albert finetune --preset=albert_tiny_en_student \\
      --task=classification --train=train.tsv --eval=dev.tsv \\
      --teacher=runs/teacher/preset --transfer_texts=unlabelled.txt \\
      --output=runs/student
"""

import dataclasses

from keras_albert.cli.flag_choices import STRATEGY_NAMES
from keras_albert.cli.flag_types import add_tensorboard_flags
from keras_albert.pipelines.finetuning_settings import FINETUNING_TASKS
from keras_albert.pipelines.finetuning_settings import FinetuneSettings

HELP = "fine-tune a preset on classification, regression, SQuAD, RACE or CoNLL data"


def add_arguments(parser):
    defaults = FinetuneSettings(preset="", task="", train="", eval="", output="")
    add = parser.add_argument
    add("--preset", required=True, help="preset name or directory")
    add("--task", required=True, choices=FINETUNING_TASKS)
    add("--train", required=True, help="training file (a directory for GLUE or RACE)")
    add("--eval", required=True, help="evaluation file (a directory for GLUE or RACE)")
    add("--output", required=True, help="directory for metrics, curves, preset, serving model, logs")
    add("--glue_task", default=defaults.glue_task,
        help="GLUE task name; --train/--eval are then the GLUE directory")
    add("--tfds", default=defaults.tfds,
        help="TFDS dataset (e.g. glue/sst2) read from a local copy; --train/--eval are split names")
    add("--tfds_data_dir", default=defaults.tfds_data_dir, help="where the TFDS dataset was prepared")
    add("--text_columns", nargs="+", default=list(defaults.text_columns),
        help="one column, or two for pairs")
    add("--label_column", default=defaults.label_column)
    add("--sequence_length", type=int, default=defaults.sequence_length)
    add("--doc_stride", type=int, default=defaults.doc_stride, help="squad: pieces between window starts")
    add("--epochs", type=int, default=defaults.epochs)
    add("--batch_size", type=int, default=defaults.batch_size)
    add("--learning_rate", type=float, default=defaults.learning_rate)
    add("--warmup_fraction", type=float, default=defaults.warmup_fraction)
    add("--strategy", choices=STRATEGY_NAMES, default=defaults.strategy)
    add("--seed", type=int, default=defaults.seed)
    add_tensorboard_flags(add, defaults.tensorboard)
    distill = parser.add_argument_group(
        "task distillation (classification): learn a fine-tuned teacher's predictions")
    distill.add_argument("--teacher", default=defaults.teacher,
                         help="a classifier preset fine-tuned on the same labels (same order: finetune sorts them)")
    distill.add_argument("--transfer_texts", default=defaults.transfer_texts,
                         help="unlabelled in-domain texts, one per line, that the teacher labels")
    distill.add_argument("--distill_temperature", type=float, default=defaults.distill_temperature)
    distill.add_argument("--distill_alpha", type=float, default=defaults.distill_alpha,
                         help="weight of the teacher's soft targets on labelled examples")


def settings_from_flags(args):
    return FinetuneSettings(**{
        field.name: getattr(args, field.name) for field in dataclasses.fields(FinetuneSettings)
    })


def run(args):
    # Imports TensorFlow: here rather than at the top so `--help` is fast.
    from keras_albert.pipelines.finetuning import run_finetuning

    return run_finetuning(settings_from_flags(args))
