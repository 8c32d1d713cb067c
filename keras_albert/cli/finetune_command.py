"""Fine-tune an ALBERT preset on a task and keep the best epoch.

  python -m keras_albert finetune --preset=albert_tiny_en --task=classification \\
      --train=train.tsv --eval=dev.tsv --output=runs/my_task

Tasks: classification and regression (CSV/TSV/JSONL, or a GLUE directory
with --glue_task), squad (SQuAD v1.1/v2.0 JSON), multiple_choice (RACE
JSON) and token_classification (CoNLL). The recommended recipe by
default: a tenth of the training examples is held out (--validation_fraction)
to pick the best epoch (and, with --patience=N, stop after N epochs
without a better score); ties go to the later epoch; --eval is scored every epoch, never used
to choose; a classifier's head is fitted on the frozen model's features first
(--head_warm_start) and scored as epoch 0. For classification the held-out
tenth keeps each label's share. OUTPUT holds only metrics.json (every epoch,
epoch 0 and the kept one), curves.png (loss and metric per epoch on both
splits), preset/ (the kept model), serving/ (a SavedModel that takes raw
strings; --noserving leaves it out), logs/ (TensorBoard; --no_tensorboard
leaves it out) and keras_albert's marker file.

With --teacher (classification), the model learns a fine-tuned teacher's
predictions as well as the labels (`keras_albert.distill.
TaskDistillationLoss`); --transfer_texts adds unlabelled texts that only
the teacher labels:

  python -m keras_albert finetune --preset=albert_tiny_en_student \\
      --task=classification --train=train.tsv --eval=dev.tsv \\
      --teacher=runs/teacher/preset --transfer_texts=unlabelled.txt \\
      --output=runs/student
"""

from absl import flags

from keras_albert.cli.flag_choices import POOLING_CHOICES
from keras_albert.cli.flag_choices import STRATEGY_NAMES
from keras_albert.cli.flag_types import define_tensorboard_flags
from keras_albert.cli.flag_types import settings_from_flags
from keras_albert.cli.flag_types import tensorboard
from keras_albert.pipelines.finetuning_settings import FINETUNING_TASKS
from keras_albert.pipelines.finetuning_settings import FinetuneSettings
from keras_albert.pipelines.finetuning_settings import check_finetune_files

HELP = "fine-tune a preset on classification, regression, SQuAD, RACE or CoNLL data"


def define_flags(flag_values):
    defaults = FinetuneSettings(preset="", task="", train="", eval="", output="")
    fv = flag_values
    flags.DEFINE_string("preset", None, "preset name or directory (required)", required=True, flag_values=fv)
    flags.DEFINE_enum("task", None, FINETUNING_TASKS, "the task and its file formats (required)", required=True,
                      flag_values=fv)
    flags.DEFINE_string("train", None, "training file, a directory for GLUE or RACE (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_string("eval", None, "evaluation file, a directory for GLUE or RACE (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_string("output", None, "directory for metrics, curves, preset, serving model, logs (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_string("glue_task", defaults.glue_task,
                        "GLUE task name; --train/--eval are then the GLUE directory", flag_values=fv)
    flags.DEFINE_string("tfds", defaults.tfds,
                        "TFDS dataset (e.g. glue/sst2) read from a local copy; --train/--eval are split names",
                        flag_values=fv)
    flags.DEFINE_string("tfds_data_dir", defaults.tfds_data_dir, "where the TFDS dataset was prepared",
                        flag_values=fv)
    flags.DEFINE_multi_string("text_columns", list(defaults.text_columns),
                              "one column, or two for pairs (--text_columns a b)", flag_values=fv)
    flags.DEFINE_string("label_column", defaults.label_column, "column holding the label", flag_values=fv)
    flags.DEFINE_integer("sequence_length", defaults.sequence_length,
                         "pieces per example (or window); default: 128, or the preset's positions where fewer",
                         flag_values=fv)
    flags.DEFINE_enum("pooling", defaults.pooling, POOLING_CHOICES,
                      "classification/regression head: on the pooled [CLS] or on the mean of the "
                      "tokens' outputs (long documents, LSH attention)", flag_values=fv)
    flags.DEFINE_integer("doc_stride", defaults.doc_stride, "squad: pieces between window starts", flag_values=fv)
    flags.DEFINE_integer("epochs", defaults.epochs, "at most; each scored on --eval and the validation split",
                         flag_values=fv)
    flags.DEFINE_integer("batch_size", defaults.batch_size, "global batch size", flag_values=fv)
    flags.DEFINE_float("learning_rate", defaults.learning_rate,
                       "peak, after linear warmup (default: 1e-3 for backbones of hidden size <= 256, "
                       "5e-5 for wider ones)", flag_values=fv)
    flags.DEFINE_float("warmup_fraction", defaults.warmup_fraction, "of all training steps", flag_values=fv)
    flags.DEFINE_float("validation_fraction", defaults.validation_fraction,
                       "share of the training examples held out to pick the best epoch and stop early "
                       "(--eval is only scored); 0 trains every epoch and keeps the last", flag_values=fv)
    flags.DEFINE_integer("patience", defaults.patience,
                         "epochs without a better validation score before training stops "
                         "(default: none, every epoch trains and the best is kept)", flag_values=fv)
    flags.DEFINE_boolean("head_warm_start", defaults.head_warm_start,
                         "classification: fit the head on the frozen model's features before fine-tuning",
                         flag_values=fv)
    flags.DEFINE_enum("strategy", defaults.strategy, STRATEGY_NAMES, "tf.distribute strategy", flag_values=fv)
    flags.DEFINE_integer("seed", defaults.seed, "random seed (weights, shuffling, dropout)", flag_values=fv)
    define_tensorboard_flags(fv, defaults.tensorboard)
    flags.DEFINE_boolean("serving", defaults.serving,
                         "on TensorFlow, write OUTPUT/serving, a SavedModel that takes raw strings; "
                         "--noserving skips it (sweeps; `export` makes it later)", flag_values=fv)
    # Task distillation (classification): learn a fine-tuned teacher's predictions.
    flags.DEFINE_string("teacher", defaults.teacher,
                        "task distillation: a classifier preset fine-tuned on the same labels "
                        "(same order: finetune sorts them)", flag_values=fv)
    flags.DEFINE_string("transfer_texts", defaults.transfer_texts,
                        "task distillation: unlabelled in-domain texts, one per line, that the teacher labels",
                        flag_values=fv)
    flags.DEFINE_float("distill_temperature", defaults.distill_temperature, "task distillation: softmax temperature",
                       flag_values=fv)
    flags.DEFINE_float("distill_alpha", defaults.distill_alpha,
                       "task distillation: weight of the teacher's soft targets on labelled examples",
                       flag_values=fv)


def settings_from(flag_values):
    return settings_from_flags(FinetuneSettings, flag_values, tensorboard=tensorboard(flag_values))


def check_inputs(flag_values):
    """Before TensorFlow is imported: the input files exist."""
    check_finetune_files(settings_from(flag_values))


def run(flag_values):
    # Imports TensorFlow: here rather than at the top so `--help` is fast.
    from keras_albert.pipelines.finetuning import run_finetuning

    return run_finetuning(settings_from(flag_values))
