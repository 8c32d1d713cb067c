"""Pretrain ALBERT on a text corpus (MLM + SOP/NSP/none), resumably.

Trains a SentencePiece vocabulary, creates pretraining instances as
Google's release does, trains with LAMB on the chosen tf.distribute
strategy and writes a keras_albert preset to OUTPUT/preset. Run the same
command again after an interruption to continue exactly where it stopped.

The defaults pretrain a tiny model that a CPU finishes: the bundled
albert_tiny_en's shape (4 layers, hidden 256, embeddings 128; 1.9M backbone
parameters with 8,000 pieces), 128-token instances, 1,000 steps of 32:

  python -m keras_albert pretrain --corpus "corpus/*.txt" --output runs/tiny

Picking a size: the model's cost per step grows with --config's layers and
width and with --max_seq_length (attention: its square); quality grows with
steps x batch. Take the tiny shape on a CPU, albert_base_en_uncased (the
paper's base: 12 layers, hidden 768) with --vocab_size 30000
--max_seq_length 512 on a GPU or TPU, with --train_steps and --batch_size
as large as the time allows (the paper: 125,000 steps of 4,096):

  python -m keras_albert pretrain --corpus "corpus/*.txt" --output runs/base \\
      --config albert_base_en_uncased --vocab_size 30000 --max_seq_length 512 \\
      --batch_size 4096 --train_steps 125000 --checkpoint_every 5000
"""

from absl import flags

from keras_albert.cli.flag_choices import PRECISION_POLICIES
from keras_albert.cli.flag_choices import STRATEGY_NAMES
from keras_albert.cli.flag_types import define_boolean
from keras_albert.cli.flag_types import define_tensorboard_flags
from keras_albert.cli.flag_types import settings_from_flags
from keras_albert.cli.flag_types import tensorboard
from keras_albert.pipelines.preset_checks import check_known_presets
from keras_albert.pipelines.pretraining_settings import DEFAULT_CHECKPOINT_EVERY
from keras_albert.pipelines.pretraining_settings import PretrainingSettings
from keras_albert.pipelines.pretraining_settings import check_local_corpus
from keras_albert.pipelines.pretraining_settings import check_pretraining_numbers

HELP = "pretrain ALBERT on a text corpus and write a preset"


def define_flags(flag_values):
    defaults = PretrainingSettings(corpus=[], output="")
    fv = flag_values
    flags.DEFINE_multi_string(
        "corpus", None, "text files or glob patterns: one sentence per line, a blank line "
        "between documents, Google's format (required; --corpus a.txt b.txt)", required=True, flag_values=fv)
    flags.DEFINE_string("output", None, "run directory, resumed if it exists (required)", required=True,
                        flag_values=fv)
    flags.DEFINE_enum("objective", defaults.objective, ("mlm", "causal_lm"),
                      "mlm: ALBERT's masked LM and sentence task; causal_lm: next-token prediction "
                      "on documents packed into --max_seq_length windows ([CLS] document [SEP], "
                      "no padding), written as an AlbertCausalLM preset that `generate` loads; "
                      "--init_preset may be bidirectional (its weights, made causal) or causal",
                      flag_values=fv)
    flags.DEFINE_string("config", defaults.config,
                        "model shape: an official preset's name (albert_base_en_uncased, ...), a bundled "
                        "preset's (albert_tiny_en, ...), a JSON file or inline JSON object of AlbertBackbone "
                        "arguments (vocabulary_size is set from the vocabulary); new weights either way",
                        flag_values=fv)
    flags.DEFINE_integer("vocab_size", defaults.vocabulary_size, "SentencePiece pieces", flag_values=fv)
    flags.DEFINE_alias("vocabulary_size", "vocab_size", flag_values=fv)
    flags.DEFINE_enum("document_boundary", defaults.document_boundary, ("blank_line", "file"),
                      "what separates documents", flag_values=fv)
    flags.DEFINE_enum("sentence_split", defaults.sentence_split, ("line", "punctuation"),
                      "what separates sentences", flag_values=fv)
    flags.DEFINE_string("init_preset", None,
                        "continue pretraining from this preset (directory or bundled name): its "
                        "weights, MLM/sentence heads and vocabulary; --config and --vocab_size are "
                        "then ignored", flag_values=fv)
    flags.DEFINE_float("dropout", None,
                       "dropout and attention dropout of the backbone (default: --config's, or "
                       "--init_preset's when continuing)", flag_values=fv)
    flags.DEFINE_integer("num_groups", None,
                         "weight groups of the encoder (default: --config's, or --init_preset's); "
                         "continuing with more groups starts each as a copy of the shared weights",
                         flag_values=fv)
    flags.DEFINE_string("teacher_embeddings", None,
                        "sentence-level distillation: a directory with texts.txt and vectors.npy (a "
                        "teacher's sentence embeddings, e.g. from tools/teacher_embeddings.py); the "
                        "pooled output learns them beside MLM/SOP", flag_values=fv)
    flags.DEFINE_integer("embedding_sequence_length", defaults.embedding_sequence_length,
                         "pieces per teacher text", flag_values=fv)
    flags.DEFINE_multi_string("eval_corpus", None, "held-out text, evaluated at the end", flag_values=fv)
    flags.DEFINE_integer("max_seq_length", defaults.max_seq_length, "tokens per instance", flag_values=fv)
    flags.DEFINE_integer("max_predictions_per_seq", defaults.max_predictions_per_seq,
                         "masked positions per instance", flag_values=fv)
    flags.DEFINE_float("masked_lm_prob", defaults.masked_lm_prob, "share of tokens masked", flag_values=fv)
    flags.DEFINE_integer("dupe_factor", defaults.dupe_factor,
                         "passes over the corpus, each with other masks", flag_values=fv)
    flags.DEFINE_enum("sentence_task", defaults.sentence_task, ("sop", "nsp", "none"),
                      "sentence-order, next-sentence or no sentence head", flag_values=fv)
    flags.DEFINE_integer("num_shards", defaults.num_shards, "training TFRecord files", flag_values=fv)
    define_boolean("dynamic_masking", defaults.dynamic_masking,
                   "draw new masks for every batch in the input pipeline", fv)
    flags.DEFINE_integer("shuffle_buffer_size", defaults.shuffle_buffer_size,
                         "training records held for shuffling; cover the data if it fits in memory",
                         flag_values=fv)
    flags.DEFINE_integer("batch_size", defaults.batch_size, "global batch size", flag_values=fv)
    flags.DEFINE_integer("train_steps", defaults.train_steps, "optimizer steps", flag_values=fv)
    flags.DEFINE_integer("warmup_steps", None, "default: min(3125, train_steps // 10)", flag_values=fv)
    flags.DEFINE_float("learning_rate", defaults.learning_rate, "peak, after linear warmup", flag_values=fv)
    flags.DEFINE_enum("optimizer", defaults.optimizer, ("lamb", "adamw"), "LAMB as ALBERT, or AdamW", flag_values=fv)
    flags.DEFINE_integer("checkpoint_every", defaults.checkpoint_every,
                         "steps between checkpoints; must divide --train_steps (default: its largest "
                         f"divisor up to {DEFAULT_CHECKPOINT_EVERY})", flag_values=fv)
    flags.DEFINE_integer("steps_per_execution", defaults.steps_per_execution,
                         "steps per call into the compiled graph", flag_values=fv)
    flags.DEFINE_enum("strategy", defaults.strategy, STRATEGY_NAMES, "tf.distribute strategy", flag_values=fv)
    flags.DEFINE_string("tpu", None, "TPU name or grpc:// address", flag_values=fv)
    flags.DEFINE_enum("precision", defaults.precision, PRECISION_POLICIES, "Keras dtype policy",
                      flag_values=fv)
    define_boolean("jit_compile", defaults.jit_compile, "XLA (default: on with TensorFlow and JAX; off with PyTorch, where it means torch.compile)", fv)
    flags.DEFINE_integer("seed", defaults.seed, "random seed (data, weights, shuffling)", flag_values=fv)
    flags.DEFINE_float("time_budget_minutes", None,
                       "stop at the last checkpoint that fits this wall time (with the held-out "
                       "evaluation and the preset); the same command continues", flag_values=fv)
    flags.DEFINE_integer("eval_seed", None,
                         "seed of the held-out instances (default: --seed + 1); fix it to compare "
                         "runs of other seeds on the same held-out instances", flag_values=fv)
    define_tensorboard_flags(fv, defaults.tensorboard)


# What only the masked-LM objective reads.
MLM_ONLY_FLAGS = (
    "sentence_task", "dynamic_masking", "max_predictions_per_seq", "masked_lm_prob",
    "dupe_factor", "teacher_embeddings", "embedding_sequence_length", "num_shards",
    "shuffle_buffer_size",
)


def check_inputs(flag_values):
    """Before TensorFlow is imported: the corpus files exist, and
    --objective=causal_lm comes with no masked-LM flag."""
    if flag_values.objective == "causal_lm":
        given = [name for name in MLM_ONLY_FLAGS if flag_values[name].present]
        if given:
            raise ValueError(
                f"--{given[0]} is a masked-LM flag; --objective=causal_lm predicts every next "
                f"token and takes none of {', '.join('--' + n for n in MLM_ONLY_FLAGS)}."
            )
    check_local_corpus(flag_values.corpus)
    check_local_corpus(flag_values.eval_corpus, "eval_corpus")
    check_known_presets(flag_values.init_preset)
    check_pretraining_numbers(settings_from_flags(PretrainingSettings, flag_values, tensorboard=tensorboard(flag_values)))


def run(flag_values):
    # Imports TensorFlow: here rather than at the top so `--help` is fast.
    from keras_albert.pipelines.pretraining import expand_corpus
    from keras_albert.pipelines.pretraining import run_pretraining

    eval_corpus = flag_values.eval_corpus
    settings = settings_from_flags(
        PretrainingSettings, flag_values,
        corpus=expand_corpus(flag_values.corpus),
        eval_corpus=expand_corpus(eval_corpus, "eval_corpus") if eval_corpus else None,
        tensorboard=tensorboard(flag_values),
    )
    return run_pretraining(settings)
