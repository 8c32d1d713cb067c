"""Checkpoints in and out: Google's TF1 release, Hugging Face, keras-hub,
TF-Hub modules and keras_albert presets (what `python -m keras_albert
convert` runs).

Every source is checked in full before anything is written, and the
destination appears whole or not at all. The converters import TensorFlow
where they need it, when they are used.
"""

import logging
import pathlib
import tempfile

from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.progress import logged_step

SOURCES = ("tf1", "hf", "keras_hub", "tfhub", "keras_albert")
TARGETS = ("keras_albert", "hf", "keras_hub")
_logger = logging.getLogger(__name__)


def to_preset(source_format, src, dst, overrides=None, overwrite=False):
    """Writes a keras_albert preset for `src` at `dst`."""
    # Each converter is imported only when used: the TF-Hub one imports
    # TensorFlow, which the others run without.
    if source_format == "tf1":
        from keras_albert.convert.tf1_checkpoint import convert_tf1_checkpoint

        return convert_tf1_checkpoint(src, dst, overwrite=overwrite)
    if source_format == "hf":
        from keras_albert.convert.huggingface import convert_huggingface

        return convert_huggingface(src, dst, overwrite=overwrite)
    if source_format == "keras_hub":
        from keras_albert.convert.keras_hub_preset import convert_keras_hub_preset

        return convert_keras_hub_preset(src, dst, overwrite=overwrite)
    if source_format == "tfhub":
        from keras_albert.convert.tfhub_module import convert_tfhub_module

        return convert_tfhub_module(src, dst, overrides=overrides, overwrite=overwrite)
    raise ValueError(f"`--from` must be one of {SOURCES}. Received: {source_format!r}")


def from_preset(target_format, preset, dst, overwrite=False):
    """Writes the keras_albert preset at `preset` in `target_format`."""
    from keras_albert.convert.converted_preset import preset_lowercase
    from keras_albert.convert.converted_preset import preset_vocabulary
    from keras_albert.convert.huggingface import export_huggingface
    from keras_albert.convert.keras_hub_preset import export_keras_hub_preset

    if target_format == "hf":
        with logged_step(_logger, f"Loading the keras_albert preset {str(preset)!r}"):
            model = _model_for_hugging_face(preset)
        return export_huggingface(model, dst, preset_vocabulary(preset), overwrite=overwrite,
                                  lowercase=preset_lowercase(preset))
    if target_format == "keras_hub":
        # From the preset itself: a classifier goes with its head and labels.
        return export_keras_hub_preset(preset, dst, overwrite=overwrite)
    raise ValueError(f"`--to` must be one of {TARGETS}. Received: {target_format!r}")


def _model_for_hugging_face(preset):
    """The model of `preset` to write in Hugging Face's layout; a task head
    no layout there holds is refused rather than dropped."""
    from keras_albert.convert.converted_preset import load_preset_model
    from keras_albert.convert.converted_preset import task_config
    from keras_albert.convert.huggingface_tasks import TASK_HEADS
    from keras_albert.models.albert_masked_lm import AlbertMaskedLM

    task, _ = task_config(preset)
    if task in (None, "AlbertPretrainer"):
        return load_preset_model(preset)
    task_classes = {head.task_class.__name__: head.task_class for head in TASK_HEADS}
    task_classes["AlbertMaskedLM"] = AlbertMaskedLM
    if task not in task_classes:
        raise ValueError(
            f"Preset {str(preset)!r} holds an {task}, which has no Hugging Face ALBERT layout "
            f"(it takes {sorted(task_classes)} and AlbertPretrainer): converting it would drop its "
            "head. To convert its encoder alone, save it first: "
            "`keras_albert.AlbertBackbone.from_preset(PRESET).save_to_preset(DIRECTORY)`."
        )
    return task_classes[task].from_preset(str(preset))


def run_conversion(source_format, target_format, src, dst, overrides=None, overwrite=False):
    """Converts `src` (in `source_format`) to `target_format` at `dst`;
    returns what was written. `overrides`: backbone arguments a TF-Hub
    module does not store."""
    name = src
    src, dst = pathlib.Path(src), pathlib.Path(dst)
    if source_format == "keras_albert" and not src.exists():
        # A preset name, as every other command takes (bundled, official, handle).
        from keras_albert.presets.preset_resolution import resolve_preset

        src = pathlib.Path(resolve_preset(str(name)))
    if not src.exists():
        raise FileNotFoundError(f"`--src` does not exist: {str(src)!r}")
    if source_format != "keras_albert":  # (a keras_albert preset is checked as any preset)
        from keras_albert.convert.converted_preset import check_source

        check_source(src, "--src")
    if source_format == target_format:
        raise ValueError(f"`--from` and `--to` are both {source_format!r}: nothing to convert.")
    # Refusals that need no conversion come first.
    kind = "huggingface" if target_format == "hf" else "preset"
    check_replaceable(dst, kind, overwrite, name="--dst")
    check_writable_directory(dst.parent, name="--dst")
    print(f"Converting {source_format} {str(src)!r} -> {target_format} {str(dst)!r}", flush=True)
    if target_format == "keras_albert":
        written = to_preset(source_format, src, dst, overrides, overwrite)
    elif source_format == "keras_albert":
        written = from_preset(target_format, src, dst, overwrite)
    else:
        # Foreign to foreign: through a temporary keras_albert preset.
        with tempfile.TemporaryDirectory(prefix="keras_albert_convert_") as scratch:
            preset = to_preset(source_format, src, pathlib.Path(scratch) / "preset", overrides)
            written = from_preset(target_format, preset, dst, overwrite)
    print(f"Wrote {written}", flush=True)
    return written
