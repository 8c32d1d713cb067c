"""Distill a small student from an ALBERT teacher preset.

`run_distillation(DistillationSettings(...))` is what `python -m
keras_albert distill` runs. The teacher's tokenizer turns the corpus into
masked-LM instances (OUTPUT/data); the student learns the teacher's layer
outputs (feature-map transfer), attention maps (attention transfer) and
masked-LM predictions mixed with the true tokens (pre-training
distillation), optionally layer by layer first (`steps_per_stage`). The
student preset (MLM head, tokenizer, preprocessor) is written atomically to
OUTPUT/preset, with OUTPUT/metrics.json and TensorBoard logs in OUTPUT/logs
(where TensorFlow, whose summary writer they need, is installed).

Runs on every backend, as `run_pretraining` does: TFRecords, tf.data and a
tf.distribute strategy on TensorFlow; a NumPy instance file
(OUTPUT/data/*.npz) and one device or `keras.distribution` on JAX and
PyTorch.
"""

import contextlib
import json
import math
import pathlib
import sys
import time

import keras

from keras_albert.distill.distillation_data import distillation_dataset
from keras_albert.distill.distillation_data import write_distillation_records
from keras_albert.distill.distiller import Distiller
from keras_albert.distill.student import build_student
from keras_albert.distill.student import parse_student_config
from keras_albert.distill.student import save_student_preset
from keras_albert.models.albert_masked_lm import AlbertMaskedLM
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.jit_default import pretraining_jit_compile
from keras_albert.pipelines.distillation_settings import DistillationSettings  # noqa: F401 (re-export)
from keras_albert.pipelines.pretraining import expand_corpus
from keras_albert.pipelines.pretraining_inputs import uses_tfrecords
from keras_albert.training.optimizers import warmup_decay_optimizer
from keras_albert.training.optimizers import warmup_steps_for
from keras_albert.training.scope import STRATEGY_NAMES
from keras_albert.training.scope import check_strategy_for_backend
from keras_albert.training.scope import resolve_training
from keras_albert.utils.backend import tensorflow_available


def _layer_map(layer_map):
    """A JSON object (as the flag gives it) or a dict -> {int: teacher}."""
    if layer_map is None or isinstance(layer_map, (list, tuple)):
        return layer_map
    if isinstance(layer_map, str):
        try:
            parsed = json.loads(layer_map)
        except json.JSONDecodeError:
            raise ValueError(f"`--layer_map` must be a JSON object. Received: {layer_map!r}")
    else:
        parsed = layer_map
    if not isinstance(parsed, dict):
        raise ValueError(f"`--layer_map` must be a JSON object. Received: {layer_map!r}")
    try:
        return {int(k): v for k, v in parsed.items()}
    except ValueError:
        raise ValueError(f"`--layer_map` keys must be integers. Received: {layer_map!r}")


def check_distillation_settings(settings):
    """Fails on a bad value before the teacher is loaded; messages name
    the flag, the value and what is accepted. Returns `(output path,
    layer map)`."""
    if settings.strategy not in STRATEGY_NAMES:
        raise ValueError(f"`--strategy` must be one of {STRATEGY_NAMES}. Received: {settings.strategy!r}")
    check_strategy_for_backend(settings.strategy)
    for name in ("batch_size", "sequence_length", "max_predictions_per_seq",
                 "dupe_factor", "log_every", "shuffle_buffer_size"):
        if getattr(settings, name) < 1:
            raise ValueError(f"`--{name}` must be a positive integer. Received: {getattr(settings, name)}")
    for name in ("train_steps", "steps_per_stage"):
        if getattr(settings, name) < 0:
            raise ValueError(f"`--{name}` must be >= 0. Received: {getattr(settings, name)}")
    if settings.train_steps + settings.steps_per_stage == 0:
        raise ValueError("`--train_steps` and `--steps_per_stage` are both 0: nothing to train.")
    if settings.warmup_steps is not None and settings.warmup_steps < 0:
        raise ValueError(f"`--warmup_steps` must be >= 0. Received: {settings.warmup_steps}")
    if not settings.learning_rate > 0:
        raise ValueError(f"`--learning_rate` must be > 0. Received: {settings.learning_rate}")
    if not settings.temperature > 0:
        raise ValueError(f"`--temperature` must be > 0. Received: {settings.temperature}")
    if not 0 <= settings.alpha <= 1:
        raise ValueError(f"`--alpha` must be in [0, 1]. Received: {settings.alpha}")
    for name in ("feature_weight", "attention_weight", "mlm_weight"):
        if not getattr(settings, name) >= 0:
            raise ValueError(f"`--{name}` must be >= 0. Received: {getattr(settings, name)}")
    output = pathlib.Path(settings.output)
    if output.exists() and not output.is_dir():
        raise ValueError(f"`--output` {str(output)!r} exists and is a file.")
    return output, _layer_map(settings.layer_map)


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


def _fit_stage(distiller, dataset, stage, steps, settings, optimizer, logs_dir):
    distiller.set_stage(stage)
    distiller.compile(optimizer=optimizer, jit_compile=pretraining_jit_compile(settings.jit_compile))
    label = "final" if stage is None else f"stage {stage + 1}/{distiller.num_stages}"
    callbacks = [_Progress(label, steps)]
    if logs_dir is not None:
        # One directory per stage: each stage counts its epochs from 0.
        name = "final" if stage is None else f"stage_{stage + 1}"
        callbacks.append(keras.callbacks.TensorBoard(log_dir=str(logs_dir / name), write_graph=False))
    chunk = min(settings.log_every, steps)
    history = distiller.fit(dataset, epochs=math.ceil(steps / chunk), steps_per_epoch=chunk,
                            verbose=0, callbacks=callbacks, shuffle=False)
    return {k: [float(v) for v in values] for k, values in history.history.items()}


def _optimizer(settings, steps):
    warmup = settings.warmup_steps if settings.warmup_steps is not None else warmup_steps_for(steps)
    return warmup_decay_optimizer(settings.learning_rate, steps, min(warmup, steps), global_clipnorm=1.0)


def _scope(strategy):
    # No strategy off TensorFlow: Keras places the step itself there.
    return strategy.scope() if strategy is not None else contextlib.nullcontext()


def run_distillation(settings):
    """Distills a student; returns the results dict it writes to
    OUTPUT/metrics.json (`preset`, `stages`, parameter counts, ...)."""
    output, layer_map = check_distillation_settings(settings)
    corpus = expand_corpus(settings.corpus)
    student_config = parse_student_config(settings.student_config)
    keras.utils.set_random_seed(settings.seed)
    print(f"Loading the teacher {settings.teacher!r}", flush=True)
    tokenizer = AlbertTokenizer.from_preset(settings.teacher)
    _, strategy = resolve_training(settings.strategy)
    with _scope(strategy):
        teacher = AlbertMaskedLM.from_preset(settings.teacher)
        if settings.sequence_length > teacher.backbone.max_sequence_length:
            raise ValueError(
                f"`--sequence_length` must be <= the teacher's max_sequence_length "
                f"{teacher.backbone.max_sequence_length}. Received: {settings.sequence_length}")
        student = build_student(student_config, teacher.backbone)
        distiller = Distiller(
            teacher, student, layer_map=layer_map, feature_weight=settings.feature_weight,
            attention_weight=settings.attention_weight, mlm_weight=settings.mlm_weight,
            alpha=settings.alpha, temperature=settings.temperature)
    print(f"Teacher {teacher.backbone.count_params():,} parameters; student "
          f"{student.backbone.count_params():,}; layer map {distiller.layer_map}", flush=True)
    output.mkdir(parents=True, exist_ok=True)
    data_dir = pathlib.Path(settings.data_dir) if settings.data_dir else output / "data"
    suffix = ".tfrecord" if uses_tfrecords() else ".npz"
    data = data_dir / (f"train-seq{settings.sequence_length}-pred{settings.max_predictions_per_seq}"
                       f"-dupe{settings.dupe_factor}-seed{settings.seed}{suffix}")
    data_dir.mkdir(parents=True, exist_ok=True)
    print(f"Data: masked-LM instances from {len(corpus)} corpus file(s) in {data}", flush=True)
    count = write_distillation_records(
        corpus, tokenizer.proto, str(data), max_seq_length=settings.sequence_length,
        max_predictions_per_seq=settings.max_predictions_per_seq,
        dupe_factor=settings.dupe_factor, seed=settings.seed)
    print(f"Data: {'reused ' if count is None else f'{count} instances in '}{data}", flush=True)
    per_replica = settings.batch_size // (strategy.num_replicas_in_sync if strategy else 1)
    dataset = distillation_dataset(str(data), per_replica, seed=settings.seed,
                                   shuffle_buffer_size=settings.shuffle_buffer_size)
    stages = [(s, settings.steps_per_stage) for s in range(distiller.num_stages)] if settings.steps_per_stage else []
    stages += [(None, settings.train_steps)] if settings.train_steps else []
    logs_dir = output / "logs" if settings.tensorboard else None
    if logs_dir is not None and not tensorflow_available():
        print("TensorBoard logs: not written (TensorFlow's summary writer is not installed)", flush=True)
        logs_dir = None
    histories = []
    started = time.time()
    with _scope(strategy):
        for stage, steps in stages:
            history = _fit_stage(
                distiller, dataset, stage, steps, settings, _optimizer(settings, steps), logs_dir)
            histories.append({"stage": stage, "steps": steps, "history": history})
    distiller.set_stage(None)
    save_student_preset(student, tokenizer, output / "preset", settings.sequence_length)
    results = {
        "teacher": settings.teacher,
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
