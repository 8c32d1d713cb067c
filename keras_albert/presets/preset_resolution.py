"""Turns a preset name or handle into a local keras_albert preset directory.

Order: an existing local directory; a bundled preset (package data of
`keras_albert.presets`, found through `importlib.resources`, no network);
an official ALBERT v2 name or alias (needs network; the download is
converted once into a cached keras_albert preset); a `kaggle://` or
`hf://` handle. Anything else is an error that lists the
names we know.
"""

import hashlib
import os
import pathlib
import socket
import threading

import keras
from keras.src.saving.serialization_lib import SafeModeScope

from keras_albert.presets.official_presets import OFFICIAL_PRESETS
from keras_albert.presets.official_presets import PRESET_ALIASES
from keras_albert.presets.preset_kind import BUNDLED_PRESETS_PACKAGE  # noqa: F401 (re-export)
from keras_albert.presets.preset_kind import bundled_presets
from keras_albert.presets.preset_kind import bundled_presets_dir
from keras_albert.presets.preset_kind import unknown_preset_error
from keras_albert.presets.preset_validation import check_preset_directory
from keras_albert.presets.preset_validation import check_preset_files
from keras_albert.presets.preset_weights_check import check_weights_file
from keras_albert.utils.atomic_directory import atomic_directory_update
from keras_albert.utils.atomic_directory import recover_interrupted

_REMOTE_SCHEMES = ("kaggle://", "hf://")
_NETWORK_TIMEOUT_SECONDS = 3.0
_HOSTS = {"kaggle://": "www.kaggle.com", "hf://": "huggingface.co"}

# Converters from foreign preset formats into keras_albert presets, filled
# in by `keras_albert.convert` (it depends on us, not the other way round).
_FOREIGN_PRESET_CONVERTERS = []


class PresetNeedsNetworkError(ConnectionError):
    """A remote preset was asked for and the network cannot be reached."""


def register_foreign_preset_converter(can_convert, convert):
    """Registers `convert(src_dir, dst_dir)` for dirs where `can_convert`."""
    _FOREIGN_PRESET_CONVERTERS.append((can_convert, convert))


def list_presets():
    """Every preset name `from_preset` accepts besides local paths."""
    return tuple(bundled_presets()) + tuple(OFFICIAL_PRESETS)


def cache_dir():
    return pathlib.Path(
        os.environ.get(
            "KERAS_ALBERT_CACHE", pathlib.Path.home() / ".cache" / "keras_albert"
        )
    )


def network_available(host, timeout=_NETWORK_TIMEOUT_SECONDS):
    """True if `host:443` accepts a TCP connection within `timeout` seconds.

    Runs in a daemon thread because name resolution has no timeout of its
    own; a hung resolver must not hang `from_preset`.
    """
    result = []

    def probe():
        try:
            with socket.create_connection((host, 443), timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(result and result[0])


def _source_digest(path):
    """Keys a converted copy by the source's path and its files' sizes and
    times: two sources never share a cache entry, and a preset saved again
    at the same path (a new fine-tuned head) is converted again."""
    digest = hashlib.sha256(str(path.resolve()).encode())
    for item in sorted(path.rglob("*")):
        if item.is_file():
            stat = item.stat()
            digest.update(f"{item.relative_to(path)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _check_local_preset(path, remote=False):
    # Before anything in it is opened (and before walking a directory that
    # is no preset at all): no links out, nothing that blocks.
    if os.path.lexists(path / "config.json"):
        check_preset_files(path, follow_links=remote)
    if not (path / "config.json").is_file():
        raise ValueError(
            f"Preset directory {str(path)!r} has no config.json, so it is not "
            "a preset. Write one with `model.save_to_preset(dir)` or convert "
            "a checkpoint with `python -m keras_albert convert`."
        )
    # Before any converter or keras-hub deserializes a class it names.
    check_preset_directory(path)
    for can_convert, convert in _FOREIGN_PRESET_CONVERTERS:
        if can_convert(path):
            converted = cache_dir() / "converted" / f"{path.name}-{_source_digest(path)}"
            if not (converted / "config.json").is_file():
                convert(str(path), str(converted))
            return str(converted)
    return str(path)


# What a keras-hub preset needs on disk to be converted without the network.
_KAGGLE_PRESET_FILES = ("config.json", "model.weights.h5")


def kagglehub_cached_preset(handle):
    """The directory where kagglehub's cache holds the versioned `kaggle://`
    handle's preset (keras-hub loaded it once), or None.

    Read without the network, as kagglehub itself does for a versioned
    handle; an unversioned one needs the network to learn its version.
    """
    try:
        from kagglehub.cache import Cache
        from kagglehub.handle import parse_model_handle
    except ImportError:
        return None
    try:
        parsed = parse_model_handle(handle.removeprefix("kaggle://"))
    except ValueError:
        return None
    if not parsed.is_versioned():
        return None
    cache = Cache()
    found = [cache.load_from_cache(parsed, name) for name in _KAGGLE_PRESET_FILES]
    if not all(found):
        return None
    return pathlib.Path(found[0]).parent


def _download(handle, name):
    scheme = next(s for s in _REMOTE_SCHEMES if handle.startswith(s))
    cached = kagglehub_cached_preset(handle) if scheme == "kaggle://" else None
    if cached is not None:
        return cached
    if not network_available(_HOSTS[scheme]):
        raise PresetNeedsNetworkError(
            f"Preset {name!r} is published at {handle} and loading it needs "
            f"network access to {_HOSTS[scheme]}, which cannot be reached. "
            "To work offline, download the preset once on a connected "
            "machine (e.g. `keras_albert.AlbertBackbone.from_preset(...)"
            ".save_to_preset('albert_dir')`, or `python -m keras_albert "
            "convert`) and pass the local directory: "
            "`from_preset('/path/to/albert_dir')`. Bundled presets that work "
            f"offline: {list(bundled_presets())}."
        )
    from keras_hub.src.utils.preset_utils import get_file

    config_path = get_file(handle, "config.json")
    return pathlib.Path(config_path).parent


def resolve_preset(preset):
    """Returns a local directory holding a keras_albert preset for `preset`.

    Example:
    >>> resolve_preset("./my_finetuned_albert")  # doctest: +SKIP
    './my_finetuned_albert'
    """
    if not isinstance(preset, (str, os.PathLike)):
        raise ValueError(
            "`preset` must be a preset name or a directory path (str). "
            f"Received: preset={preset!r} of type {type(preset).__name__}"
        )
    preset = os.fspath(preset)
    if not preset.strip():
        raise ValueError(
            "`preset` must name a preset or a directory; received an empty "
            f"string (preset={preset!r}). Bundled presets: "
            f"{list(bundled_presets())}; official: {list(OFFICIAL_PRESETS)}."
        )
    path = pathlib.Path(preset).expanduser()
    # A save killed between its two renames left the old preset aside.
    recover_interrupted(path)
    if path.is_dir():
        return _check_local_preset(path)
    if path.exists():
        raise ValueError(
            f"`preset` must be a directory, but {preset!r} is a file."
        )
    if preset in bundled_presets():
        return _check_local_preset(bundled_presets_dir() / preset)
    name = PRESET_ALIASES.get(preset, preset)
    if name in OFFICIAL_PRESETS:
        handle = OFFICIAL_PRESETS[name]["kaggle_handle"]
        return _check_local_preset(_download(handle, name), remote=True)
    if preset.startswith(_REMOTE_SCHEMES):
        return _check_local_preset(_download(preset, preset), remote=True)
    raise unknown_preset_error(preset)


def _loads_weights(cls, kwargs):
    from keras_hub.models import Backbone
    from keras_hub.models import Task

    return issubclass(cls, (Backbone, Task)) and kwargs.get("load_weights", True)


def check_preset_destination(preset_dir):
    """`save_to_preset` writes a directory: a path, never an existing file."""
    if not isinstance(preset_dir, (str, os.PathLike)) or not os.fspath(preset_dir).strip():
        raise ValueError(
            "`preset_dir` must be a directory path (str or os.PathLike). "
            f"Received: preset_dir={preset_dir!r}"
        )
    if os.path.exists(preset_dir) and not os.path.isdir(preset_dir):
        raise ValueError(
            f"`preset_dir` must be a directory path, but {os.fspath(preset_dir)!r} "
            "is an existing file."
        )
    return os.fspath(preset_dir)


def _check_weights_filename(filepath):
    if not str(filepath).endswith(".weights.h5"):
        raise ValueError(f"The filename must end in `.weights.h5`. Received: filepath={filepath}")


class PresetResolutionMixin:
    """Gives keras-hub classes our preset names, aliases and errors, loads
    presets in Keras's safe mode and saves them atomically."""

    @classmethod
    def from_preset(cls, preset, *args, **kwargs):
        # Keras's per-call default (safe_mode=True) even where the user
        # enabled unsafe deserialization: a preset is data and must never run
        # stored Python. (A forced True would also refuse keras-hub's reading
        # of the preset's own vocabulary file.)
        with SafeModeScope(None):
            path = resolve_preset(preset)
            if _loads_weights(cls, kwargs):
                check_preset_directory(path, weights=True)
            try:
                return super().from_preset(path, *args, **kwargs)
            except TypeError as error:
                # Keras reports a config that builds nothing (a key removed
                # or of another type) as a TypeError naming no file, the
                # cause after the whole config.
                message = " ".join(str(error).split())
                message = message.rpartition("Exception encountered:")[2].strip() or message
                raise ValueError(
                    f"Preset {str(path)!r} cannot be built: {message:.500} Its "
                    "config files (config.json, task.json, preprocessor.json, "
                    "tokenizer.json) do not describe a model as `save_to_preset` "
                    "writes it; re-create the preset with `save_to_preset` or "
                    "`python -m keras_albert convert`."
                ) from error
            except OSError as error:
                if isinstance(error, FileNotFoundError):
                    raise
                # h5py's errors name neither the preset nor the fix.
                raise ValueError(
                    f"Cannot read preset {str(path)!r}: {error}. A weights "
                    "file is damaged; re-create the preset with "
                    "`save_to_preset` or `python -m keras_albert convert`."
                ) from error

    def load_weights(self, filepath, skip_mismatch=False, **kwargs):
        """Keras's `load_weights`, refusing a `.weights.h5` file with arrays
        this model does not use or lacks (Keras skips the surplus silently)."""
        if str(filepath).endswith(".weights.h5") and not skip_mismatch and self.built:
            check_weights_file(self, filepath)
        return super().load_weights(filepath, skip_mismatch=skip_mismatch, **kwargs)

    def save_task_weights(self, filepath):
        """keras-hub's `save_task_weights` without the optimizer's state.

        A preset is a model to load, not a training checkpoint: Adam's
        moments would double its size and make every load warn that they
        were skipped.
        """
        _check_weights_filename(filepath)
        keras.saving.save_weights(self, filepath, objects_to_skip=self._not_task_state())

    def load_task_weights(self, filepath):
        """keras-hub's `load_task_weights`; optimizer state in older presets
        is ignored."""
        _check_weights_filename(filepath)
        check_weights_file(self, filepath, self._not_task_state())
        keras.saving.load_weights(self, filepath, objects_to_skip=self._not_task_state())

    def _not_task_state(self):
        skip = list(self.backbone._flatten_layers())
        if getattr(self, "optimizer", None) is not None:
            skip.append(self.optimizer)
        return skip

    def save_to_preset(self, preset_dir, *args, **kwargs):
        """keras-hub's `save_to_preset`, written whole or not at all.

        The directory is updated on a staging copy and swapped in, so an
        error or a kill in the middle leaves the previous preset intact.
        """
        preset_dir = check_preset_destination(preset_dir)
        with atomic_directory_update(preset_dir) as staging:
            super().save_to_preset(staging, *args, **kwargs)
            _name_keras_hub_tasks(pathlib.Path(staging) / "metadata.json", self)


def _name_keras_hub_tasks(metadata_path, layer):
    """Lists keras-hub task kinds ("TextClassifier", "MaskedLM") in metadata.json.

    keras-hub names each compatible task by its first base class, which for
    our tasks is a mixin ("PresetResolutionMixin"); the kind a keras-hub
    user knows is the first keras-hub class in the task's ancestry.
    """
    import json

    from keras_hub.models import Backbone
    from keras_hub.models import Task

    if not metadata_path.exists():
        return
    backbone = layer if isinstance(layer, Backbone) else getattr(layer, "backbone", None)
    if backbone is None:
        return
    kinds = set()
    for task in {*keras.saving.get_custom_objects().values()}:
        if isinstance(task, type) and issubclass(task, Task) and (
            getattr(task, "backbone_cls", None) is type(backbone)
        ):
            kinds.add(next(
                base.__name__ for base in task.__mro__[1:]
                if base.__module__.startswith("keras_hub.") and issubclass(base, Task)
            ))
    metadata = json.loads(metadata_path.read_text(encoding="utf-8"))
    # Span QA, multiple choice, token classification and the pretrainer
    # derive from the generic Task, which names no kind.
    metadata["tasks"] = sorted(kinds - {"Task"})
    metadata_path.write_text(json.dumps(metadata, indent=4), encoding="utf-8")
