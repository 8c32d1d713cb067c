"""Checks that a preset's weights files hold exactly what its config builds,
and only finite numbers.

Keras loads a `.weights.h5` file by walking the model: arrays the model does
not ask for are skipped without a word, so weights written by another
architecture (two groups where the config has one, no sharing where it
shares) load into the wrong model silently. Here the file's arrays are
compared, by path and shape, with what saving the model would write.
"""

import os
import tempfile

import h5py
import keras
import numpy as np

_SHOWN = 3


def _arrays(filepath, non_finite=None):
    """{path: shape} of every array in a `.weights.h5` file; the paths of
    float arrays holding NaN or inf are appended to `non_finite` if given."""
    found = {}

    def visit(name, obj):
        # The model's own arrays; not an optimizer's state (older
        # task.weights.h5 files hold it) nor compiled metrics'.
        if isinstance(obj, h5py.Dataset) and name.split("/")[0] in ("layers", "vars"):
            found[name] = tuple(obj.shape)
            # Read once: NaN weights load silently and predict NaN.
            if non_finite is not None and obj.dtype.kind == "f" and not np.isfinite(obj[()]).all():
                non_finite.append(name)

    with h5py.File(filepath, "r") as handle:
        handle.visititems(visit)
    return found


def _expected_arrays(model, objects_to_skip):
    with tempfile.TemporaryDirectory(prefix="keras_albert_weights_") as scratch:
        path = os.path.join(scratch, "expected.weights.h5")
        keras.saving.save_weights(model, path, objects_to_skip=objects_to_skip)
        return _arrays(path)


def check_weights_file(model, filepath, objects_to_skip=None):
    """Raises ValueError if `filepath` holds arrays `model` does not use,
    misses some it uses, or shapes them differently."""
    non_finite = []
    found = _arrays(filepath, non_finite)
    expected = _expected_arrays(model, objects_to_skip)
    unused = [p for p in found if p not in expected]
    missing = [p for p in expected if p not in found]
    reshaped = [
        f"{p}: file {found[p]} vs model {expected[p]}"
        for p in expected
        if p in found and found[p] != expected[p]
    ]
    if not (unused or missing or reshaped):
        if non_finite:
            more = f" (and {len(non_finite) - _SHOWN} more)" if len(non_finite) > _SHOWN else ""
            raise ValueError(
                f"Weights file {str(filepath)!r} holds NaN or infinite values in "
                f"{len(non_finite)} arrays, first {non_finite[:_SHOWN]}{more}: the model "
                "would predict NaN. Use weights saved before training diverged."
            )
        return
    parts = []
    for label, items in (
        ("unused by the model", unused),
        ("missing from the file", missing),
        ("with another shape", reshaped),
    ):
        if items:
            more = f" (and {len(items) - _SHOWN} more)" if len(items) > _SHOWN else ""
            parts.append(f"{len(items)} {label}, first {items[:_SHOWN]}{more}")
    raise ValueError(
        f"Weights file {str(filepath)!r} does not match the model its preset "
        f"config builds: the file holds {len(found)} arrays, the model uses "
        f"{len(expected)}; " + "; ".join(parts) + ". The weights were written "
        "by another architecture (e.g. other `num_groups`, `sharing` or "
        "sizes): load them with the config they were saved with."
    )
