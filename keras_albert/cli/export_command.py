"""Export a preset for serving: raw-string SavedModel, TF-Hub modules or TFLite.

  python -m keras_albert export --preset=runs/sst/preset --format=saved_model --output=serving
  python -m keras_albert export --preset=albert_tiny_en --format=tfhub --output=albert_hub
  python -m keras_albert export --preset=runs/sst/preset --format=tflite --quantize=dynamic \\
      --sequence_length=64 --output=model.tflite
  python -m keras_albert export --preset=runs/sst/preset --format=tflite --raw_strings \\
      --quantize=dynamic --sequence_length=64 --output=model_text.tflite

A token-input TFLite file of a classifier with label names carries TFLite
metadata (labels, SentencePiece model) by default, so MediaPipe's
TextClassifier runs it on raw strings; --nometadata leaves it out.

Every export is checked against the Keras model before it is put in place;
a failed check leaves nothing behind and keeps any earlier export.
"""

import json
import logging
import pathlib

from absl import flags

from keras_albert.cli.flag_choices import QUANTIZATIONS
from keras_albert.cli.flag_types import define_boolean
from keras_albert.cli.flag_types import read_lines
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.progress import logged_step

HELP = "export a preset as a raw-string SavedModel, TF-Hub modules or TFLite"
FORMATS = ("saved_model", "tfhub", "tflite")
_CHECK_TEXTS = [
    "It is a truth universally acknowledged.",
    "a small domesticated animal kept as a pet",
    "She walked slowly to the village in the evening.",
    "the act of running",
]
_logger = logging.getLogger(__name__)


def define_flags(flag_values):
    fv = flag_values
    flags.DEFINE_string("preset", None,
                        "preset name or directory, a fine-tuned task for saved_model/tflite (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_enum("format", None, FORMATS, "what to write (required)", required=True, flag_values=fv)
    flags.DEFINE_string("output", None, "directory (saved_model, tfhub) or .tflite file (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_enum("quantize", "none", QUANTIZATIONS, "tflite only", flag_values=fv)
    flags.DEFINE_integer("sequence_length", None, "tflite: fixed input length (default: the preset's)",
                         flag_values=fv)
    define_boolean("pair", False, "saved_model, raw-string tflite: inputs text and text_pair", fv)
    define_boolean("raw_strings", False,
                   "tflite: take raw strings (tokenizer inside; run with tensorflow-text's op registrar)", fv)
    flags.DEFINE_integer("batch_size", 1, "raw-string tflite: fixed batch size", flag_values=fv)
    define_boolean("metadata", None,
                   "token-input tflite: TFLite metadata (labels, SentencePiece model) for MediaPipe and other "
                   "runtimes; outputs probabilities (default: on for classifiers with label names)", fv)
    flags.DEFINE_string("calibration_texts", None,
                        "tflite int8: text file of 100+ calibration texts, one per line (default: 300 bundled "
                        "English texts)", flag_values=fv)
    flags.DEFINE_string("texts", None,
                        "text file, one text per line, the export is checked on (int8: 100+ texts not used "
                        "for calibration, default 200 held-out bundled glosses; other modes: four short sentences)",
                        flag_values=fv)
    define_boolean("overwrite", False, "replace --output even if it is not an earlier export of this format", fv)


def _texts(path):
    return list(_CHECK_TEXTS) if path is None else read_lines(path, "--texts")


def _check_output(flag_values):
    from keras_albert.export.tflite_export import check_output_file

    output = pathlib.Path(flag_values.output)
    if flag_values.format == "tflite":
        check_output_file(output, flag_values.overwrite)
        return
    kind = "tfhub_modules" if flag_values.format == "tfhub" else "saved_model"
    check_replaceable(output, kind, flag_values.overwrite, name="--output")
    check_writable_directory(output.parent, name="--output")


def _check_combination(flag_values):
    if flag_values.format != "tflite" and (flag_values.quantize != "none" or flag_values.sequence_length):
        raise ValueError("`--quantize` and `--sequence_length` apply to --format=tflite only.")
    if flag_values.format != "tflite" and (flag_values.raw_strings or flag_values.batch_size != 1):
        raise ValueError("`--raw_strings` and `--batch_size` apply to --format=tflite only.")
    if flag_values.metadata and (flag_values.format != "tflite" or flag_values.raw_strings):
        raise ValueError(
            "`--metadata` describes token-input TFLite files (--format=tflite without --raw_strings)."
        )
    if flag_values.calibration_texts and flag_values.quantize != "int8":
        raise ValueError("`--calibration_texts` applies to --format=tflite --quantize=int8 only.")


def _metadata(flag_values, task):
    """--metadata's value for `task` (unset: on for classifiers with label
    names), after checking that the metadata writer is installed."""
    from keras_albert.export.tflite_metadata import metadata_by_default
    from keras_albert.export.tflite_metadata import metadata_writer_module

    metadata = metadata_by_default(task) if flag_values.metadata is None else flag_values.metadata
    if metadata:
        try:
            metadata_writer_module()
        except ImportError as error:  # One line naming the fix, as for bad input.
            raise ValueError(str(error)) from None
    return metadata


def run(flag_values):
    # The exporters import TensorFlow: imported here so `--help` stays fast.
    from keras_albert.convert.converted_preset import load_preset_model
    from keras_albert.convert.converted_preset import preset_vocabulary
    from keras_albert.convert.converted_preset import task_config
    from keras_albert.export.raw_string_tflite import export_raw_string_tflite
    from keras_albert.export.serving_saved_model import export_serving_saved_model
    from keras_albert.export.task_loading import load_task
    from keras_albert.export.tfhub_export import export_tfhub
    from keras_albert.export.tflite_export import export_tflite
    from keras_albert.presets.preset_resolution import resolve_preset

    name, fmt, output, overwrite = flag_values.preset, flag_values.format, flag_values.output, flag_values.overwrite
    _check_combination(flag_values)
    # Full int8 is checked on held-out texts (default: bundled glosses
    # never used for calibration); other modes on a few short sentences.
    int8 = flag_values.quantize == "int8"
    texts = None if int8 and flag_values.texts is None else _texts(flag_values.texts)
    calibration = (read_lines(flag_values.calibration_texts, "--calibration_texts")
                   if flag_values.calibration_texts else None)
    # The output is judged before the preset is loaded and converted.
    _check_output(flag_values)
    preset = resolve_preset(name)
    print(f"Exporting {name!r} as {fmt} to {output!r}", flush=True)
    if fmt == "tfhub":
        vocabulary = preset_vocabulary(preset)
        if vocabulary is None:
            raise ValueError(f"Preset {name!r} has no SentencePiece vocabulary to export.")
        with logged_step(_logger, f"Loading {name!r}"):
            # A classifier with class names is loaded whole so that its
            # labels.txt goes with the encoder; anything else as before.
            model = load_task(preset) if task_config(preset)[1].get("label_names") else load_preset_model(preset)
        difference = export_tfhub(model, vocabulary, output, overwrite=overwrite)
        report = {"format": "tfhub", "max_abs_difference": difference}
    else:
        with logged_step(_logger, f"Loading {name!r}"):
            task = load_task(preset)
        if fmt == "saved_model":
            difference = export_serving_saved_model(
                task, output, pair=flag_values.pair, check_texts=texts, overwrite=overwrite
            )
            report = {"format": "saved_model", "max_abs_difference": difference}
        elif flag_values.raw_strings:
            report = export_raw_string_tflite(
                task, output, flag_values.quantize, flag_values.sequence_length, pair=flag_values.pair,
                batch_size=flag_values.batch_size, check_texts=texts, representative_texts=calibration,
                overwrite=overwrite,
            )
        else:
            report = export_tflite(
                task, output, flag_values.quantize, flag_values.sequence_length,
                check_texts=texts, representative_texts=calibration, overwrite=overwrite,
                metadata=_metadata(flag_values, task),
            )
    print(json.dumps(report, indent=2), flush=True)
    return report
