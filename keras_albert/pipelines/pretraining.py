"""Corpus -> vocabulary -> instances -> pretrained ALBERT preset, resumable.

Each stage writes its output atomically and is skipped when a previous run
of the same command already produced it, so re-running a killed command
continues where it stopped: the vocabulary and the instance files are
reused, training resumes from the last checkpoint at the exact data
position, and the preset is written last.

Output layout:
    DIR/vocabulary.spm           SentencePiece model (ALBERT special ids)
    DIR/data/train-*.tfrecord    pretraining instances (Google's features);
                                 on JAX / PyTorch: data/train.npz
    DIR/data/eval.tfrecord       held-out instances (with --eval_corpus);
                                 on JAX / PyTorch: data/eval.npz
    DIR/settings.json            the settings the data was made with
    DIR/checkpoints/             tf.train checkpoints (weights, optimizer,
                                 step, RNG state); NumPy files off TensorFlow
    DIR/logs/                    TensorBoard logs
    DIR/preset/                  the keras_albert preset (backbone, MLM and
                                 sentence heads, tokenizer, preprocessor)
    DIR/metrics.json             final training and held-out metrics
    DIR/curve.jsonl              training and held-out metrics after every
                                 checkpoint interval, against tokens seen
    DIR/curve.png                that curve, plotted
"""

import glob
import itertools
import json
import os
import pathlib
import shutil
import sys
import time

import keras

from keras_albert.data.documents import read_documents
from keras_albert.data.pretraining_instances import create_pretraining_instances
from keras_albert.data.pretraining_instances import load_sentencepiece
from keras_albert.data.sentencepiece_training import train_sentencepiece
from keras_albert.data.teacher_embeddings import TeacherEmbeddings
from keras_albert.data.tokenized_corpus import read_tokenized_corpus
from keras_albert.editing.layer_groups import group_sources
from keras_albert.editing.layer_groups import with_layer_groups
from keras_albert.layers.sharing import validate_sharing
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_presets import OFFICIAL_PRESETS
from keras_albert.models.albert_pretrainer import AlbertPretrainer
from keras_albert.models.albert_pretrainer import check_sentence_task
from keras_albert.models.albert_pretrainer import pretraining_batch
from keras_albert.models.albert_text_classifier_preprocessor import (
    AlbertTextClassifierPreprocessor,
)
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.jit_default import pretraining_jit_compile
from keras_albert.pipelines import pretraining_inputs
from keras_albert.pipelines.pretraining_settings import PretrainingSettings  # noqa: F401 (re-export)
from keras_albert.pipelines.pretraining_settings import check_local_corpus
from keras_albert.pipelines.pretraining_settings import check_pretraining_numbers
from keras_albert.pipelines.pretraining_settings import checkpoint_interval
from keras_albert.pipelines.training_curves import plot_pretraining_curve
from keras_albert.presets.preset_resolution import bundled_presets
from keras_albert.presets.preset_resolution import bundled_presets_dir
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.training.batch_streams import stream_evaluate
from keras_albert.training.curve_log import CurveLog
from keras_albert.training.curve_log import read_curve
from keras_albert.training.lamb import AlbertLamb
from keras_albert.training.precision import configure_precision
from keras_albert.training.resumable_fit import resumable_fit
from keras_albert.training.schedules import WarmupLinearDecay
from keras_albert.training.time_budget import TimeBudget
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_file import write_file_atomically
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.regular_files import MiB
from keras_albert.utils.regular_files import read_regular_bytes
from keras_albert.utils.run_directory import check_run_outputs
from keras_albert.utils.run_directory import record_run_outputs
from keras_albert.utils.validation import check_finite_number

# Settings that shape the data; a re-run with other values must not reuse it.
DATA_SETTINGS = (
    "corpus",
    "document_boundary",
    "sentence_split",
    "vocabulary_size",
    "max_seq_length",
    "max_predictions_per_seq",
    "masked_lm_prob",
    "dupe_factor",
    "sentence_task",
    "num_shards",
    "seed",
    "eval_seed",
    "init_preset",
)

# Settings that shape the model; checkpoints of a run restore only into the
# same shapes (and a resumed run should be the same run), so they are kept
# in settings.json too and a resume with other values is refused.
MODEL_SETTINGS = ("config", "num_groups", "dropout")


# What a run writes in OUTPUT (logs/ only gains new event files).
RUN_OUTPUTS = (
    "vocabulary.spm", "settings.json", "data", "checkpoints", "preset",
    "metrics.json", "curve.jsonl", "curve.png",
)


def _pretraining_run(output):
    """A run written before runs were recorded: its settings.json holds the
    data settings this pipeline writes, not just any file of that name."""
    try:
        saved = json.loads(read_regular_bytes(output / "settings.json", max_bytes=MiB))
    except (OSError, ValueError):
        return False
    return isinstance(saved, dict) and set(DATA_SETTINGS) - {"eval_seed", "init_preset"} <= set(saved)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# Keras's own entries in a saved config, not AlbertBackbone arguments.
_NOT_SHAPE = ("name", "trainable", "dtype")


def _bundled_shape(name):
    """A bundled preset's backbone arguments, positions aside: a new model
    of that shape takes `max_seq_length` positions."""
    saved = json.loads((bundled_presets_dir() / name / "config.json").read_text(encoding="utf-8"))["config"]
    return {key: value for key, value in saved.items() if key not in (*_NOT_SHAPE, "max_sequence_length")}


def backbone_config(config, vocabulary_size, max_seq_length):
    """Backbone kwargs from an official preset name, a bundled preset's name
    (its shape, new weights), a JSON file or an inline object."""
    if config in OFFICIAL_PRESETS:
        values = dict(OFFICIAL_PRESETS[config]["config"])
    elif config in bundled_presets():
        values = _bundled_shape(config)
    elif isinstance(config, str) and config.lstrip().startswith("{"):
        values = _json_object(config, "the inline --config")
    elif isinstance(config, str) and os.path.isfile(config):
        with open(config, encoding="utf-8") as file:
            values = _json_object(file.read(), repr(config))
    else:
        raise ValueError(
            "`config` must be an official preset name "
            f"({sorted(OFFICIAL_PRESETS)}), a bundled preset's name ({sorted(bundled_presets())}), "
            "a JSON file or an inline JSON "
            f"object of AlbertBackbone arguments. Received: config={config!r}"
        )
    values["vocabulary_size"] = vocabulary_size
    values.setdefault("max_sequence_length", max_seq_length)
    if values["max_sequence_length"] < max_seq_length:
        raise ValueError(
            f"The config's max_sequence_length={values['max_sequence_length']} "
            f"is shorter than max_seq_length={max_seq_length}."
        )
    return values


def _json_object(text, where):
    try:
        values = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where} is not valid JSON: {error}") from None
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(values).__name__}.")
    return values


def _sentences(paths, settings):
    for document in read_documents(
        paths, settings.document_boundary, settings.sentence_split
    ):
        yield from document


def build_vocabulary(settings, path):
    if path.exists():
        log(f"vocabulary: reusing {path}")
        return path.read_bytes()
    if settings.init_preset:
        log(f"vocabulary: the SentencePiece model of {settings.init_preset}")
        proto = AlbertTokenizer.from_preset(settings.init_preset).proto
        write_file_atomically(path, proto)
        return proto
    log(f"vocabulary: training a {settings.vocabulary_size}-piece SentencePiece model")
    proto = train_sentencepiece(
        _sentences(settings.corpus, settings), settings.vocabulary_size, size_name="--vocab_size"
    )
    write_file_atomically(path, proto)
    return proto


def run_lowercase(settings):
    """Whether the run's tokenizer lowercases: a continued run keeps its
    preset's casing (a cased preset stays cased); a new vocabulary is uncased."""
    if not settings.init_preset:
        return True
    path = pathlib.Path(resolve_preset(settings.init_preset)) / "tokenizer.json"
    if not path.is_file():
        return True
    lowercase = json.loads(path.read_text(encoding="utf-8"))["config"].get("lowercase", True)
    if not isinstance(lowercase, bool):
        raise ValueError(
            f"Preset file {str(path)!r}: `lowercase` must be true or false. "
            f"Received: lowercase={lowercase!r:.80}"
        )
    return lowercase


def _documents(paths, settings, proto):
    """Text files through `read_documents`, or corpora tokenized earlier
    (`.npz` files of `tokenized_corpus`, what a GPU run receives)."""
    if _tokenized(paths):
        size = load_sentencepiece(proto).get_piece_size()
        files = [match for path in paths for match in sorted(glob.glob(os.fspath(path)))]
        return itertools.chain.from_iterable(read_tokenized_corpus(f, size) for f in files)
    return read_documents(paths, settings.document_boundary, settings.sentence_split)


def _tokenized(paths, name="corpus"):
    """True for tokenized corpora (.npz), False for text; refuses a mix."""
    kinds = {os.fspath(path).endswith(".npz") for path in paths}
    if len(kinds) > 1:
        raise ValueError(
            f"`{name}` mixes tokenized corpora (.npz) with text files; pass one kind. "
            f"Received: {[os.fspath(p) for p in paths]}"
        )
    return kinds == {True}


def _instances(paths, settings, proto, dupe_factor, seed):
    return create_pretraining_instances(
        _documents(paths, settings, proto),
        proto,
        lowercase=run_lowercase(settings),
        max_seq_length=settings.max_seq_length,
        max_predictions_per_seq=settings.max_predictions_per_seq,
        masked_lm_prob=settings.masked_lm_prob,
        sentence_task="sop" if settings.sentence_task == "none" else settings.sentence_task,
        dupe_factor=dupe_factor,
        seed=seed,
    )


def build_data(settings, proto, data_dir):
    """Writes (or reuses) the training and held-out instance files."""
    data_dir.mkdir(parents=True, exist_ok=True)
    pretraining_inputs.remove_partial_files(data_dir)
    train = pretraining_inputs.train_paths(settings, data_dir)
    if all(os.path.exists(path) for path in train):
        log(f"data: reusing {len(train)} files in {data_dir}")
    else:
        log("data: creating pretraining instances (n-gram masking, "
            f"{settings.sentence_task}, dupe_factor={settings.dupe_factor})")
        count = pretraining_inputs.write_instances(
            _instances(settings.corpus, settings, proto, settings.dupe_factor, settings.seed),
            train,
        )
        log(f"data: {count} training instances")
    eval_path = None
    if settings.eval_corpus:
        eval_path = pretraining_inputs.eval_path(data_dir)
        if not os.path.exists(eval_path):
            count = pretraining_inputs.write_instances(
                _instances(settings.eval_corpus, settings, proto, 1, eval_seed(settings)),
                eval_path,
            )
            log(f"data: {count} held-out instances")
    return train, eval_path


def eval_seed(settings):
    """The seed of the held-out instances: `eval_seed`, else `seed + 1`."""
    if settings.eval_seed is None:
        return settings.seed + 1
    if isinstance(settings.eval_seed, bool) or not isinstance(settings.eval_seed, int):
        raise ValueError(
            f"`eval_seed` must be an int or None. Received: eval_seed={settings.eval_seed!r}"
        )
    return settings.eval_seed


def model_dropout(settings):
    """`dropout`, checked: None (keep the config's or preset's) or a rate in [0, 1)."""
    rate = settings.dropout
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
        raise ValueError(
            f"`dropout` must be None or a rate in [0, 1). Received: dropout={rate!r}"
        )
    return float(rate)


def _with_dropout(backbone, rate):
    """The same backbone and weights with another dropout rate (fixed at build time)."""
    if (backbone.dropout, backbone.attention_dropout) == (rate, rate):
        return backbone
    rebuilt = AlbertBackbone.from_config(
        {**backbone.get_config(), "dropout": rate, "attention_dropout": rate}
    )
    rebuilt.set_weights(backbone.get_weights())
    return rebuilt


def _data_settings(settings):
    return {name: getattr(settings, name) for name in DATA_SETTINGS}


def _model_settings(settings):
    values = {name: getattr(settings, name) for name in MODEL_SETTINGS}
    if settings.init_preset:
        values["config"] = None  # the preset's config is used, not --config
    return values


def _as_flag(name, value):
    return f"no --{name}" if value is None else f"--{name}={value}"


def _check_model_settings(settings, previous, output):
    """Refuses to resume checkpoints with other model settings (else Keras
    fails on the first optimizer slot: "incompatible tensor ... adam_m")."""
    checkpoints = output / "checkpoints"
    if not checkpoints.is_dir() or not any(checkpoints.iterdir()):
        return
    # Runs written before these settings were recorded are not checked.
    changed = [
        (name, previous[name], value)
        for name, value in _model_settings(settings).items()
        if name in previous and previous[name] != value
    ]
    if changed:
        started = ", ".join(_as_flag(n, old) for n, old, _ in changed)
        now = ", ".join(_as_flag(n, new) for n, _, new in changed)
        advice = " and ".join(
            f"leave out --{n}" if old is None else f"pass --{n}={old}" for n, old, _ in changed
        )
        raise ValueError(
            f"{str(output)!r} holds checkpoints of a run started with {started} (this run: "
            f"{now}); to continue it, {advice}, or use a new --output directory."
        )


def _check_settings(settings, path):
    """Refuses settings that differ from those of the data already built.

    `data_complete` is false until the vocabulary and TFRecords are all
    written: a run that failed before (a bad corpus, say) binds nothing, and
    its partial data is discarded when the settings are corrected.
    """
    current = _data_settings(settings)
    if path.exists():
        previous = json.loads(path.read_text())
        if previous.get("objective", "mlm") != "mlm":
            raise ValueError(
                f"{str(path.parent)!r} holds a {previous['objective']} pretraining run; a masked-LM "
                "run needs a new --output directory."
            )
        _check_model_settings(settings, previous, path.parent)
        complete = previous.pop("data_complete", True)  # Older runs: complete.
        changed = {
            name: (previous.get(name), value)
            for name, value in current.items()
            if previous.get(name) != value
        }
        if changed and complete:
            details = ", ".join(f"{n}: {old!r} -> {new!r}" for n, (old, new) in changed.items())
            raise ValueError(
                f"{path.parent} holds a run made with other data settings "
                f"({details}). Use a new --output directory, or the same settings."
            )
        if not changed and complete:
            return
        if changed:
            log("data: discarding the unfinished data of a run with other settings")
            (path.parent / "vocabulary.spm").unlink(missing_ok=True)
            shutil.rmtree(path.parent / "data", ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomically(
        path, json.dumps({**current, **_model_settings(settings), "data_complete": False}, indent=2)
    )


def _mark_data_complete(settings, path):
    write_file_atomically(
        path,
        json.dumps(
            {**_data_settings(settings), **_model_settings(settings), "data_complete": True},
            indent=2,
        ),
    )


def initial_pretrainer(settings, sentence_embedding_dim=None):
    """The pretrainer `init_preset` holds, heads included when it has them."""
    preset = settings.init_preset
    pretrainer = AlbertPretrainer.from_preset(preset, sentence_task=settings.sentence_task)
    task_file = pathlib.Path(resolve_preset(preset)) / "task.json"
    if task_file.exists() and "AlbertPretrainer" in task_file.read_text():
        log(f"training: starting from {preset} (backbone and pretraining heads)")
    else:
        log(f"training: starting from {preset}'s backbone; it holds no "
            "pretraining heads, so they start from random weights")
    backbone = pretrainer.backbone
    rate = model_dropout(settings)
    if rate is not None:
        backbone = _with_dropout(backbone, rate)
    if settings.num_groups is not None:
        backbone = with_layer_groups(backbone, settings.num_groups)
    if backbone is not pretrainer.backbone or pretrainer.sentence_embedding_dim != sentence_embedding_dim:
        # Same weights and heads, with (or without) the embedding head, with
        # another dropout rate or more weight groups.
        extended = AlbertPretrainer(
            backbone, sentence_task=settings.sentence_task,
            sentence_embedding_dim=sentence_embedding_dim,
        )
        extended.masked_lm_head.set_weights(pretrainer.masked_lm_head.get_weights())
        if pretrainer.sentence_head is not None:
            extended.sentence_head.set_weights(pretrainer.sentence_head.get_weights())
        pretrainer = extended
    return pretrainer


def check_num_groups(settings):
    """Before any long work: `num_groups` suits the config or preset it changes."""
    if settings.num_groups is None:
        return
    if settings.init_preset:
        group_sources(_preset_config(settings.init_preset), settings.num_groups)
        return
    config = backbone_config(settings.config, 1, settings.max_seq_length)
    validate_sharing(
        config["num_layers"], settings.num_groups,
        config.get("num_inner_repetitions", 1), config.get("sharing", "all"),
    )


def _preset_config(preset):
    path = pathlib.Path(resolve_preset(preset)) / "config.json"
    return json.loads(path.read_text())["config"]


def check_init_preset(settings):
    """Before any long work: the preset exists and has the positions needed."""
    if not settings.init_preset:
        return
    length = _preset_config(settings.init_preset)["max_sequence_length"]
    if length < settings.max_seq_length:
        raise ValueError(
            f"`max_seq_length={settings.max_seq_length}` is longer than the "
            f"{length} positions of init_preset={settings.init_preset!r}."
        )


def _optimizer(settings):
    warmup = settings.warmup_steps
    if warmup is None:
        warmup = min(3125, settings.train_steps // 10)
    schedule = WarmupLinearDecay(
        peak_learning_rate=settings.learning_rate,
        warmup_steps=warmup,
        total_steps=settings.train_steps,
    )
    if settings.optimizer == "lamb":
        return AlbertLamb(learning_rate=schedule)
    if settings.optimizer == "adamw":
        return keras.optimizers.AdamW(
            learning_rate=schedule, weight_decay=0.01, global_clipnorm=1.0
        )
    raise ValueError(
        "`optimizer` must be 'lamb' or 'adamw'. "
        f"Received: optimizer={settings.optimizer!r}"
    )


def _teacher(settings):
    if not settings.teacher_embeddings:
        return None
    return TeacherEmbeddings(settings.teacher_embeddings, seed=settings.seed)


def _with_teacher(dataset, settings, teacher, tokenizer, training, skip_batches=0):
    if teacher is None:
        return dataset
    preprocessor = AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=settings.embedding_sequence_length
    )
    return teacher.add_to(dataset, preprocessor, settings.batch_size, training, skip_batches)


def _train_dataset(settings, files, replicas, teacher, tokenizer):
    return pretraining_inputs.train_stream(
        settings, files, replicas,
        lambda features: pretraining_batch(features, settings.sentence_task),
        lambda dataset, skip: _with_teacher(dataset, settings, teacher, tokenizer, True, skip),
        # The vocabulary trained, or init_preset's: --vocab_size may differ.
        vocabulary_size=tokenizer.vocabulary_size(),
    )


def save_preset(pretrainer, tokenizer, settings, preset_dir):
    """Writes the pretrainer (heads included), tokenizer and a preprocessor.

    The optimizer state stays in the checkpoints: the preset holds a fresh
    copy of the model with the trained weights, which keeps it small.
    """
    with atomic_directory(preset_dir) as staging:
        released = AlbertPretrainer.from_config(pretrainer.get_config())
        released.set_weights(pretrainer.get_weights())
        released.save_to_preset(staging)
        tokenizer.save_to_preset(staging)
        AlbertTextClassifierPreprocessor(
            tokenizer, sequence_length=settings.max_seq_length
        ).save_to_preset(staging)


def heldout_dataset(settings, eval_path, batch_size):
    return pretraining_inputs.heldout_stream(
        settings, eval_path, batch_size,
        lambda features: pretraining_batch(features, settings.sentence_task),
    )


def evaluate_heldout(pretrainer, settings, eval_path, batch_size, teacher=None, tokenizer=None):
    dataset = _with_teacher(
        heldout_dataset(settings, eval_path, batch_size), settings, teacher, tokenizer, False
    )
    return stream_evaluate(pretrainer)(dataset, return_dict=True, verbose=0)


def run_pretraining(settings):
    """Runs (or resumes) the whole pipeline; returns the metrics dict."""
    # Before the vocabulary and the data: their stages check these too, late.
    check_pretraining_numbers(settings)
    check_local_corpus(settings.corpus)
    if settings.objective != "mlm":
        # Imported here: that pipeline builds on this module's stages.
        from keras_albert.pipelines.causal_pretraining import run_causal_pretraining

        return run_causal_pretraining(settings)
    started = time.monotonic()
    budget = _time_budget(settings, started)
    check_sentence_task(settings.sentence_task)
    check_init_preset(settings)
    # Bad values fail here, not after the data is built.
    eval_seed(settings)
    model_dropout(settings)
    check_num_groups(settings)
    teacher = _teacher(settings)  # read and checked before any long work
    embedding_dim = teacher.dim if teacher else None
    check_eval_corpus(settings)
    _tokenized(settings.corpus)
    _tokenized(settings.eval_corpus or [], "eval_corpus")
    pretraining_inputs.check_backend_settings(settings)
    output = pathlib.Path(settings.output)
    check_run_outputs(output, RUN_OUTPUTS, legacy=_pretraining_run)
    output.mkdir(parents=True, exist_ok=True)
    record_run_outputs(output, RUN_OUTPUTS + ("logs",))
    _check_settings(settings, output / "settings.json")
    keras.utils.set_random_seed(settings.seed)
    proto = build_vocabulary(settings, output / "vocabulary.spm")
    tokenizer = AlbertTokenizer(proto=proto, lowercase=run_lowercase(settings))
    train_files, eval_path = build_data(settings, proto, output / "data")
    _mark_data_complete(settings, output / "settings.json")

    configure_precision(settings.precision)
    scope, replicas, strategy, description = pretraining_inputs.training_scope(settings)
    log(f"training: {description}, {replicas} replica(s)")
    jit_compile = pretraining_jit_compile(settings.jit_compile)
    if jit_compile and not pretraining_inputs.xla_allowed(strategy):
        log("training: XLA off (it cannot run replicas on logical CPU devices)")
        jit_compile = False
    log(f"training: jit_compile={jit_compile}")
    with scope:
        if settings.init_preset:
            pretrainer = initial_pretrainer(settings, embedding_dim)
            backbone = pretrainer.backbone
        else:
            config = backbone_config(
                settings.config, tokenizer.vocabulary_size(), settings.max_seq_length
            )
            rate = model_dropout(settings)
            if rate is not None:
                config.update(dropout=rate, attention_dropout=rate)
            if settings.num_groups is not None:
                config["num_groups"] = settings.num_groups
            backbone = AlbertBackbone(**config)
            pretrainer = AlbertPretrainer(
                backbone, sentence_task=settings.sentence_task,
                sentence_embedding_dim=embedding_dim,
            )
        pretrainer.compile(
            optimizer=_optimizer(settings),
            jit_compile=jit_compile,
            steps_per_execution=settings.steps_per_execution,
        )
    log(f"training: {backbone.count_params():,} backbone parameters")
    interval = checkpoint_interval(settings)
    log(f"training: a checkpoint every {interval} steps")
    history, first_step = resumable_fit(
        pretrainer,
        _train_dataset(settings, train_files, replicas, teacher, tokenizer),
        total_steps=settings.train_steps,
        # Keras's live bar in a terminal; one line per interval in a log
        # file (the live bar's redraws would fill it with escape codes).
        verbose=1 if sys.stdout.isatty() else 2,
        checkpoint_dir=output / "checkpoints",
        checkpoint_every=interval,
        callbacks=[
            *(pretraining_inputs.tensorboard_callbacks(output / "logs") if settings.tensorboard else []),
            CurveLog(output / "curve.jsonl", interval,
                     settings.batch_size * settings.max_seq_length),
            *([budget] if budget is not None else []),
        ],
        validation_data=(
            _with_teacher(heldout_dataset(settings, eval_path, settings.batch_size),
                          settings, teacher, tokenizer, False)
            if eval_path else None
        ),
    )
    if first_step:
        log(f"training: resumed at step {first_step}")
    metrics = {"train_steps": settings.train_steps}
    if budget is not None and budget.stopped_early:
        step = int(keras.ops.convert_to_numpy(pretrainer.optimizer.iterations))
        metrics["stopped_by_time_budget_at_step"] = step
        log(f"training: stopped at step {step} of {settings.train_steps} to stay within "
            f"--time_budget_minutes={settings.time_budget_minutes:g}; the same command continues")
    if history is not None:
        metrics["train"] = {k: float(v[-1]) for k, v in history.history.items()}
    if eval_path:
        metrics["heldout"] = evaluate_heldout(
            pretrainer, settings, eval_path, settings.batch_size, teacher, tokenizer
        )
        log(f"held-out: {json.dumps(metrics['heldout'])}")
    save_preset(pretrainer, tokenizer, settings, output / "preset")
    if (output / "curve.jsonl").exists():
        plot_pretraining_curve(
            read_curve(output / "curve.jsonl"), output / "curve.png",
            title=f"pretraining {output.name} (held-out: eval corpus)",
        )
    write_file_atomically(output / "metrics.json", json.dumps(metrics, indent=2))
    log(f"preset written to {output / 'preset'}")
    return metrics


def _corpus_files(patterns):
    """{identity: file} of what `patterns` match, as `read_documents` reads them."""
    files = {}
    for pattern in [patterns] if isinstance(patterns, (str, os.PathLike)) else patterns:
        pattern = os.fspath(pattern)
        if "://" in pattern:
            files.update((m, m) for m in _remote_glob(pattern))
            continue
        matches = glob.glob(pattern) or ([pattern] if os.path.isfile(pattern) else [])
        files.update((os.path.realpath(m), m) for m in matches if os.path.isfile(m))
    return files


def check_eval_corpus(settings):
    """Refuses held-out text that `corpus` also trains on: its held-out
    metrics would measure memory, not generalisation."""
    if not settings.eval_corpus:
        return
    train = _corpus_files(settings.corpus)
    shared = sorted(f for key, f in _corpus_files(settings.eval_corpus).items() if key in train)
    if shared:
        raise ValueError(
            f"`eval_corpus` file {shared[0]!r}{f' (and {len(shared) - 1} more)' if len(shared) > 1 else ''} "
            f"is also matched by `corpus` {list(settings.corpus)!r}: the held-out text would be "
            "trained on and its metrics would mean nothing. Leave it out of --corpus (list the "
            "training files, or use a pattern that does not match it)."
        )


def expand_corpus(patterns, name="corpus"):
    """Checks that every pattern names at least one file."""
    if not patterns:
        raise ValueError(f"`{name}` must name at least one file. Received: {patterns!r}")
    for pattern in patterns:
        if not ((_remote_glob(pattern) if "://" in pattern else []) or glob.glob(pattern)):
            raise FileNotFoundError(f"`{name}` entry {pattern!r} matches no file.")
    return list(patterns)


def _remote_glob(pattern):
    """`gs://` and other remote patterns, through TensorFlow's file system."""
    tf = require_tensorflow(f"Remote corpus paths ({pattern!r})", backend_too=False)
    return tf.io.gfile.glob(pattern)


# Held-out evaluation, the preset and the curve after training.
_TIME_BUDGET_RESERVE_SECONDS = 90.0


def _time_budget(settings, started):
    """The wall-time budget of the run (None: no budget), counted from
    `started` so that preparing data counts too."""
    minutes = settings.time_budget_minutes
    if minutes is None:
        return None
    check_finite_number("time_budget_minutes", minutes, strictly_greater=True)
    seconds = minutes * 60.0
    if seconds <= _TIME_BUDGET_RESERVE_SECONDS:
        raise ValueError(
            f"`time_budget_minutes` must leave more than {_TIME_BUDGET_RESERVE_SECONDS:g} s for "
            f"the held-out evaluation and the preset. Received: time_budget_minutes={minutes!r}"
        )
    return TimeBudget(seconds, _TIME_BUDGET_RESERVE_SECONDS, start=started)
