"""What `run_pretraining` takes; imports nothing heavy, so the CLI can read
the defaults for its flags without importing TensorFlow."""

import dataclasses
import glob
import math
import numbers
import os

# [CLS], two [SEP] and room for both segments (data/pretraining_instances.py).
MIN_MLM_SEQ_LENGTH = 8
# Checkpoints when --checkpoint_every is left out: the largest divisor of
# --train_steps up to the first, and refused below the second (a prime
# --train_steps would save after every step).
DEFAULT_CHECKPOINT_EVERY = 100
MIN_DEFAULT_CHECKPOINT_EVERY = 10


@dataclasses.dataclass
class PretrainingSettings:
    """Everything `python -m keras_albert pretrain` takes (see its --help).

    The defaults pretrain a tiny model that a CPU finishes: the bundled
    albert_tiny_en's shape (4 layers, hidden 256, 1.9M backbone parameters
    with 8,000 pieces), 128-token instances, 1,000 steps of 32. The paper's
    ALBERT-base is `config="albert_base_en_uncased"`, vocabulary_size=30000,
    max_seq_length=512 and far more steps on accelerators.
    """

    corpus: list
    output: str
    # "mlm" (masked LM and a sentence task: ALBERT) or "causal_lm" (next
    # token on windows of packed documents: an AlbertCausalLM preset). The
    # masked-LM settings (sentence_task, masked_lm_prob, dupe_factor, ...)
    # do not apply to causal_lm: the CLI refuses them, run_pretraining
    # refuses dynamic_masking and teacher_embeddings and ignores the rest.
    objective: str = "mlm"
    # An official preset's shape, a bundled preset's (new weights either
    # way), or backbone arguments as JSON.
    config: str = "albert_tiny_en"
    vocabulary_size: int = 8000
    document_boundary: str = "blank_line"
    sentence_split: str = "line"
    eval_corpus: list = None
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    dupe_factor: int = 10
    sentence_task: str = "sop"
    num_shards: int = 4
    dynamic_masking: bool = False
    # Records held for shuffling at training time. The instance files keep
    # roughly the corpus order (they are written by streaming), so a small
    # buffer trains on one part of the corpus after another; make it cover
    # the data when it fits in memory (a 512-token record is about 10 KB).
    shuffle_buffer_size: int = 10000
    batch_size: int = 32
    train_steps: int = 1000
    warmup_steps: int = None
    learning_rate: float = 0.00176
    optimizer: str = "lamb"
    # None: `checkpoint_interval` picks the largest divisor of train_steps
    # up to 100, so a short trial (train_steps=20) runs as given.
    checkpoint_every: int = None
    steps_per_execution: int = 1
    strategy: str = "auto"
    tpu: str = None
    precision: str = "float32"
    # None: the backend's default (`default_pretraining_jit_compile`): XLA
    # on TensorFlow and JAX, off on PyTorch, where True means torch.compile.
    jit_compile: bool = None
    seed: int = 12345
    # Seed of the held-out instances (default: seed + 1). Fixing it keeps
    # the held-out curve comparable across runs drawn with other seeds.
    eval_seed: int = None
    # Continue from a preset's weights, heads and vocabulary (continued or
    # domain-adaptive pretraining); `config` and `vocabulary_size` are then
    # the preset's.
    init_preset: str = None
    # Dropout and attention dropout of the backbone (default: the config's,
    # or the preset's when continuing). A continued run on text it has seen
    # many times may need more regularisation than the preset was built with.
    dropout: float = None
    # Weight groups of the encoder (default: the config's, or the preset's).
    # When continuing, each new group starts as a copy of the shared weights
    # its layers used: more parameters at the same compute per step.
    num_groups: int = None
    # Sentence-level distillation: a directory of texts.txt + vectors.npy
    # from a teacher; its texts go through an extra head at this length.
    teacher_embeddings: str = None
    embedding_sequence_length: int = 48
    # Wall-time budget of the whole command: training ends at the last
    # checkpoint that leaves time for the held-out evaluation and the
    # preset; the same command continues (a lent accelerator's minutes).
    time_budget_minutes: float = None
    # TensorBoard logs in OUTPUT/logs.
    tensorboard: bool = True


def check_local_corpus(patterns, name="corpus"):
    """Every local pattern (file or glob) names at least one file, and a
    local text corpus holds some text; remote ones (gs://...) are left to
    `pipelines.pretraining.expand_corpus`, which reads them through
    TensorFlow. Cheap: the CLI runs it before importing TensorFlow, and the
    text check stops at the first non-blank bytes."""
    files = []
    for pattern in map(os.fspath, patterns or ()):
        if "://" in pattern:
            return
        matches = sorted(glob.glob(pattern))
        if not matches:
            raise FileNotFoundError(f"`{name}` entry {pattern!r} matches no file.")
        files += matches
    text_files = [path for path in files if not path.endswith(".npz")]  # .npz: tokenized
    if text_files and not any(_holds_text(path) for path in text_files):
        raise ValueError(
            f"`{name}` holds no text: every line of its {len(text_files)} file(s) "
            f"({', '.join(repr(p) for p in text_files[:3])}{', ...' if len(text_files) > 3 else ''}) "
            "is blank."
        )


def _holds_text(path, chunk_bytes=1 << 20):
    if os.path.isdir(path):
        return True  # left to the reader, which names what it cannot read
    with open(path, "rb") as file:
        while chunk := file.read(chunk_bytes):
            if chunk.strip():
                return True
    return False


def _flag(name):
    # The CLI's spelling: `vocabulary_size` is `--vocab_size` there.
    return "--vocab_size" if name == "vocabulary_size" else f"--{name}"


def _check_positive_ints(settings, names):
    for name in names:
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"`{_flag(name)}` must be a positive integer. Received: {value!r}")


def checkpoint_interval(settings):
    """Steps between checkpoints: `checkpoint_every`, or when it is None the
    largest divisor of `train_steps` up to `DEFAULT_CHECKPOINT_EVERY` (each
    checkpoint closes a Keras epoch, so it must divide the run)."""
    if settings.checkpoint_every is not None:
        return settings.checkpoint_every
    steps = settings.train_steps
    interval = next(n for n in range(min(steps, DEFAULT_CHECKPOINT_EVERY), 0, -1) if steps % n == 0)
    if interval < min(steps, MIN_DEFAULT_CHECKPOINT_EVERY):
        raise ValueError(
            f"`--train_steps={steps}` has no divisor from {MIN_DEFAULT_CHECKPOINT_EVERY} to "
            f"{DEFAULT_CHECKPOINT_EVERY} to checkpoint at (each checkpoint closes an epoch). Pass "
            f"--checkpoint_every (a divisor of --train_steps), or a --train_steps such as "
            f"{round(steps, -1) or MIN_DEFAULT_CHECKPOINT_EVERY}."
        )
    return interval


def check_pretraining_numbers(settings):
    """The numeric settings, checked before TensorFlow is imported and
    before any vocabulary or data is built: the same rules the data and
    training stages apply, which once answered only after both (minutes on
    a real corpus), under their Python names. Messages name the flags."""
    given = ("checkpoint_every",) if settings.checkpoint_every is not None else ()
    _check_positive_ints(settings, ("batch_size", "train_steps", *given, "vocabulary_size"))
    if settings.train_steps % checkpoint_interval(settings):
        raise ValueError(
            "`--checkpoint_every` must divide `--train_steps` (each checkpoint closes an epoch). "
            f"Received: --train_steps={settings.train_steps}, --checkpoint_every={settings.checkpoint_every}"
        )
    rate = settings.learning_rate
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not math.isfinite(rate) or rate < 0:
        raise ValueError(f"`--learning_rate` must be a finite number >= 0. Received: {rate!r}")
    if settings.objective != "mlm":
        return  # causal_lm: windows of any length; the masked-LM numbers do not apply
    _check_positive_ints(settings, ("max_seq_length", "max_predictions_per_seq", "dupe_factor"))
    if settings.max_seq_length < MIN_MLM_SEQ_LENGTH:
        raise ValueError(
            f"`--max_seq_length` must be >= {MIN_MLM_SEQ_LENGTH} ([CLS], two [SEP] and room for both "
            f"segments). Received: {settings.max_seq_length}"
        )
    if settings.max_predictions_per_seq > settings.max_seq_length:
        raise ValueError(
            "`--max_predictions_per_seq` must be <= `--max_seq_length`. Received: "
            f"--max_predictions_per_seq={settings.max_predictions_per_seq}, --max_seq_length={settings.max_seq_length}"
        )
    prob = settings.masked_lm_prob
    if isinstance(prob, bool) or not isinstance(prob, numbers.Real) or not 0 <= prob <= 1:
        raise ValueError(f"`--masked_lm_prob` must be in [0, 1]. Received: {prob!r}")
