"""Distill a small student from an ALBERT teacher preset.

  python -m keras_albert distill --teacher=albert_tiny_en \\
      --student_config='{"num_layers": 4, "hidden_dim": 128, ...}' \\
      --corpus=books.txt --output=runs/student

The teacher's tokenizer turns the corpus into masked-LM instances
(OUTPUT/data); the student learns the teacher's layer outputs (feature-map
transfer), attention maps (attention transfer) and masked-LM predictions
mixed with the true tokens (pre-training distillation), optionally layer by
layer first (--steps_per_stage). The student preset (MLM head, tokenizer,
preprocessor) is written atomically to OUTPUT/preset, with
OUTPUT/metrics.json and TensorBoard logs in OUTPUT/logs (--no_tensorboard:
none).
"""

import dataclasses

from keras_albert.cli.flag_choices import STRATEGY_NAMES
from keras_albert.cli.flag_types import add_tensorboard_flags
from keras_albert.cli.flag_types import boolean_flag
from keras_albert.pipelines.distillation_settings import DistillationSettings

HELP = "distill a small (MobileBERT-style) student from a teacher preset"


def add_arguments(parser):
    defaults = DistillationSettings(teacher="", student_config="", corpus=[], output="")
    add = parser.add_argument
    add("--teacher", required=True, help="teacher preset name or directory (with an MLM head)")
    add("--student_config", required=True,
        help="inline JSON object or JSON file of AlbertBackbone arguments "
        "(vocabulary_size and max_sequence_length default to the teacher's)")
    add("--corpus", nargs="+", required=True,
        help="text files or glob patterns: one sentence per line, blank line between documents")
    add("--output", required=True, help="run directory: data/, preset/, metrics.json, logs/")
    add("--train_steps", type=int, default=defaults.train_steps,
        help="steps of the final, whole-student stage")
    add("--steps_per_stage", type=int, default=defaults.steps_per_stage,
        help="progressive transfer: steps per mapped layer before the final stage (0: off)")
    add("--batch_size", type=int, default=defaults.batch_size)
    add("--sequence_length", type=int, default=defaults.sequence_length)
    add("--max_predictions_per_seq", type=int, default=defaults.max_predictions_per_seq)
    add("--dupe_factor", type=int, default=defaults.dupe_factor)
    add("--learning_rate", type=float, default=defaults.learning_rate)
    add("--warmup_steps", type=int, default=defaults.warmup_steps, help="default: a tenth of each stage")
    add("--layer_map", default=defaults.layer_map,
        help='JSON {"student_layer": teacher_layer, ...} (0-based); default spreads evenly')
    add("--feature_weight", type=float, default=defaults.feature_weight)
    add("--attention_weight", type=float, default=defaults.attention_weight)
    add("--mlm_weight", type=float, default=defaults.mlm_weight)
    add("--alpha", type=float, default=defaults.alpha, help="weight of the teacher's soft predictions")
    add("--temperature", type=float, default=defaults.temperature)
    add("--shuffle_buffer_size", type=int, default=defaults.shuffle_buffer_size,
        help="instances held for shuffling (cover the data if it fits in memory)")
    add("--log_every", type=int, default=defaults.log_every, help="steps between progress lines")
    add("--data_dir", default=defaults.data_dir,
        help="where the TFRecords are written or reused (default OUTPUT/data)")
    add("--jit_compile", type=boolean_flag, default=defaults.jit_compile, help="XLA (faster on CPU too)")
    add("--strategy", choices=STRATEGY_NAMES, default=defaults.strategy)
    add("--seed", type=int, default=defaults.seed)
    add_tensorboard_flags(add, defaults.tensorboard)


def settings_from_flags(args):
    return DistillationSettings(**{
        field.name: getattr(args, field.name) for field in dataclasses.fields(DistillationSettings)
    })


def run(args):
    # Imports TensorFlow: here rather than at the top so `--help` is fast.
    from keras_albert.pipelines.distillation import run_distillation

    return run_distillation(settings_from_flags(args))
