"""What a preset holds, read from its JSON files alone (no Keras import), so
commands can refuse a wrong preset before TensorFlow is imported.

A preset written by `save_to_preset` from a task has a `task.json` naming
the task's class; a backbone-only preset (Google's converted releases,
`pretrain`'s output) has none.
"""

import json
import os
import pathlib

from keras_albert.presets.official_presets import OFFICIAL_PRESETS
from keras_albert.presets.official_presets import PRESET_ALIASES
from keras_albert.utils.atomic_directory import recover_interrupted
from keras_albert.utils.package_resources import package_directory

# The bundled presets are package data of this (code-free) package.
BUNDLED_PRESETS_PACKAGE = "keras_albert.presets"
# Downloaded when loaded: their kind is only known then.
_REMOTE_SCHEMES = ("kaggle://", "hf://", "gs://", "http://", "https://", "modelscope://")


def bundled_presets_dir():
    """The directory of the bundled presets in the installed package.

    `KERAS_ALBERT_PRESETS_DIR` replaces it (tests, private preset sets).
    """
    override = os.environ.get("KERAS_ALBERT_PRESETS_DIR")
    if override:
        return pathlib.Path(override)
    return package_directory(BUNDLED_PRESETS_PACKAGE)


def bundled_presets():
    """Names of the presets shipped with the package (offline)."""
    try:
        root = bundled_presets_dir()
    except FileNotFoundError:  # package data not on the file system
        return ()
    if not root.is_dir():
        return ()
    return tuple(
        sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
    )


def unknown_preset_error(preset):
    """What a preset name that is nothing we know gets (loading or a CLI check)."""
    return ValueError(
        f"Unknown preset: preset={preset!r}. It is not a local directory, a "
        "bundled preset, an official name or a kaggle:// / hf:// handle. "
        f"Bundled presets (offline): {list(bundled_presets())}. Official "
        f"presets (need network): {list(OFFICIAL_PRESETS)}; also accepted: "
        f"{sorted(PRESET_ALIASES)}. Or pass the path of a preset directory "
        "written by `save_to_preset`."
    )


def local_preset_directory(preset):
    """The directory `preset` names (a path, or a bundled preset's name);
    None for presets that are only downloaded (official names, hub handles).

    Raises FileNotFoundError when `preset` is none of these.
    """
    preset = os.fspath(preset)
    path = pathlib.Path(preset).expanduser()
    if path.exists():
        return path
    if preset in OFFICIAL_PRESETS or preset in PRESET_ALIASES or preset.startswith(_REMOTE_SCHEMES):
        return None
    if "/" not in preset and "\\" not in preset and preset in bundled_presets():
        return bundled_presets_dir() / preset
    raise FileNotFoundError(preset)


def local_preset_or_none(preset):
    """The directory of a local or bundled preset, or None for one that is
    only downloaded, unknown, or no name at all (loading names those)."""
    try:
        directory = local_preset_directory(preset)
    except (FileNotFoundError, TypeError):
        return None
    return directory if directory is not None and directory.is_dir() else None


def check_preset_known(preset):
    """Refuses, before Keras is imported, a preset that is no local
    directory, bundled name, official name or hub handle: a typo answers in
    a second, not after TensorFlow's import. Empty and non-string values are
    left to loading, which names them."""
    if not isinstance(preset, str) or not preset.strip():
        return
    # A save killed between its two renames left the preset aside: loading
    # puts it back, and so does this check.
    recover_interrupted(pathlib.Path(preset).expanduser())
    try:
        local_preset_directory(preset)
    except FileNotFoundError:
        raise unknown_preset_error(preset) from None


def task_class_name(directory):
    """The task class a preset directory's `task.json` names, or None for a
    backbone-only preset (no `task.json`)."""
    task_file = pathlib.Path(directory) / "task.json"
    if not task_file.is_file():
        return None
    try:
        task = json.loads(task_file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"Preset file {str(task_file)!r} is not JSON: {error}") from None
    if not isinstance(task, dict) or not isinstance(task.get("class_name"), str):
        raise ValueError(f"Preset file {str(task_file)!r} names no task class (`class_name`).")
    return task["class_name"]


def preset_backbone_config(directory):
    """The backbone arguments in preset `directory`'s config.json, or {}
    where it cannot be read (loading the preset then says why)."""
    config_file = pathlib.Path(directory) / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    arguments = config.get("config") if isinstance(config, dict) else None
    return arguments if isinstance(arguments, dict) else {}


def preset_max_sequence_length(directory):
    """The positions the backbone of preset `directory` has (its config's
    `max_sequence_length`), or None where its config.json does not say."""
    maximum = preset_backbone_config(directory).get("max_sequence_length")
    return maximum if isinstance(maximum, int) and not isinstance(maximum, bool) else None


def too_long_for_positions(preset, sequence_length, maximum, name="--sequence_length"):
    """The error for a `sequence_length` the preset's position table cannot
    hold: the layer would fail only on the first input that long, mid-run."""
    return ValueError(
        f"`{name}` {sequence_length} is more than the {maximum} positions of preset {str(preset)!r} "
        f"(its max_sequence_length). Pass at most {maximum}, or give the backbone more "
        f"positions first: keras_albert.extend_positions(backbone, max_sequence_length="
        f"{sequence_length}), then its save_to_preset(dir) and the tokenizer's make a preset that takes it."
    )


def check_preset_positions(preset, sequence_length, name="--sequence_length"):
    """Refuses a `sequence_length` longer than the positions of a local or
    bundled preset, from its config.json alone (before Keras is imported).
    Presets that are only downloaded are checked once loaded."""
    if sequence_length is None or not preset:
        return
    directory = local_preset_or_none(preset)
    maximum = None if directory is None else preset_max_sequence_length(directory)
    if maximum is not None and sequence_length > maximum:
        raise too_long_for_positions(preset, sequence_length, maximum, name)
