"""Export a preset as a raw-string SavedModel, TF-Hub modules or a TFLite
file (what `python -m keras_albert export` runs), each checked against the
Keras model. TensorFlow-only: the exporters import it when they run.
"""

import json
import logging
import pathlib

from keras_albert.presets.preset_kind import check_preset_known
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.progress import logged_step

FORMATS = ("saved_model", "tfhub", "tflite")
# What non-int8 exports are checked on when no texts are given.
CHECK_TEXTS = [
    "It is a truth universally acknowledged.",
    "a small domesticated animal kept as a pet",
    "She walked slowly to the village in the evening.",
    "the act of running",
]
_logger = logging.getLogger(__name__)


def _check_output(fmt, output, overwrite):
    from keras_albert.export.tflite_export import check_output_file

    output = pathlib.Path(output)
    if fmt == "tflite":
        check_output_file(output, overwrite)
        return
    kind = "tfhub_modules" if fmt == "tfhub" else "saved_model"
    check_replaceable(output, kind, overwrite, name="--output")
    check_writable_directory(output.parent, name="--output")


def check_export_flags(fmt, quantize, sequence_length, raw_strings, batch_size, metadata, calibration_texts,
                       preset=None):
    """Refuses options that do not go with `fmt` (before any file is read),
    and a `preset` that is nothing we know (before Keras is imported)."""
    if preset is not None:
        check_preset_known(preset)
    if fmt != "tflite" and (quantize != "none" or sequence_length):
        raise ValueError("`--quantize` and `--sequence_length` apply to --format=tflite only.")
    if fmt != "tflite" and (raw_strings or batch_size != 1):
        raise ValueError("`--raw_strings` and `--batch_size` apply to --format=tflite only.")
    if metadata and (fmt != "tflite" or raw_strings):
        raise ValueError(
            "`--metadata` describes token-input TFLite files (--format=tflite without --raw_strings)."
        )
    if calibration_texts and quantize != "int8":
        raise ValueError("`--calibration_texts` applies to --format=tflite --quantize=int8 only.")


def _metadata(metadata, task):
    """--metadata's value for `task` (None: on for classifiers with label
    names), after checking that the metadata writer is installed."""
    from keras_albert.export.tflite_metadata import metadata_by_default
    from keras_albert.export.tflite_metadata import metadata_writer_module

    metadata = metadata_by_default(task) if metadata is None else metadata
    if metadata:
        try:
            metadata_writer_module()
        except ImportError as error:  # One line naming the fix, as for bad input.
            raise ValueError(str(error)) from None
    return metadata


def run_export(preset, fmt, output, quantize="none", sequence_length=None, pair=False,
               raw_strings=False, batch_size=1, metadata=None, texts=None,
               calibration_texts=None, overwrite=False):
    """Exports `preset` as `fmt` to `output`; returns the check's report.

    `texts` check the export (default: a few sentences; for full int8, the
    bundled held-out glosses); `calibration_texts` calibrate full int8.
    """
    from keras_albert.convert.converted_preset import load_preset_model
    from keras_albert.convert.converted_preset import preset_vocabulary
    from keras_albert.convert.converted_preset import task_config
    from keras_albert.export.int8_calibration import FLAG_NAMES
    from keras_albert.export.int8_calibration import calibration_and_check_texts
    from keras_albert.export.raw_string_tflite import export_raw_string_tflite
    from keras_albert.export.serving_saved_model import export_serving_saved_model
    from keras_albert.export.tfhub_export import export_tfhub
    from keras_albert.export.tflite_export import export_tflite
    from keras_albert.presets.preset_resolution import resolve_preset
    from keras_albert.publishing.task_loading import load_task

    name = preset
    check_export_flags(fmt, quantize, sequence_length, raw_strings, batch_size, metadata, calibration_texts)
    # Full int8 is checked on held-out texts (default: bundled glosses
    # never used for calibration); other modes on a few short sentences.
    if texts is None and quantize != "int8":
        texts = list(CHECK_TEXTS)
    if quantize == "int8":
        # Too few texts are named by their flags, before anything is loaded.
        calibration_and_check_texts(calibration_texts, texts, names=FLAG_NAMES)
    # The output is judged before the preset is loaded and converted.
    _check_output(fmt, output, overwrite)
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
        if fmt != "saved_model" and type(task).__name__ == "AlbertCausalLM":
            raise ValueError(
                f"Preset {name!r} holds an AlbertCausalLM, which exports as --format=saved_model "
                f"only (a `generate` signature). Received: --format={fmt}"
            )
        if fmt == "saved_model":
            difference = export_serving_saved_model(
                task, output, pair=pair, check_texts=texts, overwrite=overwrite
            )
            report = {"format": "saved_model", "max_abs_difference": difference}
        elif raw_strings:
            report = export_raw_string_tflite(
                task, output, quantize, sequence_length, pair=pair,
                batch_size=batch_size, check_texts=texts, representative_texts=calibration_texts,
                overwrite=overwrite,
            )
        else:
            report = export_tflite(
                task, output, quantize, sequence_length,
                check_texts=texts, representative_texts=calibration_texts, overwrite=overwrite,
                metadata=_metadata(metadata, task),
            )
    print(json.dumps(report, indent=2), flush=True)
    return report
