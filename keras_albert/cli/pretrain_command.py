"""Pretrain ALBERT on a text corpus (MLM + SOP/NSP/none), resumably.

Trains a SentencePiece vocabulary, creates pretraining instances as
Google's release does, trains with LAMB on the chosen tf.distribute
strategy and writes a keras_albert preset to OUTPUT/preset. Run the same
command again after an interruption to continue exactly where it stopped.
"""

import dataclasses

from keras_albert.cli.flag_choices import PRECISION_POLICIES
from keras_albert.cli.flag_choices import STRATEGY_NAMES
from keras_albert.cli.flag_types import boolean_flag
from keras_albert.pipelines.pretraining_settings import PretrainingSettings

HELP = "pretrain ALBERT on a text corpus and write a preset"


def add_arguments(parser):
    defaults = PretrainingSettings(corpus=[], output="")
    add = parser.add_argument
    add("--corpus", nargs="+", required=True,
        help="text files or glob patterns: one sentence per line, a blank "
        "line between documents (Google's format)")
    add("--output", required=True, help="run directory (resumed if it exists)")
    add("--config", default=defaults.config,
        help="official preset name, JSON file or inline JSON object of "
        "AlbertBackbone arguments (vocabulary_size is set from the vocabulary)")
    add("--vocab_size", "--vocabulary_size", dest="vocabulary_size", type=int,
        default=defaults.vocabulary_size)
    add("--document_boundary", choices=("blank_line", "file"),
        default=defaults.document_boundary)
    add("--sentence_split", choices=("line", "punctuation"),
        default=defaults.sentence_split)
    add("--init_preset", default=None,
        help="continue pretraining from this preset (directory or bundled "
        "name): its weights, MLM/sentence heads and vocabulary; --config and "
        "--vocab_size are then ignored")
    add("--teacher_embeddings", default=None,
        help="sentence-level distillation: a directory with texts.txt and "
        "vectors.npy (a teacher's sentence embeddings, e.g. from "
        "tools/teacher_embeddings.py); the pooled output learns them beside MLM/SOP")
    add("--embedding_sequence_length", type=int, default=defaults.embedding_sequence_length,
        help="pieces per teacher text")
    add("--eval_corpus", nargs="+", help="held-out text, evaluated at the end")
    add("--max_seq_length", type=int, default=defaults.max_seq_length)
    add("--max_predictions_per_seq", type=int, default=defaults.max_predictions_per_seq)
    add("--masked_lm_prob", type=float, default=defaults.masked_lm_prob)
    add("--dupe_factor", type=int, default=defaults.dupe_factor)
    add("--sentence_task", choices=("sop", "nsp", "none"), default=defaults.sentence_task)
    add("--num_shards", type=int, default=defaults.num_shards)
    add("--dynamic_masking", type=boolean_flag, default=defaults.dynamic_masking,
        help="draw new masks for every batch in the input pipeline")
    add("--shuffle_buffer_size", type=int, default=defaults.shuffle_buffer_size,
        help="training records held for shuffling; cover the data if it fits in memory")
    add("--batch_size", type=int, default=defaults.batch_size, help="global batch size")
    add("--train_steps", type=int, default=defaults.train_steps)
    add("--warmup_steps", type=int, default=None,
        help="default: min(3125, train_steps // 10)")
    add("--learning_rate", type=float, default=defaults.learning_rate)
    add("--optimizer", choices=("lamb", "adamw"), default=defaults.optimizer)
    add("--checkpoint_every", type=int, default=defaults.checkpoint_every,
        help="steps between checkpoints; must divide --train_steps")
    add("--steps_per_execution", type=int, default=defaults.steps_per_execution)
    add("--strategy", choices=STRATEGY_NAMES, default=defaults.strategy)
    add("--tpu", default=None, help="TPU name or grpc:// address")
    add("--precision", choices=PRECISION_POLICIES, default=defaults.precision)
    add("--jit_compile", type=boolean_flag, default=defaults.jit_compile)
    add("--seed", type=int, default=defaults.seed)


def run(args):
    # Imports TensorFlow: here rather than at the top so `--help` is fast.
    from keras_albert.pipelines.pretraining import expand_corpus
    from keras_albert.pipelines.pretraining import run_pretraining

    values = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(PretrainingSettings)
    }
    values["corpus"] = expand_corpus(args.corpus)
    if args.eval_corpus:
        values["eval_corpus"] = expand_corpus(args.eval_corpus, "eval_corpus")
    return run_pretraining(PretrainingSettings(**values))
