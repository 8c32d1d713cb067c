"""Pretraining instances as NumPy arrays: the TensorFlow-free record format.

One `.npz` file (compressed by default) holds every instance of a shard as fixed-shape
arrays under Google's feature names (`input_ids`, `input_mask`,
`segment_ids`, `token_boundary` [n, seq]; `masked_lm_positions`,
`masked_lm_ids`, `masked_lm_weights` [n, predictions];
`next_sentence_labels` [n, 1]), the same values the TFRecords hold. NumPy
reads it on any backend. TFRecords stay the format for tf.data and TPUs
(`pretraining_tfrecords`); what travels to an accelerator is the smaller
tokenized corpus (`tokenized_corpus`).
"""

import os
import pathlib
import zipfile

import numpy as np

from keras_albert.data.pretraining_instances import PretrainingInstance
from keras_albert.utils.atomic_file import write_file_atomically

FEATURE_DTYPES = {
    "input_ids": np.int32,
    "input_mask": np.int32,
    "segment_ids": np.int32,
    "token_boundary": np.int32,
    "masked_lm_positions": np.int32,
    "masked_lm_ids": np.int32,
    "masked_lm_weights": np.float32,
    "next_sentence_labels": np.int32,
}
_SEQUENCE = ("input_ids", "input_mask", "segment_ids", "token_boundary")
_PREDICTIONS = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")


def instances_to_arrays(instances):
    """`PretrainingInstance`s -> a dict of stacked feature arrays."""
    columns = {name: [] for name in FEATURE_DTYPES}
    for instance in instances:
        if not isinstance(instance, PretrainingInstance):
            raise ValueError(
                "`instances` must hold PretrainingInstance values. Received "
                f"an item of type {type(instance).__name__}"
            )
        for name in FEATURE_DTYPES:
            columns[name].append(getattr(instance, name))
    if not columns["input_ids"]:
        raise ValueError("`instances` is empty: no pretraining arrays written.")
    arrays = {}
    for name, dtype in FEATURE_DTYPES.items():
        try:
            arrays[name] = np.asarray(columns[name], dtype)
        except ValueError as error:
            raise ValueError(
                f"Instances differ in the shape of `{name}`: all must share "
                "max_seq_length and max_predictions_per_seq."
            ) from error
    arrays["next_sentence_labels"] = arrays["next_sentence_labels"].reshape(-1, 1)
    return arrays


def write_pretraining_arrays(instances, path, compress=True):
    """Writes instances to one `.npz` file (compressed unless `compress` is
    False: faster to write for a file that stays where it was made),
    atomically.

    The file appears only once complete: on any error (an empty corpus
    included) nothing is left at `path`.

    Returns:
        int, the number of instances written.

    Example (instances as `write_pretraining_tfrecords`'s example makes them):
    >>> write_pretraining_arrays(instances, "run/data/train.npz")  # doctest: +SKIP
    1200
    """
    path = pathlib.Path(path)
    if path.suffix != ".npz":
        raise ValueError(f"`path` must end in .npz. Received: path={os.fspath(path)!r}")
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"`path` {os.fspath(path)!r}: directory {os.fspath(path.parent)!r} does not exist."
        )
    arrays = instances_to_arrays(instances)
    save = np.savez_compressed if compress else np.savez
    write_file_atomically(path, lambda file: save(file, **arrays), name="path")
    return len(arrays["input_ids"])


def read_pretraining_arrays(paths):
    """Reads one or more `.npz` shards into one dict of arrays, checked.

    Raises:
        ValueError: a file that is not a pretraining shard, or shards of
            different shapes (the message names the file).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    shards = []
    for path in paths:
        try:
            with np.load(path, allow_pickle=False) as data:
                shard = {name: data[name] for name in data.files}
        except (OSError, ValueError, zipfile.BadZipFile) as error:
            raise ValueError(
                f"{os.fspath(path)!r} is not a pretraining arrays file (.npz): {error}"
            ) from None
        _check_shard(shard, path)
        shards.append(shard)
    if not shards:
        raise ValueError("`paths` is empty: no pretraining arrays to read.")
    shapes = {(s["input_ids"].shape[1], s["masked_lm_ids"].shape[1]) for s in shards}
    if len(shapes) > 1:
        raise ValueError(
            "Pretraining shards differ in (max_seq_length, "
            f"max_predictions_per_seq): {sorted(shapes)}"
        )
    return {name: np.concatenate([s[name] for s in shards]) for name in FEATURE_DTYPES}


def _check_shard(shard, path):
    missing = sorted(set(FEATURE_DTYPES) - set(shard))
    if missing:
        raise ValueError(f"{os.fspath(path)!r} lacks the features {missing}.")
    count = len(shard["input_ids"])
    for name, dtype in FEATURE_DTYPES.items():
        array = shard[name]
        width = {"next_sentence_labels": 1}.get(name)
        if name in _SEQUENCE:
            width = shard["input_ids"].shape[-1]
        elif name in _PREDICTIONS:
            width = shard["masked_lm_ids"].shape[-1]
        if array.dtype != dtype or array.ndim != 2 or array.shape != (count, width):
            raise ValueError(
                f"{os.fspath(path)!r}: `{name}` has dtype {array.dtype} and shape "
                f"{array.shape}; expected {np.dtype(dtype)} of shape ({count}, {width})."
            )
