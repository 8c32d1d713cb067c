"""`pretrain --objective=causal_lm`: corpus -> windows -> AlbertCausalLM preset.

The MLM pipeline's stages and guarantees (issue 37, item 2): the same
corpus tools (text files, or `.npz` corpora of `data/tokenized_corpus`),
the vocabulary trained or taken from `init_preset`, held-out text kept out
of training, exact resume after a kill (`resumable_fit`), a curve and
metrics. The data differs: documents packed into windows of
`max_seq_length` tokens (`data/causal_windows`), one NumPy file per split
on every backend. The loss is the mean cross-entropy over real target
tokens (`mean_with_sample_weight`: Keras's default divides by padding too).

Output layout (beside the MLM run's vocabulary.spm, settings.json,
checkpoints/, logs/, curve.*):
    DIR/data/causal_train.npz   training windows
    DIR/data/causal_eval.npz    held-out windows (with --eval_corpus)
    DIR/preset/                 an AlbertCausalLM preset (backbone, tokenizer,
                                preprocessor): `AlbertCausalLM.from_preset`
                                and `python -m keras_albert generate` load it
    DIR/metrics.json            training loss, held-out loss per token and
                                perplexity
"""

import json
import math
import pathlib
import sys
import time

import keras
import numpy as np

from keras_albert.data.causal_windows import CausalWindowBatches
from keras_albert.data.causal_windows import document_stream
from keras_albert.data.causal_windows import pack_windows
from keras_albert.data.causal_windows import read_windows
from keras_albert.data.causal_windows import write_windows
from keras_albert.data.pretraining_instances import tokenize_documents
from keras_albert.editing.layer_groups import with_layer_groups
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_causal_lm import AlbertCausalLM
from keras_albert.models.albert_causal_lm_preprocessor import AlbertCausalLMPreprocessor
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.jit_default import pretraining_jit_compile
from keras_albert.pipelines import pretraining as mlm
from keras_albert.pipelines import pretraining_inputs
from keras_albert.pipelines.pretraining_settings import checkpoint_interval
from keras_albert.pipelines.training_curves import _pyplot_or_warn
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.training.curve_log import CurveLog
from keras_albert.training.curve_log import read_curve
from keras_albert.training.precision import configure_precision
from keras_albert.training.resumable_fit import resumable_fit
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_file import write_file_atomically
from keras_albert.utils.run_directory import check_run_outputs
from keras_albert.utils.run_directory import record_run_outputs

OBJECTIVES = ("mlm", "causal_lm")

# Settings that shape the windows; a re-run with other values must not reuse them.
DATA_SETTINGS = (
    "objective", "corpus", "document_boundary", "sentence_split", "vocabulary_size",
    "max_seq_length", "init_preset",
)

log = mlm.log


def check_objective(settings):
    """The objective is known, and no MLM-only setting comes with causal_lm."""
    if settings.objective not in OBJECTIVES:
        raise ValueError(
            f"`objective` must be one of {list(OBJECTIVES)}. Received: objective={settings.objective!r}"
        )
    if settings.objective != "causal_lm":
        return
    for name, given in (
        ("dynamic_masking", settings.dynamic_masking),
        ("teacher_embeddings", settings.teacher_embeddings is not None),
    ):
        if given:
            raise ValueError(
                f"`{name}` is a masked-LM setting; objective='causal_lm' predicts every next "
                f"token and takes none. Received: objective='causal_lm', {name}={getattr(settings, name)!r}"
            )


def _token_documents(paths, settings, proto):
    """Each document's ids: `.npz` corpora as stored, text tokenized here."""
    if mlm._tokenized(paths):
        documents = mlm._documents(paths, settings, proto)
    else:
        documents = tokenize_documents(
            mlm._documents(paths, settings, proto), proto, lowercase=mlm.run_lowercase(settings)
        )
    return (document.token_ids for document in documents)


def build_windows(settings, proto, tokenizer, data_dir):
    """Writes (or reuses) the training and held-out windows."""
    data_dir.mkdir(parents=True, exist_ok=True)
    pretraining_inputs.remove_partial_files(data_dir)
    paths = {"train": data_dir / "causal_train.npz"}
    if settings.eval_corpus:
        paths["eval"] = data_dir / "causal_eval.npz"
    corpora = {"train": settings.corpus, "eval": settings.eval_corpus}
    for split, path in paths.items():
        if path.exists():
            log(f"data: reusing {path}")
            continue
        stream = document_stream(
            _token_documents(corpora[split], settings, proto),
            tokenizer.start_token_id, tokenizer.end_token_id,
        )
        count = write_windows(pack_windows(stream, settings.max_seq_length), path)
        log(f"data: {count} {split} windows of {settings.max_seq_length} tokens "
            f"({stream.size:,} tokens)")
    return paths["train"], paths.get("eval")


def _check_settings(settings, path):
    """Refuses a directory of another objective or other data settings
    (unfinished data is discarded, as in the MLM pipeline)."""
    current = {name: getattr(settings, name) for name in DATA_SETTINGS}
    if path.exists():
        previous = json.loads(path.read_text())
        if previous.get("objective", "mlm") != "causal_lm":
            raise ValueError(
                f"{str(path.parent)!r} holds a masked-LM pretraining run; a causal_lm run needs "
                "a new --output directory."
            )
        mlm._check_model_settings(settings, previous, path.parent)
        changed = {n: (previous.get(n), v) for n, v in current.items() if previous.get(n) != v}
        if changed and previous.get("data_complete", True):
            details = ", ".join(f"{n}: {old!r} -> {new!r}" for n, (old, new) in changed.items())
            raise ValueError(
                f"{path.parent} holds a run made with other data settings ({details}). "
                "Use a new --output directory, or the same settings."
            )
        if not changed and previous.get("data_complete", True):
            return
        if changed:
            log("data: discarding the unfinished data of a run with other settings")
            (path.parent / "vocabulary.spm").unlink(missing_ok=True)
            for stale in (path.parent / "data").glob("causal_*.npz"):
                stale.unlink()
    _write_settings(settings, path, complete=False)


def _write_settings(settings, path, complete):
    values = {name: getattr(settings, name) for name in DATA_SETTINGS}
    values.update(mlm._model_settings(settings), data_complete=complete)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomically(path, json.dumps(values, indent=2))


def initial_causal_lm(settings):
    """`init_preset`'s weights as a causal LM: a causal preset as it is
    (its output projection too), a bidirectional one's backbone with
    `causal=True` (the same weights; the output projection starts new)."""
    preset = settings.init_preset
    task_file = pathlib.Path(resolve_preset(preset)) / "task.json"
    if task_file.exists() and "AlbertCausalLM" in task_file.read_text():
        causal_lm = AlbertCausalLM.from_preset(preset, preprocessor=None)
        log(f"training: starting from {preset} (causal backbone and output projection)")
    else:
        encoder = AlbertBackbone.from_preset(preset)
        backbone = AlbertBackbone.from_config({**encoder.get_config(), "causal": True})
        backbone.set_weights(encoder.get_weights())
        causal_lm = AlbertCausalLM(backbone)
        log(f"training: starting from {preset}'s bidirectional backbone, now causal; the "
            "output projection starts from random weights")
    backbone = causal_lm.backbone
    rate = mlm.model_dropout(settings)
    if rate is not None:
        backbone = mlm._with_dropout(backbone, rate)
    if settings.num_groups is not None:
        backbone = with_layer_groups(backbone, settings.num_groups)
    if backbone is not causal_lm.backbone:
        rebuilt = AlbertCausalLM(backbone)
        rebuilt.lm_head.set_weights(causal_lm.lm_head.get_weights())
        causal_lm = rebuilt
    return causal_lm


def _new_causal_lm(settings, tokenizer):
    config = mlm.backbone_config(settings.config, tokenizer.vocabulary_size(), settings.max_seq_length)
    rate = mlm.model_dropout(settings)
    if rate is not None:
        config.update(dropout=rate, attention_dropout=rate)
    if settings.num_groups is not None:
        config["num_groups"] = settings.num_groups
    config["causal"] = True
    return AlbertCausalLM(AlbertBackbone(**config))


def causal_lm_loss():
    """Cross-entropy summed over the real targets of a batch and divided by
    their count (the default reduction divides by every position)."""
    return keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="mean_with_sample_weight"
    )


def heldout_loss(model, windows, batch_size):
    """`{"loss_per_token", "perplexity", "tokens"}` over every real target
    of `windows`, summed exactly (not a mean of batch means)."""
    total, count = 0.0, 0.0
    for x, y, weights in CausalWindowBatches(windows, batch_size, is_training=False):
        # The log-softmax in float32 on the backend (the accelerator): a
        # batch of 512 windows has 2 GB of logits, and float64 NumPy over
        # them took about 20 s a batch, at every checkpoint of a GPU run.
        # Only each target's log-probability comes back; sums are float64.
        logits = keras.ops.cast(model.predict_on_batch(x), "float32")
        targets = keras.ops.convert_to_tensor(y[..., None].astype(np.int32))
        chosen = keras.ops.take_along_axis(keras.ops.log_softmax(logits, axis=-1), targets, axis=-1)[..., 0]
        chosen = np.asarray(keras.ops.convert_to_numpy(chosen), np.float64)
        total -= float((chosen * weights).sum())
        count += float(weights.sum())
    loss = total / count
    return {"loss_per_token": loss, "perplexity": math.exp(loss), "tokens": int(count)}


class _HeldOutLoss(keras.callbacks.Callback):
    """Adds the held-out loss per token and perplexity to each interval's
    logs (placed before `CurveLog`, which writes them)."""

    def __init__(self, windows, batch_size):
        super().__init__()
        self.windows, self.batch_size = windows, batch_size

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            result = heldout_loss(self.model, self.windows, self.batch_size)
            logs["heldout_loss_per_token"] = result["loss_per_token"]
            logs["heldout_perplexity"] = result["perplexity"]


def plot_causal_curve(rows, path, name):
    """Training loss and held-out loss per token against tokens seen; writes
    nothing without matplotlib."""
    plt = _pyplot_or_warn(path)
    if plt is None:
        return
    figure, axis = plt.subplots(figsize=(5, 3.8))
    for key, label, style in (("loss", "training", "-"), ("heldout_loss_per_token", "held-out", "o-")):
        points = [(row["tokens"] / 1e6, row[key]) for row in rows if key in row]
        if points:
            axis.plot(*zip(*points), style, label=label, markersize=3)
    axis.set(title=f"causal LM pretraining {name}", xlabel="tokens seen (millions)",
             ylabel="cross-entropy (nats per token)")
    axis.grid(alpha=0.3)
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def save_causal_preset(causal_lm, tokenizer, settings, preset_dir):
    with atomic_directory(preset_dir) as staging:
        backbone = AlbertBackbone.from_config(causal_lm.backbone.get_config())
        preprocessor = AlbertCausalLMPreprocessor(tokenizer, sequence_length=settings.max_seq_length)
        released = AlbertCausalLM(backbone, preprocessor=preprocessor)
        released.set_weights(causal_lm.get_weights())
        released.save_to_preset(staging)


def run_causal_pretraining(settings):
    """Runs (or resumes) `pretrain --objective=causal_lm`; returns the metrics."""
    started = time.monotonic()
    check_objective(settings)
    budget = mlm._time_budget(settings, started)
    mlm.check_init_preset(settings)
    mlm.model_dropout(settings)
    mlm.check_num_groups(settings)
    mlm.check_eval_corpus(settings)
    mlm._tokenized(settings.corpus)
    mlm._tokenized(settings.eval_corpus or [], "eval_corpus")
    pretraining_inputs.check_backend_settings(settings)
    output = pathlib.Path(settings.output)
    check_run_outputs(output, mlm.RUN_OUTPUTS, legacy=mlm._pretraining_run)
    output.mkdir(parents=True, exist_ok=True)
    record_run_outputs(output, mlm.RUN_OUTPUTS + ("logs",))
    _check_settings(settings, output / "settings.json")
    keras.utils.set_random_seed(settings.seed)
    proto = mlm.build_vocabulary(settings, output / "vocabulary.spm")
    tokenizer = AlbertTokenizer(proto=proto, lowercase=mlm.run_lowercase(settings))
    train_path, eval_path = build_windows(settings, proto, tokenizer, output / "data")
    _write_settings(settings, output / "settings.json", complete=True)
    train_windows = read_windows(train_path)
    eval_windows = read_windows(eval_path) if eval_path else None

    configure_precision(settings.precision)
    scope, replicas, strategy, description = pretraining_inputs.training_scope(settings)
    log(f"training: {description}, {replicas} replica(s)")
    if settings.batch_size % replicas:
        raise ValueError(
            f"`batch_size={settings.batch_size}` must be a multiple of the {replicas} replicas "
            "of the strategy."
        )
    jit_compile = pretraining_jit_compile(settings.jit_compile) and pretraining_inputs.xla_allowed(strategy)
    log(f"training: jit_compile={jit_compile}")
    with scope:
        causal_lm = initial_causal_lm(settings) if settings.init_preset else _new_causal_lm(settings, tokenizer)
        # A plain functional model over the same layers: Keras's own `fit`
        # on every backend (keras-hub's would route the stream through its
        # preprocessing), checkpointed like the MLM pretrainer.
        model = keras.Model(causal_lm.inputs, causal_lm.outputs, name="causal_lm_training")
        model.compile(
            optimizer=mlm._optimizer(settings),
            loss=causal_lm_loss(),
            jit_compile=jit_compile,
            steps_per_execution=settings.steps_per_execution,
        )
    log(f"training: {causal_lm.backbone.count_params():,} backbone parameters")
    interval = checkpoint_interval(settings)
    log(f"training: a checkpoint every {interval} steps")
    batches = CausalWindowBatches(train_windows, settings.batch_size, seed=settings.seed)
    history, first_step = resumable_fit(
        model,
        lambda skip: iter(batches.skipping(skip)),
        total_steps=settings.train_steps,
        verbose=1 if sys.stdout.isatty() else 2,
        checkpoint_dir=output / "checkpoints",
        checkpoint_every=interval,
        callbacks=[
            *(pretraining_inputs.tensorboard_callbacks(output / "logs") if settings.tensorboard else []),
            *([_HeldOutLoss(eval_windows, settings.batch_size)] if eval_windows else []),
            # Tokens seen: every input position of a batch (padding only in
            # the corpus's last window).
            CurveLog(output / "curve.jsonl", interval,
                     settings.batch_size * settings.max_seq_length),
            *([budget] if budget is not None else []),
        ],
    )
    if first_step:
        log(f"training: resumed at step {first_step}")
    metrics = {"objective": "causal_lm", "train_steps": settings.train_steps}
    if budget is not None and budget.stopped_early:
        step = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
        metrics["stopped_by_time_budget_at_step"] = step
        log(f"training: stopped at step {step} of {settings.train_steps} to stay within "
            f"--time_budget_minutes={settings.time_budget_minutes:g}; the same command continues")
    if history is not None:
        metrics["train"] = {k: float(v[-1]) for k, v in history.history.items()
                            if not k.startswith("heldout_")}
    if eval_windows is not None:
        metrics["heldout"] = heldout_loss(model, eval_windows, settings.batch_size)
        log(f"held-out: {json.dumps(metrics['heldout'])}")
    save_causal_preset(causal_lm, tokenizer, settings, output / "preset")
    if (output / "curve.jsonl").exists():
        plot_causal_curve(read_curve(output / "curve.jsonl"), output / "curve.png", output.name)
    write_file_atomically(output / "metrics.json", json.dumps(metrics, indent=2))
    log(f"preset written to {output / 'preset'}")
    return metrics

