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
OUTPUT/metrics.json.
"""

import json
import math
import pathlib
import sys
import time

import keras

from keras_albert.cli.flag_types import boolean_flag
from keras_albert.pipelines.pretraining import expand_corpus
from keras_albert.distill.distillation_data import distillation_dataset
from keras_albert.distill.distillation_data import write_distillation_records
from keras_albert.distill.distiller import Distiller
from keras_albert.distill.progressive import progressive_distillation
from keras_albert.distill.student import build_student
from keras_albert.distill.student import parse_student_config
from keras_albert.distill.student import save_student_preset
from keras_albert.models.albert_masked_lm import AlbertMaskedLM
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.training.schedules import WarmupLinearDecay
from keras_albert.training.strategy import STRATEGY_NAMES
from keras_albert.training.strategy import resolve_strategy

HELP = "distill a small (MobileBERT-style) student from a teacher preset"


def add_arguments(parser):
    add = parser.add_argument
    add("--teacher", required=True, help="teacher preset name or directory (with an MLM head)")
    add("--student_config", required=True,
        help="inline JSON object or JSON file of AlbertBackbone arguments "
        "(vocabulary_size and max_sequence_length default to the teacher's)")
    add("--corpus", nargs="+", required=True,
        help="text files or glob patterns: one sentence per line, blank line between documents")
    add("--output", required=True, help="run directory: data/, preset/, metrics.json")
    add("--train_steps", type=int, default=2000, help="steps of the final, whole-student stage")
    add("--steps_per_stage", type=int, default=0,
        help="progressive transfer: steps per mapped layer before the final stage (0: off)")
    add("--batch_size", type=int, default=32)
    add("--sequence_length", type=int, default=128)
    add("--max_predictions_per_seq", type=int, default=20)
    add("--dupe_factor", type=int, default=5)
    add("--learning_rate", type=float, default=1e-3)
    add("--warmup_steps", type=int, default=None, help="default: a tenth of each stage")
    add("--layer_map", default=None,
        help='JSON {"student_layer": teacher_layer, ...} (0-based); default spreads evenly')
    add("--feature_weight", type=float, default=1.0)
    add("--attention_weight", type=float, default=1.0)
    add("--mlm_weight", type=float, default=1.0)
    add("--alpha", type=float, default=0.5, help="weight of the teacher's soft predictions")
    add("--temperature", type=float, default=1.0)
    add("--shuffle_buffer_size", type=int, default=50000,
        help="instances held for shuffling (cover the data if it fits in memory)")
    add("--log_every", type=int, default=100, help="steps between progress lines")
    add("--data_dir", default=None,
        help="where the TFRecords are written or reused (default OUTPUT/data)")
    add("--jit_compile", type=boolean_flag, default=True, help="XLA (faster on CPU too)")
    add("--strategy", choices=STRATEGY_NAMES, default="auto")
    add("--seed", type=int, default=0)


def _check(args):
    for name in ("batch_size", "sequence_length", "max_predictions_per_seq",
                 "dupe_factor", "log_every", "shuffle_buffer_size"):
        if getattr(args, name) < 1:
            raise ValueError(f"`--{name}` must be a positive integer. Received: {getattr(args, name)}")
    for name in ("train_steps", "steps_per_stage"):
        if getattr(args, name) < 0:
            raise ValueError(f"`--{name}` must be >= 0. Received: {getattr(args, name)}")
    if args.train_steps + args.steps_per_stage == 0:
        raise ValueError("`--train_steps` and `--steps_per_stage` are both 0: nothing to train.")
    if not args.learning_rate > 0:
        raise ValueError(f"`--learning_rate` must be > 0. Received: {args.learning_rate}")
    output = pathlib.Path(args.output)
    if output.exists() and not output.is_dir():
        raise ValueError(f"`--output` {str(output)!r} exists and is a file.")
    layer_map = None
    if args.layer_map:
        try:
            layer_map = json.loads(args.layer_map)
        except json.JSONDecodeError:
            raise ValueError(f"`--layer_map` must be a JSON object. Received: {args.layer_map!r}")
        if not isinstance(layer_map, dict):
            raise ValueError(f"`--layer_map` must be a JSON object. Received: {args.layer_map!r}")
        try:
            layer_map = {int(k): v for k, v in layer_map.items()}
        except ValueError:
            raise ValueError(f"`--layer_map` keys must be integers. Received: {args.layer_map!r}")
    return output, layer_map


class _Progress(keras.callbacks.Callback):
    """One line per logged chunk: stage, step, seconds, losses."""

    def __init__(self, label, steps):
        super().__init__()
        self.label, self.steps, self.done, self.started = label, steps, 0, time.time()

    def on_epoch_end(self, epoch, logs=None):
        self.done = min(self.steps, self.done + self.params.get("steps", 0))
        losses = ", ".join(f"{k}={v:.4f}" for k, v in sorted((logs or {}).items()))
        print(f"[{self.label}] step {self.done}/{self.steps} "
              f"({time.time() - self.started:.0f} s): {losses}", flush=True)


def _fit_stage(distiller, dataset, stage, steps, args, optimizer):
    distiller.set_stage(stage)
    distiller.compile(optimizer=optimizer, jit_compile=args.jit_compile)
    label = "final" if stage is None else f"stage {stage + 1}/{distiller.num_stages}"
    chunk = min(args.log_every, steps)
    history = distiller.fit(dataset, epochs=math.ceil(steps / chunk), steps_per_epoch=chunk,
                            verbose=0, callbacks=[_Progress(label, steps)])
    return {k: [float(v) for v in values] for k, values in history.history.items()}


def _optimizer(args, steps):
    warmup = args.warmup_steps if args.warmup_steps is not None else max(1, steps // 10)
    schedule = WarmupLinearDecay(
        peak_learning_rate=args.learning_rate, warmup_steps=min(warmup, steps), total_steps=steps)
    return keras.optimizers.AdamW(schedule, weight_decay=0.01, global_clipnorm=1.0)


def run(args):
    output, layer_map = _check(args)
    corpus = expand_corpus(args.corpus)
    student_config = parse_student_config(args.student_config)
    keras.utils.set_random_seed(args.seed)
    tokenizer = AlbertTokenizer.from_preset(args.teacher)
    strategy = resolve_strategy(args.strategy)
    with strategy.scope():
        teacher = AlbertMaskedLM.from_preset(args.teacher)
        if args.sequence_length > teacher.backbone.max_sequence_length:
            raise ValueError(
                f"`--sequence_length` must be <= the teacher's max_sequence_length "
                f"{teacher.backbone.max_sequence_length}. Received: {args.sequence_length}")
        student = build_student(student_config, teacher.backbone)
        distiller = Distiller(
            teacher, student, layer_map=layer_map, feature_weight=args.feature_weight,
            attention_weight=args.attention_weight, mlm_weight=args.mlm_weight,
            alpha=args.alpha, temperature=args.temperature)
    print(f"Teacher {teacher.backbone.count_params():,} parameters; student "
          f"{student.backbone.count_params():,}; layer map {distiller.layer_map}", flush=True)
    output.mkdir(parents=True, exist_ok=True)
    data_dir = pathlib.Path(args.data_dir) if args.data_dir else output / "data"
    data = data_dir / (f"train-seq{args.sequence_length}-pred{args.max_predictions_per_seq}"
                       f"-dupe{args.dupe_factor}-seed{args.seed}.tfrecord")
    data_dir.mkdir(parents=True, exist_ok=True)
    count = write_distillation_records(
        corpus, tokenizer.proto, str(data), max_seq_length=args.sequence_length,
        max_predictions_per_seq=args.max_predictions_per_seq,
        dupe_factor=args.dupe_factor, seed=args.seed)
    print(f"Data: {'reused ' if count is None else f'{count} instances in '}{data}", flush=True)
    per_replica = args.batch_size // strategy.num_replicas_in_sync
    dataset = distillation_dataset(str(data), per_replica, seed=args.seed,
                                   shuffle_buffer_size=args.shuffle_buffer_size)
    stages = [(s, args.steps_per_stage) for s in range(distiller.num_stages)] if args.steps_per_stage else []
    stages += [(None, args.train_steps)] if args.train_steps else []
    histories = []
    started = time.time()
    with strategy.scope():
        for stage, steps in stages:
            history = _fit_stage(distiller, dataset, stage, steps, args, _optimizer(args, steps))
            histories.append({"stage": stage, "steps": steps, "history": history})
    distiller.set_stage(None)
    save_student_preset(student, tokenizer, output / "preset", args.sequence_length)
    results = {
        "teacher": args.teacher,
        "student_config": student.backbone.get_config(),
        "teacher_parameters": teacher.backbone.count_params(),
        "student_parameters": student.backbone.count_params(),
        "layer_map": distiller.layer_map,
        "stages": histories,
        "seconds": round(time.time() - started, 1),
        "preset": str(output / "preset"),
    }
    (output / "metrics.json").write_text(json.dumps(results, indent=2))
    print(f"Wrote the student preset to {output / 'preset'}", flush=True)
    sys.stdout.flush()
    return results
