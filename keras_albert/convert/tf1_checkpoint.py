"""Google's TF1 ALBERT release -> keras_albert preset.

A release is a directory (or the published `.tar.gz` of one) holding
`albert_config.json`, a checkpoint `model.ckpt-*` and the SentencePiece model
(`30k-clean.model`). Variables are read by name with
`tf.train.load_checkpoint`, so no TF1 graph is rebuilt; optimizer slots and
`global_step` are skipped.
"""

import logging
import pathlib
import re
import tempfile

import numpy as np

from keras_albert.convert.albert_config import albert_config_to_ours
from keras_albert.convert.albert_config import read_json_config
from keras_albert.convert.converted_preset import check_destination
from keras_albert.convert.converted_preset import check_source
from keras_albert.convert.converted_preset import write_converted_preset
from keras_albert.convert.safe_tarball import extract_tarball
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.progress import logged_step

CONFIG_FILE = "albert_config.json"
_logger = logging.getLogger(__name__)
# Optimizer state and bookkeeping the release carries next to the weights.
_SKIPPED = re.compile(
    r"(^global_step$|/(adam_[mv]|lamb_[mv]|Adam(_\d+)?|Momentum)$|^(beta[12]_power)$)"
)


def _release_directory(src, scratch):
    """The directory holding `albert_config.json`, extracting archives."""
    src = pathlib.Path(src)
    if not src.exists():
        raise FileNotFoundError(f"`src` does not exist: {str(src)!r}")
    if src.is_file():
        src = extract_tarball(src, pathlib.Path(scratch) / "release")
    candidates = [src] + sorted(p for p in src.iterdir() if p.is_dir())
    for candidate in candidates:
        if (candidate / CONFIG_FILE).is_file():
            return candidate
    raise FileNotFoundError(
        f"No {CONFIG_FILE} in {str(src)!r} or its subdirectories; a TF1 "
        "ALBERT release holds albert_config.json, model.ckpt-* and "
        "30k-clean.model."
    )


def _checkpoint_prefix(directory):
    """`model.ckpt-best` if present, else the checkpoint with most steps."""
    prefixes = [str(p)[: -len(".index")] for p in directory.glob("*.index")]
    if not prefixes:
        raise FileNotFoundError(
            f"No checkpoint (*.index) in {str(directory)!r}."
        )

    def step(prefix):
        match = re.search(r"-(\d+)$", prefix)
        return int(match.group(1)) if match else -1

    best = [p for p in prefixes if p.endswith("-best")]
    return best[0] if best else max(prefixes, key=step)


def read_tf1_checkpoint(prefix):
    """{name: array} for the model variables of a TF1 checkpoint."""
    # Imported here, not above: a release is unpacked and its config checked
    # (archive refusals included) without TensorFlow; only this read needs it.
    tf = require_tensorflow("Reading a TF1 checkpoint", backend_too=False)
    try:
        reader = tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise ValueError(
            f"Cannot read TF1 checkpoint {prefix!r}: {error}"
        ) from None
    return {
        name: np.asarray(reader.get_tensor(name))
        for name in sorted(reader.get_variable_to_shape_map())
        if not _SKIPPED.search(name)
    }


def read_tf1_release(src, scratch):
    """(backbone config, {name: array}, vocabulary bytes or None)."""
    directory = _release_directory(src, scratch)
    config_path = directory / CONFIG_FILE
    config = albert_config_to_ours(
        read_json_config(config_path), "tf1", source=f"{str(config_path)!r}"
    )
    weights = read_tf1_checkpoint(_checkpoint_prefix(directory))
    vocabularies = sorted(directory.glob("*.model"))
    vocabulary = vocabularies[0].read_bytes() if vocabularies else None
    return config, weights, vocabulary


def convert_tf1_checkpoint(src, dst, overwrite=False):
    """Converts a TF1 release directory or tarball at `src` to a preset."""
    check_destination(dst, overwrite)
    check_source(src)
    with tempfile.TemporaryDirectory(prefix="keras_albert_tf1_") as scratch:
        with logged_step(_logger, f"Reading the TF1 release {str(src)!r}"):
            config, weights, vocabulary = read_tf1_release(src, scratch)
        return write_converted_preset(
            dst, config, weights, vocabulary, source=f"TF1 checkpoint {str(src)!r}",
            overwrite=overwrite,
        )
