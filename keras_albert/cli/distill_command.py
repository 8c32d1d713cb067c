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

from absl import flags

from keras_albert.cli.flag_choices import STRATEGY_NAMES
from keras_albert.cli.flag_types import define_boolean
from keras_albert.cli.flag_types import define_tensorboard_flags
from keras_albert.cli.flag_types import settings_from_flags
from keras_albert.cli.flag_types import tensorboard
from keras_albert.pipelines.distillation_settings import DistillationSettings
from keras_albert.pipelines.preset_checks import check_known_presets
from keras_albert.pipelines.pretraining_settings import check_local_corpus

HELP = "distill a small (MobileBERT-style) student from a teacher preset"


def define_flags(flag_values):
    defaults = DistillationSettings(teacher="", student_config="", corpus=[], output="")
    fv = flag_values
    flags.DEFINE_string("teacher", None, "teacher preset name or directory, with an MLM head (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_string("student_config", None,
                        "inline JSON object or JSON file of AlbertBackbone arguments (vocabulary_size "
                        "and max_sequence_length default to the teacher's) (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_multi_string("corpus", None,
                              "text files or glob patterns: one sentence per line, blank line between "
                              "documents (required; --corpus a.txt b.txt)", required=True, flag_values=fv)
    flags.DEFINE_string("output", None, "run directory: data/, preset/, metrics.json, logs/ (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_integer("train_steps", defaults.train_steps, "steps of the final, whole-student stage",
                         flag_values=fv)
    flags.DEFINE_integer("steps_per_stage", defaults.steps_per_stage,
                         "progressive transfer: steps per mapped layer before the final stage (0: off)",
                         flag_values=fv)
    flags.DEFINE_integer("batch_size", defaults.batch_size, "global batch size", flag_values=fv)
    flags.DEFINE_integer("sequence_length", defaults.sequence_length, "tokens per instance", flag_values=fv)
    flags.DEFINE_integer("max_predictions_per_seq", defaults.max_predictions_per_seq,
                         "masked positions per instance", flag_values=fv)
    flags.DEFINE_integer("dupe_factor", defaults.dupe_factor, "passes over the corpus, each with other masks",
                         flag_values=fv)
    flags.DEFINE_float("learning_rate", defaults.learning_rate, "peak, after linear warmup", flag_values=fv)
    flags.DEFINE_integer("warmup_steps", defaults.warmup_steps, "default: a tenth of each stage",
                         flag_values=fv)
    flags.DEFINE_string("layer_map", defaults.layer_map,
                        'JSON {"student_layer": teacher_layer, ...} (0-based); default spreads evenly',
                        flag_values=fv)
    flags.DEFINE_float("feature_weight", defaults.feature_weight, "weight of feature-map transfer",
                       flag_values=fv)
    flags.DEFINE_float("attention_weight", defaults.attention_weight, "weight of attention transfer",
                       flag_values=fv)
    flags.DEFINE_float("mlm_weight", defaults.mlm_weight, "weight of the masked-LM loss", flag_values=fv)
    flags.DEFINE_float("alpha", defaults.alpha, "weight of the teacher's soft predictions", flag_values=fv)
    flags.DEFINE_float("temperature", defaults.temperature, "softmax temperature of the soft predictions",
                       flag_values=fv)
    flags.DEFINE_integer("shuffle_buffer_size", defaults.shuffle_buffer_size,
                         "instances held for shuffling (cover the data if it fits in memory)", flag_values=fv)
    flags.DEFINE_integer("log_every", defaults.log_every, "steps between progress lines", flag_values=fv)
    flags.DEFINE_string("data_dir", defaults.data_dir,
                        "where the instances (TFRecords on TensorFlow, .npz elsewhere) are written or reused (default OUTPUT/data)", flag_values=fv)
    define_boolean("jit_compile", defaults.jit_compile, "XLA (default: on with TensorFlow and JAX; off with PyTorch, where it means torch.compile)", fv)
    flags.DEFINE_enum("strategy", defaults.strategy, STRATEGY_NAMES, "tf.distribute strategy", flag_values=fv)
    flags.DEFINE_integer("seed", defaults.seed, "random seed (data, weights, shuffling)", flag_values=fv)
    define_tensorboard_flags(fv, defaults.tensorboard)


def settings_from(flag_values):
    return settings_from_flags(DistillationSettings, flag_values, tensorboard=tensorboard(flag_values))


def check_inputs(flag_values):
    """Before TensorFlow is imported: the corpus files exist and the
    teacher is a preset we know."""
    check_local_corpus(flag_values.corpus)
    check_known_presets(flag_values.teacher)


def run(flag_values):
    # Imports Keras and its backend: here rather than at the top so `--help` is fast.
    from keras_albert.pipelines.distillation import run_distillation

    return run_distillation(settings_from(flag_values))
