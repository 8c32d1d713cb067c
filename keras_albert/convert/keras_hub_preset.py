"""keras-hub ALBERT preset directory -> keras_albert preset directory.

The official ALBERT v2 presets are published in keras-hub's format; this is
what lets `keras_albert.AlbertClassifier.from_preset("albert_base_en_uncased")`
use them. Registered with `keras_albert.models.preset_resolution` on import.
"""

import json
import pathlib

from keras_albert.convert.keras_hub_weights import keras_hub_backbone_weights
from keras_albert.convert.keras_hub_weights import keras_hub_config_to_ours
from keras_albert.convert.tf1_names import set_backbone_weights
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.models.atomic_directory import atomic_directory
from keras_albert.models.preset_resolution import register_foreign_preset_converter

_KERAS_HUB_BACKBONE = "keras_hub>AlbertBackbone"


def is_keras_hub_albert_preset(path):
    config = pathlib.Path(path) / "config.json"
    try:
        return json.loads(config.read_text()).get("registered_name") == (
            _KERAS_HUB_BACKBONE
        )
    except (OSError, ValueError):
        return False


def convert_keras_hub_preset(src, dst):
    """Writes a keras_albert preset (backbone + tokenizer) for `src`.

    The directory appears whole or not at all: it is written next to `dst`
    and renamed into place once complete.
    """
    import keras_hub

    source = keras_hub.models.AlbertBackbone.from_preset(str(src))
    config = keras_hub_config_to_ours(source.get_config())
    backbone = AlbertBackbone(**config)
    set_backbone_weights(
        backbone,
        keras_hub_backbone_weights(source),
        source=f"keras-hub preset {str(src)!r}",
    )
    with atomic_directory(dst) as staging:
        backbone.save_to_preset(staging)
        vocabulary = pathlib.Path(src) / "assets" / "tokenizer" / "vocabulary.spm"
        if vocabulary.is_file():
            # The official vocabularies are uncased: lowercase as Google did.
            AlbertTokenizer(proto=vocabulary.read_bytes()).save_to_preset(staging)
    return str(dst)


register_foreign_preset_converter(is_keras_hub_albert_preset, convert_keras_hub_preset)
