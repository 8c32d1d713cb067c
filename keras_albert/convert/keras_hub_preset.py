"""keras-hub ALBERT preset directories <-> keras_albert presets.

The official ALBERT v2 presets are published in keras-hub's format; this is
what lets `keras_albert.AlbertClassifier.from_preset("albert_base_en_uncased")`
use them. Registered with `keras_albert.models.preset_resolution` on import.
keras-hub's weight keys are positional, so both directions go through its
`AlbertBackbone` class. The way back carries the backbone and tokenizer
(keras-hub has no SOP head), and only configs keras-hub can express.
"""

import json
import logging
import pathlib

from keras_albert.convert.converted_preset import check_destination
from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights
from keras_albert.convert.keras_hub_weights import keras_hub_config_to_ours
from keras_albert.convert.keras_hub_weights import set_keras_hub_backbone_weights
from keras_albert.convert.tf1_names import get_backbone_weights
from keras_albert.convert.tf1_names import set_backbone_weights
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.preset_resolution import register_foreign_preset_converter
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.progress import logged_step

_KERAS_HUB_BACKBONE = "keras_hub>AlbertBackbone"
_logger = logging.getLogger(__name__)


def is_keras_hub_albert_preset(path):
    config = pathlib.Path(path) / "config.json"
    try:
        return json.loads(config.read_text()).get("registered_name") == (
            _KERAS_HUB_BACKBONE
        )
    except (OSError, ValueError):
        return False


def convert_keras_hub_preset(src, dst, overwrite=False):
    """Writes a keras_albert preset (backbone + tokenizer) for `src`.

    The directory appears whole or not at all: it is written next to `dst`
    and renamed into place once complete.
    """
    import keras_hub

    check_destination(dst, overwrite)
    if not is_keras_hub_albert_preset(src):
        # keras-hub would try to read it as a Hugging Face or timm checkpoint.
        raise ValueError(
            f"`src` {str(src)!r} is not a keras-hub ALBERT preset: its "
            f"config.json must name registered_name={_KERAS_HUB_BACKBONE!r} "
            "(for a Hugging Face directory use --from=hf)."
        )
    with logged_step(_logger, f"Loading the keras-hub preset {str(src)!r}"):
        source = keras_hub.models.AlbertBackbone.from_preset(str(src))
    with logged_step(_logger, "Building the backbone and setting its weights"):
        config = keras_hub_config_to_ours(source.get_config())
        backbone = AlbertBackbone(**config)
        set_backbone_weights(
            backbone,
            keras_hub_backbone_weights(source),
            source=f"keras-hub preset {str(src)!r}",
        )
    with logged_step(_logger, f"Writing the preset {str(dst)!r}"):
        with atomic_directory(dst, "preset", overwrite) as staging:
            backbone.save_to_preset(staging)
            vocabulary = pathlib.Path(src) / "assets" / "tokenizer" / "vocabulary.spm"
            if vocabulary.is_file():
                # The official vocabularies are uncased: lowercase as Google did.
                AlbertTokenizer(proto=vocabulary.read_bytes()).save_to_preset(staging)
    return str(dst)


def _keras_hub_arguments(config):
    """keras-hub `AlbertBackbone` arguments, or an error naming what differs."""
    fixed = {
        "sharing": "all",
        "attention": "full",
        "activation": "gelu_approximate",
        "layer_norm_epsilon": 1e-12,
    }
    problems = [
        f"{key}={config[key]!r} (keras-hub has {value!r})"
        for key, value in fixed.items()
        if key in config and config[key] != value
    ]
    if config["num_layers"] % config.get("num_groups", 1):
        problems.append(
            f"num_layers={config['num_layers']} is not a multiple of "
            f"num_groups={config['num_groups']} (keras-hub requires it)"
        )
    if problems:
        raise ValueError(
            "This backbone does not fit keras-hub's AlbertBackbone: "
            + "; ".join(problems) + "."
        )
    return keras_hub_config_to_ours(config)


def export_keras_hub_preset(backbone, dst, vocabulary=None, overwrite=False):
    """Writes `backbone` (and a tokenizer) as a keras-hub ALBERT preset."""
    import keras_hub

    check_destination(dst, overwrite)
    with logged_step(_logger, "Building keras-hub's AlbertBackbone and setting its weights"):
        theirs = keras_hub.models.AlbertBackbone(
            **_keras_hub_arguments(backbone.get_config())
        )
        set_keras_hub_backbone_weights(theirs, get_backbone_weights(backbone))
    with logged_step(_logger, f"Writing the keras-hub preset {str(dst)!r}"):
        with atomic_directory(dst, "preset", overwrite) as staging:
            theirs.save_to_preset(staging)
            if vocabulary is not None:
                keras_hub.models.AlbertTokenizer(proto=vocabulary).save_to_preset(staging)
    return str(dst)


register_foreign_preset_converter(is_keras_hub_albert_preset, convert_keras_hub_preset)
