"""Convert ALBERT weights between Google's TF1 release, Hugging Face,
keras-hub, TF-Hub modules and keras_albert presets.

  python -m keras_albert convert --from=tf1 --src=albert_base_v2.tar.gz --dst=albert_base
  python -m keras_albert convert --from=keras_albert --to=hf --src=albert_base --dst=albert_hf

Every source is checked in full before anything is written (all missing,
unexpected or mis-shaped variables in one error), and the destination
appears whole or not at all.
"""

import json
import logging
import pathlib
import tempfile

from absl import flags

from keras_albert.cli.flag_types import define_boolean
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.progress import logged_step

# The converters import TensorFlow: they are imported where they are used,
# so that `--help` stays fast.

HELP = "convert checkpoints from/to TF1, Hugging Face, keras-hub, TF-Hub"

SOURCES = ("tf1", "hf", "keras_hub", "tfhub", "keras_albert")
TARGETS = ("keras_albert", "hf", "keras_hub")
_logger = logging.getLogger(__name__)


def define_flags(flag_values):
    fv = flag_values
    flags.DEFINE_enum("from", None, SOURCES, "format of --src (required)", required=True, flag_values=fv)
    flags.DEFINE_enum("to", "keras_albert", TARGETS, "format to write", flag_values=fv)
    flags.DEFINE_string("src", None, "source directory or tarball; --from=keras_albert also takes a preset name "
                        "(required)", required=True, flag_values=fv)
    flags.DEFINE_string("dst", None, "directory to write (required)", required=True, flag_values=fv)
    flags.DEFINE_string("config", None,
                        "JSON object of backbone arguments the source does not store "
                        "(TF-Hub modules: num_layers for non-official widths)", flag_values=fv)
    define_boolean("overwrite", False, "replace --dst even if it is a directory this tool did not write", fv)


def _overrides(text):
    if text is None:
        return None
    try:
        overrides = json.loads(text)
    except ValueError as error:
        raise ValueError(f"`--config` is not valid JSON: {error}. Received: {text!r}") from None
    if not isinstance(overrides, dict):
        raise ValueError(f"`--config` must be a JSON object. Received: {text!r}")
    return overrides


def to_preset(source_format, src, dst, overrides=None, overwrite=False):
    """Writes a keras_albert preset for `src` at `dst`."""
    from keras_albert.convert.huggingface import convert_huggingface
    from keras_albert.convert.keras_hub_preset import convert_keras_hub_preset
    from keras_albert.convert.tf1_checkpoint import convert_tf1_checkpoint
    from keras_albert.convert.tfhub_module import convert_tfhub_module

    if source_format == "tf1":
        return convert_tf1_checkpoint(src, dst, overwrite=overwrite)
    if source_format == "hf":
        return convert_huggingface(src, dst, overwrite=overwrite)
    if source_format == "keras_hub":
        return convert_keras_hub_preset(src, dst, overwrite=overwrite)
    if source_format == "tfhub":
        return convert_tfhub_module(src, dst, overrides=overrides, overwrite=overwrite)
    raise ValueError(f"`--from` must be one of {SOURCES}. Received: {source_format!r}")


def from_preset(target_format, preset, dst, overwrite=False):
    """Writes the keras_albert preset at `preset` in `target_format`."""
    from keras_albert.convert.converted_preset import load_preset_model
    from keras_albert.convert.converted_preset import preset_lowercase
    from keras_albert.convert.converted_preset import preset_vocabulary
    from keras_albert.convert.huggingface import export_huggingface
    from keras_albert.convert.keras_hub_preset import export_keras_hub_preset

    with logged_step(_logger, f"Loading the keras_albert preset {str(preset)!r}"):
        model = load_preset_model(preset)
    vocabulary = preset_vocabulary(preset)
    if target_format == "hf":
        return export_huggingface(model, dst, vocabulary, overwrite=overwrite,
                                  lowercase=preset_lowercase(preset))
    if target_format == "keras_hub":
        # From the preset itself: a classifier goes with its head and labels.
        return export_keras_hub_preset(preset, dst, overwrite=overwrite)
    raise ValueError(f"`--to` must be one of {TARGETS}. Received: {target_format!r}")


def run(flag_values):
    source_format, target_format = flag_values["from"].value, flag_values.to
    src, dst, overwrite = pathlib.Path(flag_values.src), pathlib.Path(flag_values.dst), flag_values.overwrite
    if source_format == "keras_albert" and not src.exists():
        # A preset name, as every other command takes (bundled, official, handle).
        from keras_albert.presets.preset_resolution import resolve_preset

        src = pathlib.Path(resolve_preset(flag_values.src))
    if not src.exists():
        raise FileNotFoundError(f"`--src` does not exist: {str(src)!r}")
    if source_format != "keras_albert":  # (a keras_albert preset is checked as any preset)
        from keras_albert.convert.converted_preset import check_source

        check_source(src, "--src")
    if source_format == target_format:
        raise ValueError(f"`--from` and `--to` are both {source_format!r}: nothing to convert.")
    overrides = _overrides(flag_values.config)
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
