"""`Class.presets` for our classes, filled the way keras-hub fills its own.

keras-hub lists a model's built-in presets per backbone class (its
`register_presets(presets, backbone_cls)`), and every Task, Preprocessor
and Tokenizer finds them through its `backbone_cls`. We add our bundled and
official presets under our `AlbertBackbone` only. keras-hub's global
name -> handle map is left alone: the official names are keras-hub's too,
and keras-hub's own classes must keep resolving them as before. Names are
resolved by our `from_preset` (`preset_resolution.resolve_preset`).
"""

import json

from keras_hub.src.utils.preset_utils import BUILTIN_PRESETS_FOR_BACKBONE

from keras_albert.models.albert_presets import BUNDLED_PRESET_DESCRIPTIONS
from keras_albert.models.albert_presets import OFFICIAL_PRESETS
from keras_albert.presets.preset_resolution import bundled_presets
from keras_albert.presets.preset_resolution import bundled_presets_dir


def _bundled_entry(name):
    directory = bundled_presets_dir() / name
    params = None
    metadata_file = directory / "metadata.json"
    if metadata_file.is_file():
        params = json.loads(metadata_file.read_text()).get("parameter_count")
    description = BUNDLED_PRESET_DESCRIPTIONS.get(
        name, "Bundled keras_albert preset (offline).")
    return {
        "metadata": {"description": description, "params": params,
                     "path": "albert", "bundled": True},
        # Shipped inside the package: no download handle.
        "local_dir": str(directory),
    }


def albert_presets():
    """Every named preset in keras-hub's registry format, bundled first."""
    presets = {name: _bundled_entry(name) for name in bundled_presets()}
    for name, entry in OFFICIAL_PRESETS.items():
        presets[name] = {
            "metadata": {"description": entry["description"],
                         "params": entry["params"], "path": "albert"},
            "kaggle_handle": entry["kaggle_handle"],
        }
    return presets


def register_albert_presets(backbone_cls):
    """Lists our presets under `backbone_cls.presets` (and so under every
    class whose `backbone_cls` it is)."""
    registry = BUILTIN_PRESETS_FOR_BACKBONE[backbone_cls]
    registry.clear()
    registry.update(albert_presets())
