"""keras-hub ALBERT preset directories <-> keras_albert presets.

The official ALBERT v2 presets are published in keras-hub's format; this is
what lets `keras_albert.AlbertClassifier.from_preset("albert_base_en_uncased")`
use them. Registered with `keras_albert.presets.preset_resolution` on import.
keras-hub's weight keys are positional, so both directions go through its
`AlbertBackbone` class. A fine-tuned `AlbertTextClassifier` travels whole
both ways: head, dropout, activation, packed length, and class names in
`labels.txt` (see `keras_hub_tasks`). keras-hub has no SOP head, so the
pretraining heads stay behind, and only configs keras-hub can express go
back.
"""

import json
import logging
import os
import pathlib
import warnings

from keras_albert.convert.converted_preset import check_destination
from keras_albert.convert.converted_preset import check_source
from keras_albert.convert.converted_preset import preset_vocabulary
from keras_albert.convert.keras_hub_tasks import KERAS_HUB_CLASSIFIER
from keras_albert.convert.keras_hub_tasks import classifier_from_keras_hub
from keras_albert.convert.keras_hub_tasks import keras_hub_classifier_from_ours
from keras_albert.convert.keras_hub_tasks import packed_length
from keras_albert.convert.keras_hub_tasks import preset_label_names
from keras_albert.convert.keras_hub_tasks import preset_task_name
from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights
from keras_albert.convert.keras_hub_weights import keras_hub_config_to_ours
from keras_albert.convert.keras_hub_weights import set_keras_hub_backbone_weights
from keras_albert.convert.tf1_names import get_backbone_weights
from keras_albert.convert.tf1_names import set_backbone_weights
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_classifier import AlbertClassifier
from keras_albert.models.albert_masked_lm import AlbertMaskedLM
from keras_albert.models.albert_pretrainer import AlbertPretrainer
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.presets.preset_resolution import register_foreign_preset_converter
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.presets.preset_validation import check_preset_directory
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.label_file import write_label_file
from keras_albert.utils.progress import logged_step

_KERAS_HUB_BACKBONE = "keras_hub>AlbertBackbone"
_logger = logging.getLogger(__name__)
# Our tasks whose preset loads as its backbone for keras-hub: their heads
# are pretraining heads keras-hub cannot hold exactly (no SOP head; its MLM
# head normalises with epsilon 1e-5, Google's with 1e-12).
_BACKBONE_ONLY_TASKS = ("keras_albert>AlbertPretrainer", "keras_albert>AlbertMaskedLM")
# keras-hub's AlbertBackbone implements only these values of our arguments.
_KERAS_HUB_FIXED = {
    "sharing": "all",
    "attention": "full",
    "activation": "gelu_approximate",
    "layer_norm_epsilon": 1e-12,
    "normalization": "layer_norm",
    "bottleneck_dim": None,
    "num_feedforward_stacks": 1,
    "embedding_type": "factorized",
    "reversible": False,
}


def is_keras_hub_albert_preset(path):
    config = pathlib.Path(path) / "config.json"
    try:
        return json.loads(config.read_text()).get("registered_name") == (
            _KERAS_HUB_BACKBONE
        )
    except (OSError, ValueError):
        return False


def _our_backbone(source, src):
    backbone = AlbertBackbone(**keras_hub_config_to_ours(source.get_config()))
    set_backbone_weights(
        backbone,
        keras_hub_backbone_weights(source),
        source=f"keras-hub preset {str(src)!r}",
    )
    return backbone


def from_keras_hub_preset(src, dst, overwrite=False):
    """Writes a keras_albert preset for the keras-hub ALBERT preset `src`.

    A backbone preset becomes a backbone + tokenizer preset. An
    `AlbertTextClassifier` preset becomes an `AlbertClassifier` preset with
    its trained head, dropout, activation and packed length, and the class
    names of `src/labels.txt` if present (see `to_keras_hub_preset`), so
    `AlbertClassifier.from_preset(dst)` predicts as keras-hub did. The
    vocabulary is lowercased as Google's uncased models expect (keras-hub's
    tokenizer does not lowercase). The directory appears whole or not at
    all: it is written next to `dst` and renamed into place once complete.

    Example:
    >>> from_keras_hub_preset("keras_hub_classifier/", "ours/")  # doctest: +SKIP
    'ours/'
    """
    import keras_hub

    check_destination(dst, overwrite)
    check_source(src)
    if not is_keras_hub_albert_preset(src):
        # keras-hub would try to read it as a Hugging Face or timm checkpoint.
        raise ValueError(
            f"`src` {str(src)!r} is not a keras-hub ALBERT preset: its "
            f"config.json must name registered_name={_KERAS_HUB_BACKBONE!r} "
            "(for a Hugging Face directory use --from=hf)."
        )
    # Before keras-hub deserializes any class the preset names.
    check_preset_directory(src, weights=True)
    task_name = preset_task_name(src)
    vocabulary = preset_vocabulary(src)
    # The official vocabularies are uncased: lowercase as Google did.
    tokenizer = AlbertTokenizer(proto=vocabulary) if vocabulary is not None else None
    if task_name == KERAS_HUB_CLASSIFIER:
        with logged_step(_logger, f"Loading the keras-hub classifier preset {str(src)!r}"):
            theirs = keras_hub.models.AlbertTextClassifier.from_preset(str(src))
        with logged_step(_logger, "Building the classifier and setting its weights"):
            backbone = _our_backbone(theirs.backbone, src)
            model = classifier_from_keras_hub(
                theirs,
                backbone,
                tokenizer,
                label_names=preset_label_names(src, theirs.num_classes),
                source=f"keras-hub preset {str(src)!r}",
            )
    else:
        if task_name is not None:
            # Loading the backbone is still useful; the head is not ours to map.
            warnings.warn(
                f"keras-hub preset {str(src)!r} holds a {task_name!r} task; "
                f"only {KERAS_HUB_CLASSIFIER!r} heads are converted, so its "
                "backbone and tokenizer are converted without that head.",
                stacklevel=2,
            )
        with logged_step(_logger, f"Loading the keras-hub preset {str(src)!r}"):
            source = keras_hub.models.AlbertBackbone.from_preset(str(src))
        with logged_step(_logger, "Building the backbone and setting its weights"):
            model = backbone = _our_backbone(source, src)
    with logged_step(_logger, f"Writing the preset {str(dst)!r}"):
        with atomic_directory(dst, "preset", overwrite) as staging:
            model.save_to_preset(staging)
            if tokenizer is not None and model is backbone:
                tokenizer.save_to_preset(staging)
    return str(dst)


# The name the CLI and older code use.
convert_keras_hub_preset = from_keras_hub_preset


def _keras_hub_arguments(config, what="This backbone"):
    """keras-hub `AlbertBackbone` arguments, or an error naming what differs."""
    problems = [
        f"{key}={config[key]!r} (keras-hub has only {value!r})"
        for key, value in _KERAS_HUB_FIXED.items()
        if key in config and config[key] != value
    ]
    attention_dropout = config.get("attention_dropout")
    if attention_dropout is not None and attention_dropout != config.get("dropout", 0.0):
        problems.append(
            f"attention_dropout={attention_dropout!r} differs from "
            f"dropout={config.get('dropout')!r} (keras-hub uses one rate for both)"
        )
    if config["num_layers"] % config.get("num_groups", 1):
        problems.append(
            f"num_layers={config['num_layers']} is not a multiple of "
            f"num_groups={config['num_groups']} (keras-hub requires it)"
        )
    if problems:
        raise ValueError(
            f"{what} does not fit keras-hub's AlbertBackbone: "
            + "; ".join(problems) + "."
        )
    return keras_hub_config_to_ours(config)


def keras_hub_can_hold(backbone_config, task_class=None):
    """Whether keras-hub's own ALBERT classes can hold this model (so
    `to_keras_hub_preset` writes a preset keras-hub loads without
    keras_albert): a backbone keras-hub's `AlbertBackbone` expresses, alone,
    with its masked-LM head or as a text classifier."""
    if task_class not in (None, "AlbertClassifier", "AlbertMaskedLM", "AlbertPretrainer"):
        return False
    try:
        _keras_hub_arguments(backbone_config)
    except (ValueError, KeyError):
        return False
    return True


def _load_for_keras_hub(preset):
    """The model of our preset to write for keras-hub, and its vocabulary."""
    path = resolve_preset(preset)
    task_name = preset_task_name(path)
    if task_name == "keras_albert>AlbertClassifier":
        model = AlbertClassifier.from_preset(path)
    elif task_name is None or task_name in _BACKBONE_ONLY_TASKS:
        model = AlbertBackbone.from_preset(path)
    else:
        raise ValueError(
            f"Preset {str(preset)!r} holds a {task_name!r}, and keras-hub "
            "has no ALBERT task for it (its ALBERT tasks are "
            "AlbertTextClassifier and AlbertMaskedLM). To hand keras-hub the "
            "backbone alone, pass `AlbertBackbone.from_preset(preset)`."
        )
    return model, preset_vocabulary(path)


def _split(model):
    """(backbone, classifier or None) of what `to_keras_hub_preset` takes."""
    if isinstance(model, AlbertClassifier):
        return model.backbone, model
    if isinstance(model, AlbertBackbone):
        return model, None
    if isinstance(model, (AlbertPretrainer, AlbertMaskedLM)):
        return model.backbone, None
    raise ValueError(
        "`model` must be a preset (name or directory), an AlbertClassifier, "
        "an AlbertBackbone, an AlbertPretrainer or an AlbertMaskedLM; keras-hub "
        "has no ALBERT task for other models (pass their `.backbone` to "
        f"export it alone). Received: model of type {type(model).__name__}"
    )


def to_keras_hub_preset(model, dst, vocabulary=None, overwrite=False):
    """Writes `model` as a keras-hub ALBERT preset that keras-hub's own
    `from_preset` loads.

    An `AlbertClassifier` (or a preset holding one) becomes keras-hub's
    `AlbertTextClassifier`: config.json + model.weights.h5 (backbone),
    task.json + task.weights.h5 (head), tokenizer.json + the vocabulary,
    preprocessor.json packing to our sequence length (never more than the
    backbone's positions, where keras-hub's default 512 would crash), and
    the class names in labels.txt, which keras-hub ignores and
    `from_keras_hub_preset` reads back. Anything else is written as a
    backbone, tokenizer and preprocessor.json; pretraining heads stay
    behind. keras-hub's tokenizer does not lowercase or strip accents:
    give it text normalised as ours does (lowercased, for the uncased
    official vocabularies) to get our outputs.

    Args:
        model: a preset name or directory, or an `AlbertClassifier`,
            `AlbertBackbone`, `AlbertPretrainer` or `AlbertMaskedLM`.
        dst: the directory to write (appears whole or not at all).
        vocabulary: SentencePiece model bytes or path; by default the
            preset's or the classifier's own.
        overwrite: replace `dst` even if it is not a preset.

    Raises:
        ValueError: for a backbone keras-hub cannot express (naming each
            setting it lacks: LSH attention, MobileBERT-style bottlenecks,
            uneven groups, ...), a task keras-hub has no class for, or a
            classifier pooling anything but [CLS].

    Example:
    >>> to_keras_hub_preset("./my_classifier", "./for_keras_hub")  # doctest: +SKIP
    >>> keras_hub.models.AlbertTextClassifier.from_preset("./for_keras_hub")  # doctest: +SKIP
    """
    import keras_hub

    dst = check_destination(dst, overwrite)
    what = f"The backbone of this {type(model).__name__}"
    if isinstance(model, (str, os.PathLike)):
        what = f"The backbone of preset {os.fspath(model)!r}"
        model, preset_vocab = _load_for_keras_hub(model)
        vocabulary = preset_vocab if vocabulary is None else vocabulary
    backbone, classifier = _split(model)
    if classifier is not None and classifier.pooling != "cls":
        raise ValueError(
            "keras-hub's AlbertTextClassifier reads the pooled [CLS] output only, so a "
            f"classifier with pooling={classifier.pooling!r} has no keras-hub form. "
            "Fine-tune with pooling='cls' to export to keras-hub."
        )
    if vocabulary is None and classifier is not None and classifier.preprocessor is not None:
        vocabulary = classifier.preprocessor.tokenizer.proto
    if isinstance(vocabulary, (str, os.PathLike)):
        vocabulary = pathlib.Path(vocabulary).read_bytes()
    with logged_step(_logger, "Building keras-hub's AlbertBackbone and setting its weights"):
        theirs = keras_hub.models.AlbertBackbone(
            **_keras_hub_arguments(backbone.get_config(), what)
        )
        set_keras_hub_backbone_weights(theirs, get_backbone_weights(backbone))
    with logged_step(_logger, f"Writing the keras-hub preset {str(dst)!r}"), \
            atomic_directory(dst, "preset", overwrite) as staging:
        if classifier is not None:
            task = keras_hub_classifier_from_ours(classifier, theirs, vocabulary)
            task.save_to_preset(staging)
            if classifier.label_names:
                write_label_file(staging, classifier.label_names)
        else:
            theirs.save_to_preset(staging)
            if vocabulary is not None:
                keras_hub.models.AlbertTextClassifierPreprocessor(
                    keras_hub.models.AlbertTokenizer(proto=vocabulary),
                    sequence_length=packed_length(None, backbone),
                ).save_to_preset(staging)
    return str(dst)


# The name the CLI and older code use (a backbone and a vocabulary).
export_keras_hub_preset = to_keras_hub_preset


register_foreign_preset_converter(is_keras_hub_albert_preset, from_keras_hub_preset)
