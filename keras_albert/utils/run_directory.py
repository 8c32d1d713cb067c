"""A training run's output directory: the run replaces only its own files.

`finetune` and `pretrain` write fixed names (metrics.json, curves.png,
vocabulary.spm, ...) into a directory the user names, which may hold the
user's own files of those names. The directory's marker (kind "run", see
`atomic_directory`) lists the names a run of this package wrote there; a
later run may replace those, and refuses, before any work, to touch a file
of the same name that it did not write.
"""

import json
import os
import pathlib

from keras_albert.utils.atomic_directory import MARKER_FILE
from keras_albert.utils.atomic_directory import read_marker
from keras_albert.utils.atomic_file import write_file_atomically


def _recorded(directory):
    marker = read_marker(directory)
    if marker is None or marker.get("kind") != "run":
        return None
    files = marker.get("files")
    return set(files) if isinstance(files, list) else set()


def check_run_outputs(directory, names, name="--output", legacy=None):
    """Refuses names in `directory` a run would write that it did not write.

    Args:
        directory: the run's output directory (may not exist yet).
        names: top-level names the run writes (files or directories).
        name: how errors name the directory (the flag).
        legacy: `legacy(directory)` tells a run written before the marker
            existed, from the content of its own files; its names count as
            the run's.
    """
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        return
    marker = read_marker(directory)
    if marker is not None and marker["kind"] != "run":
        raise ValueError(
            f"`{name}` {str(directory)!r} holds a {marker['kind']} written by keras_albert, "
            "not a training run. Pass a new or empty directory."
        )
    recorded = _recorded(directory)
    if recorded is None and legacy is not None and legacy(directory):
        record_run_outputs(directory, [n for n in names if os.path.lexists(directory / n)])
        recorded = _recorded(directory)
    recorded = recorded or set()
    # An artifact this package marked (a preset/) is judged by its own marker.
    taken = [
        n for n in names
        if os.path.lexists(directory / n) and n not in recorded and read_marker(directory / n) is None
    ]
    if taken:
        raise ValueError(
            f"`{name}` {str(directory)!r} already holds {', '.join(taken)}, which no "
            "earlier run of keras_albert wrote there; this run writes those names and "
            "would replace them. Pass a new or empty directory, or move them away."
        )


def record_run_outputs(directory, names):
    """Adds `names` to the directory's list of what runs wrote (before
    they are written: a killed run's files stay the run's)."""
    directory = pathlib.Path(directory)
    recorded = _recorded(directory) or set()
    if set(names) <= recorded and (directory / MARKER_FILE).is_file():
        return
    marker = {"kind": "run", "writer": "keras_albert", "files": sorted(recorded | set(names))}
    write_file_atomically(directory / MARKER_FILE, json.dumps(marker, indent=1))


def remove_run_outputs(directory, names):
    """Deletes the files among `names` that the marker says a run wrote
    (names earlier versions wrote and this one no longer does); a file of
    the user's with such a name is left alone."""
    directory = pathlib.Path(directory)
    recorded = _recorded(directory) or set()
    for name in names:
        path = directory / name
        if name in recorded and path.is_file() and not path.is_symlink():
            path.unlink()


if __name__ == "__main__":
    # `python -m keras_albert.utils.run_directory DIRECTORY NAME...` records
    # NAMEs as a run's own (tools/gpu_pretraining_run.sh hands a run the
    # vocabulary its corpus was tokenized with); under -m the package does
    # not import its API, so this costs no Keras or TensorFlow import.
    import sys

    record_run_outputs(sys.argv[1], sys.argv[2:])
