"""Convert ALBERT weights between Google's TF1 release, Hugging Face,
keras-hub, TF-Hub modules and keras_albert presets.

  python -m keras_albert convert --from=tf1 --src=albert_base_v2.tar.gz --dst=albert_base
  python -m keras_albert convert --from=keras_albert --to=hf --src=albert_base --dst=albert_hf

Every source is checked in full before anything is written (all missing,
unexpected or mis-shaped variables in one error), and the destination
appears whole or not at all.
"""

import json

from absl import flags

from keras_albert.cli.flag_types import define_boolean
from keras_albert.pipelines.preset_checks import check_known_presets

HELP = "convert checkpoints from/to TF1, Hugging Face, keras-hub, TF-Hub"

# keras_albert.pipelines.conversion.SOURCES and TARGETS (that module is
# imported when the command runs, so that `--help` stays fast).
SOURCES = ("tf1", "hf", "keras_hub", "tfhub", "keras_albert")
TARGETS = ("keras_albert", "hf", "keras_hub")


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


def check_inputs(flag_values):
    """Before TensorFlow is imported: a keras_albert source is a preset we
    know (the other formats' sources are checked in full when read)."""
    if flag_values["from"].value == "keras_albert":
        check_known_presets(flag_values.src)


def run(flag_values):
    from keras_albert.pipelines.conversion import run_conversion

    return run_conversion(
        flag_values["from"].value, flag_values.to, flag_values.src, flag_values.dst,
        overrides=_overrides(flag_values.config), overwrite=flag_values.overwrite,
    )
