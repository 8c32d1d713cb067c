"""Writes a keras_albert preset from {TF1 name: array}, all or nothing.

Every source format ends here: the weights are checked against the model in
one pass (every missing, unexpected or mis-shaped name in one error) before
anything touches the disk, and the directory appears whole or not at all.
With `cls/...` heads in the weights the preset holds an `AlbertPretrainer`
(MLM and, when present, SOP heads) next to the backbone.
"""

import json
import logging
import os
import pathlib

from keras_albert.convert.tf1_names import SOP_KERNEL
from keras_albert.convert.tf1_names import set_model_weights
from keras_albert.models.albert_backbone import AlbertBackbone
from keras_albert.models.albert_pretrainer import AlbertPretrainer
from keras_albert.models.albert_tokenizer import AlbertTokenizer
from keras_albert.presets.preset_validation import MAX_ASSET_BYTES
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.progress import logged_step
from keras_albert.utils.regular_files import check_regular_file
from keras_albert.utils.regular_files import check_regular_tree
from keras_albert.utils.regular_files import read_regular_bytes

_logger = logging.getLogger(__name__)


def check_destination(dst, overwrite=False, kind="preset"):
    """`dst` is new, empty or an artifact of `kind` (any directory with
    `overwrite`); never a file. Checked before the conversion's work."""
    return check_replaceable(dst, kind, overwrite)


def check_source(src, name="src"):
    """Refuses, by path, a FIFO, device or socket in the source (a file or a
    directory) and links to anything but a regular file (a Hugging Face
    cache keeps its files as links to blobs). Nothing is opened."""
    src = pathlib.Path(src)
    if src.is_dir():
        check_regular_tree(src, f"`{name}` file", follow_links=True)
    elif os.path.lexists(src):
        check_regular_file(src, f"`{name}`", follow_link=True)
    return src


def build_model(config, weights, source):
    """A backbone (or pretrainer, if `weights` has heads) holding `weights`."""
    backbone = AlbertBackbone(**config)
    has_heads = any(name.startswith("cls/") for name in weights)
    model = backbone
    if has_heads:
        sentence_task = "sop" if SOP_KERNEL in weights else "none"
        model = AlbertPretrainer(backbone, sentence_task=sentence_task)
    set_model_weights(model, weights, source=source)
    return model


def write_converted_preset(
    dst, config, weights, vocabulary=None, source="source", overwrite=False, lowercase=True
):
    """Builds, fills and saves the model; returns the preset path.

    Args:
        dst: preset directory to create (replaced only once complete).
        config: `AlbertBackbone` arguments.
        weights: {TF1 name: array} for the backbone and optional heads.
        vocabulary: SentencePiece model bytes, or None.
        source: how errors name the source.
        overwrite: replace `dst` even if it is not a preset.
        lowercase: the tokenizer's casing (every published ALBERT is uncased).
    """
    dst = check_destination(dst, overwrite)
    with logged_step(_logger, f"Building the model and checking {len(weights)} weights"):
        model = build_model(config, weights, source)
    tokenizer = None
    if vocabulary is not None:
        tokenizer = AlbertTokenizer(proto=vocabulary, lowercase=lowercase)
    with logged_step(_logger, f"Writing the preset {str(dst)!r}"):
        with atomic_directory(dst, "preset", overwrite) as staging:
            model.save_to_preset(staging)
            if tokenizer is not None:
                tokenizer.save_to_preset(staging)
    return str(dst)


def task_config(preset):
    """(class name, config) of the preset's task.json, or (None, {})."""
    task_file = pathlib.Path(preset) / "task.json"
    if not task_file.is_file():
        return None, {}
    task = json.loads(task_file.read_text(encoding="utf-8"))
    return task.get("registered_name", "").split(">")[-1] or None, task.get("config", {})


def load_preset_model(preset):
    """The pretrainer saved in `preset` if it holds one, else its backbone."""
    task = pathlib.Path(preset) / "task.json"
    if task.is_file() and "AlbertPretrainer" in task.read_text(encoding="utf-8"):
        return AlbertPretrainer.from_preset(str(preset))
    return AlbertBackbone.from_preset(str(preset))


def preset_lowercase(preset):
    """Whether the preset's tokenizer lowercases (True without one)."""
    path = pathlib.Path(preset) / "tokenizer.json"
    if not path.is_file():
        return True
    lowercase = json.loads(path.read_text(encoding="utf-8")).get("config", {}).get("lowercase", True)
    return lowercase if isinstance(lowercase, bool) else True


def preset_vocabulary(preset):
    """The SentencePiece model bytes of `preset`, or None."""
    path = pathlib.Path(preset) / "assets" / "tokenizer" / "vocabulary.spm"
    if not os.path.lexists(path):
        return None
    return read_regular_bytes(path, "Preset file", MAX_ASSET_BYTES, follow_link=True)
