"""Checks a preset directory before anything in it is deserialized.

A preset is data: its JSON files name classes that Keras instantiates, and
its `.h5` files hold weights. Loading one must run no code of its author's
choosing, so every class a JSON file names must come from keras_albert or
keras-hub (or be a plain Keras building block such as a dtype policy), and
layers that run stored code or load other programs (`Lambda`, `TFSMLayer`)
are refused. Broken files are reported by name before keras-hub trips over
them with an error that names neither the file nor the fix.
"""

import json
import pathlib

from keras_albert.presets.backbone_config_check import check_backbone_config
from keras_albert.presets.backbone_config_check import is_albert_backbone
from keras_albert.utils.regular_files import MiB
from keras_albert.utils.regular_files import check_regular_file
from keras_albert.utils.regular_files import check_regular_tree

# The JSON files keras-hub writes; each holds one serialized Keras object.
SERIALIZED_OBJECT_FILES = (
    "config.json",
    "task.json",
    "tokenizer.json",
    "preprocessor.json",
)
WEIGHT_FILES = ("model.weights.h5", "task.weights.h5")
# Packages whose registered classes a preset may name at its top level.
PRESET_PACKAGES = ("keras_albert", "keras_hub")
# Nested objects may also be Keras's own (dtype policies, initializers).
NESTED_PACKAGES = PRESET_PACKAGES + ("keras",)
# Config keys of keras-hub tasks and preprocessors that hold another object.
NESTED_OBJECT_KEYS = ("backbone", "preprocessor", "tokenizer")
# Keras classes that execute stored Python or load another SavedModel.
REFUSED_CLASSES = ("Lambda", "TFSMLayer", "__lambda__")
# Files read whole: a JSON config, an asset (the SentencePiece model).
MAX_JSON_BYTES = 64 * MiB
MAX_ASSET_BYTES = 256 * MiB
_REBUILD_HINT = (
    "Re-create the preset with `model.save_to_preset(dir)` or "
    "`python -m keras_albert convert`."
)


def _read_json(path):
    # Links were refused in local presets; a hub cache's lead to blobs.
    check_regular_file(path, "Preset file", MAX_JSON_BYTES, follow_link=True)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"Preset file {str(path)!r} is not UTF-8 text ({error}); a preset "
            f"JSON file must be UTF-8 JSON. {_REBUILD_HINT}"
        ) from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise ValueError(
            f"Preset file {str(path)!r} is not valid JSON ({error}); it "
            f"starts with {text[:80]!r}. Expected a JSON object written by "
            f"`save_to_preset`. {_REBUILD_HINT}"
        ) from None


def _package(value):
    """'keras_albert' for 'keras_albert>X' or 'keras_albert.models.x'."""
    if not isinstance(value, str):
        return None
    return value.split(">", 1)[0] if ">" in value else value.split(".", 1)[0]


def _check_object(obj, path, where, packages):
    for key in ("class_name", "module", "registered_name"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise ValueError(
                f"Preset file {str(path)!r}: {where}[{key!r}] must be a string. "
                f"Received: {key}={obj[key]!r:.80}. {_REBUILD_HINT}"
            )
    class_name = obj.get("class_name")
    if class_name in REFUSED_CLASSES:
        raise ValueError(
            f"Refusing to load preset file {str(path)!r}: {where} is a "
            f"{class_name!r}, which runs stored code or loads another "
            "program. Presets may hold only keras_albert and keras-hub "
            "classes and Keras building blocks; Lambda and TFSMLayer are "
            "never deserialized."
        )
    for key in ("module", "registered_name"):
        value = obj.get(key)
        if value is None or (key == "registered_name" and ">" not in value):
            continue
        if _package(value) not in packages:
            raise ValueError(
                f"Refusing to load preset file {str(path)!r}: {where} names "
                f"{key}={value!r}, which is outside {list(packages)}. Only "
                "classes registered by keras_albert or keras-hub (and "
                "Keras's own building blocks) are loaded from a preset."
            )


def _walk(value, path, where):
    if isinstance(value, dict):
        if "class_name" in value:
            _check_object(value, path, where, NESTED_PACKAGES)
        if isinstance(value.get("proto"), str):
            # keras-hub would read any file the config names.
            raise ValueError(
                f"Refusing to load preset file {str(path)!r}: {where} names "
                f"a vocabulary file proto={value['proto']!r:.100}. A preset's "
                "vocabulary is read from its own assets/ directory only."
            )
        for key, item in value.items():
            _walk(item, path, f"{where}[{key!r}]")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk(item, path, f"{where}[{index}]")


def _check_dtype(config, path):
    # keras-hub reads the saved dtype policy's name before building anything.
    dtype = config["config"].get("dtype")
    if dtype is None:
        return
    inner = dtype.get("config") if isinstance(dtype, dict) else None
    if not isinstance(inner, dict) or not isinstance(inner.get("name", ""), str):
        raise ValueError(
            f"Preset file {str(path)!r}: config.dtype must be a serialized dtype policy "
            '({"class_name": "DTypePolicy", "config": {"name": "float32"}, ...}) or null. '
            f"Received: dtype={dtype!r:.100}. {_REBUILD_HINT}"
        )


def _check_nested_objects(config, path):
    """A task's backbone and preprocessor, a preprocessor's tokenizer: each a
    serialized object (or null), and a backbone's numbers usable."""
    for key in NESTED_OBJECT_KEYS:
        value = config["config"].get(key)
        if value is None and key != "backbone":
            continue
        if key in config["config"]:
            if not isinstance(value, dict) or not isinstance(value.get("config"), dict):
                raise ValueError(
                    f"Preset file {str(path)!r}: config.{key} must be a serialized Keras "
                    f"object (a JSON object with 'class_name' and 'config'). Received: "
                    f"{key}={value!r:.100}. {_REBUILD_HINT}"
                )
            if is_albert_backbone(value):
                check_backbone_config(value["config"], path, f"config.{key}")


def check_serialized_object(config, path):
    """Raises ValueError unless `config` is a safe keras_albert/keras-hub object."""
    required = ("class_name", "config")
    if not isinstance(config, dict) or any(key not in config for key in required):
        shown = type(config).__name__ if not isinstance(config, dict) else (
            f"an object with keys {sorted(config)}"
        )
        raise ValueError(
            f"Preset file {str(path)!r} holds {shown}; expected a serialized "
            "Keras object: a JSON object with 'class_name', 'config', "
            f"'module' and 'registered_name'. {_REBUILD_HINT}"
        )
    if not isinstance(config["config"], dict):
        raise ValueError(
            f"Preset file {str(path)!r}: 'config' must be a JSON object. "
            f"Received: config={config['config']!r:.100}. {_REBUILD_HINT}"
        )
    name = config.get("registered_name") or config.get("module")
    if _package(name) not in PRESET_PACKAGES:
        raise ValueError(
            f"Refusing to load preset file {str(path)!r}: it names "
            f"class_name={config['class_name']!r}, "
            f"registered_name={config.get('registered_name')!r}, "
            f"module={config.get('module')!r}. A preset must hold a class "
            f"registered by {list(PRESET_PACKAGES)} (e.g. "
            "'keras_albert>AlbertBackbone')."
        )
    _walk(config, path, "the object")
    _check_dtype(config, path)
    _check_nested_objects(config, path)
    if is_albert_backbone(config):
        check_backbone_config(config["config"], path)


def check_weight_file(path):
    """Raises ValueError unless `path` opens as a complete HDF5 file."""
    import h5py

    try:
        with h5py.File(path, "r"):
            pass
    except OSError as error:
        raise ValueError(
            f"Preset weights file {str(path)!r} cannot be read ({error}): it "
            "is truncated or corrupted. Expected a complete Keras `.h5` "
            f"weights file. {_REBUILD_HINT}"
        ) from None


def _size_limit(relative):
    if relative.endswith(".json"):
        return MAX_JSON_BYTES
    return MAX_ASSET_BYTES if relative.startswith("assets/") else None


def check_preset_files(directory, follow_links=False):
    """Refuses links, FIFOs, devices and oversized files in a preset, by
    path, before anything in it is opened. `follow_links`: the preset is a
    hub client's cache, whose files are links to regular blobs."""
    check_regular_tree(directory, "Preset file", follow_links, _size_limit)


def check_preset_directory(directory, weights=False):
    """Checks the JSON files (and, if `weights`, the weight files) of a preset."""
    directory = pathlib.Path(directory)
    for name in SERIALIZED_OBJECT_FILES:
        path = directory / name
        if path.is_file():
            check_serialized_object(_read_json(path), path)
    metadata = directory / "metadata.json"
    if metadata.is_file():
        saved = _read_json(metadata)
        if not isinstance(saved, dict):
            raise ValueError(
                f"Preset file {str(metadata)!r} holds {type(saved).__name__} "
                f"{saved!r:.80}; expected a JSON object such as "
                '{"keras_version": "3.15.1", "parameter_count": 66928}. '
                f"{_REBUILD_HINT}"
            )
    if weights:
        sharded = directory / "model.weights.json"
        if not (directory / "model.weights.h5").is_file() and not sharded.is_file():
            raise FileNotFoundError(
                f"Preset {str(directory)!r} has no model.weights.h5 (the "
                "backbone weights, or model.weights.json for sharded ones). "
                "Pass `load_weights=False` for a randomly initialised model, "
                f"or {_REBUILD_HINT[0].lower()}{_REBUILD_HINT[1:]}"
            )
        for name in WEIGHT_FILES:
            if (directory / name).is_file():
                check_weight_file(directory / name)
