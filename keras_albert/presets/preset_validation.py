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
# Keras classes that execute stored Python or load another SavedModel.
REFUSED_CLASSES = ("Lambda", "TFSMLayer", "__lambda__")
_REBUILD_HINT = (
    "Re-create the preset with `model.save_to_preset(dir)` or "
    "`python -m keras_albert convert`."
)


def _read_json(path):
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


def check_preset_directory(directory, weights=False):
    """Checks the JSON files (and, if `weights`, the weight files) of a preset."""
    directory = pathlib.Path(directory)
    for name in SERIALIZED_OBJECT_FILES:
        path = directory / name
        if path.is_file():
            check_serialized_object(_read_json(path), path)
    metadata = directory / "metadata.json"
    if metadata.is_file():
        _read_json(metadata)
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
