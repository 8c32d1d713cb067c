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

from absl import flags

from keras_albert.cli.flag_choices import QUANTIZATIONS
from keras_albert.cli.flag_types import define_boolean
from keras_albert.cli.flag_types import read_lines

HELP = "export a preset as a raw-string SavedModel, TF-Hub modules or TFLite"
# keras_albert.pipelines.exporting.FORMATS (imported when the command runs,
# so that `--help` stays fast).
FORMATS = ("saved_model", "tfhub", "tflite")


def define_flags(flag_values):
    fv = flag_values
    flags.DEFINE_string("preset", None,
                        "preset name or directory, a fine-tuned task for saved_model/tflite (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_enum("format", None, FORMATS, "what to write (required)", required=True, flag_values=fv)
    flags.DEFINE_string("output", None, "directory (saved_model, tfhub) or .tflite file (required)",
                        required=True, flag_values=fv)
    flags.DEFINE_enum("quantize", "none", QUANTIZATIONS,
                      "tflite only: none (float32), float16, dynamic (int8 weights, float activations; "
                      "about a third of float32's size, no calibration), int8 (weights and activations, "
                      "calibrated; written only if it gives Keras's label on 99 % of --texts)",
                      flag_values=fv)
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


def check_inputs(flag_values):
    """Before TensorFlow is imported: flags that do not go together, and a
    preset that is nothing we know."""
    from keras_albert.pipelines.exporting import check_export_flags

    fv = flag_values
    check_export_flags(fv.format, fv.quantize, fv.sequence_length, fv.raw_strings, fv.batch_size,
                       fv.metadata, fv.calibration_texts, preset=fv.preset)


def run(flag_values):
    from keras_albert.pipelines.exporting import run_export

    fv = flag_values
    check_inputs(fv)
    return run_export(
        fv.preset, fv.format, fv.output, quantize=fv.quantize, sequence_length=fv.sequence_length,
        pair=fv.pair, raw_strings=fv.raw_strings, batch_size=fv.batch_size, metadata=fv.metadata,
        texts=read_lines(fv.texts, "--texts") if fv.texts else None,
        calibration_texts=(read_lines(fv.calibration_texts, "--calibration_texts")
                           if fv.calibration_texts else None),
        overwrite=fv.overwrite,
    )
