"""Export a preset for serving: raw-string SavedModel, TF-Hub modules or TFLite.

  python -m keras_albert export --preset=runs/sst/preset --format=saved_model --output=serving
  python -m keras_albert export --preset=albert_tiny_en --format=tfhub --output=albert_hub
  python -m keras_albert export --preset=runs/sst/preset --format=tflite --quantize=dynamic \\
      --sequence_length=64 --output=model.tflite
  python -m keras_albert export --preset=runs/sst/preset --format=tflite --raw_strings \\
      --quantize=dynamic --sequence_length=64 --output=model_text.tflite

Every export is checked against the Keras model before it is put in place;
a failed check leaves nothing behind and keeps any earlier export.
"""

import json
import pathlib

from keras_albert.cli.flag_choices import QUANTIZATIONS
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory

HELP = "export a preset as a raw-string SavedModel, TF-Hub modules or TFLite"
FORMATS = ("saved_model", "tfhub", "tflite")
_CHECK_TEXTS = [
    "It is a truth universally acknowledged.",
    "a small domesticated animal kept as a pet",
    "She walked slowly to the village in the evening.",
    "the act of running",
]


def add_arguments(parser):
    add = parser.add_argument
    add("--preset", required=True, help="preset name or directory (a fine-tuned task for saved_model/tflite)")
    add("--format", required=True, choices=FORMATS)
    add("--output", required=True, help="directory (saved_model, tfhub) or .tflite file")
    add("--quantize", default="none", choices=QUANTIZATIONS, help="tflite only")
    add("--sequence_length", type=int, default=None, help="tflite: fixed input length")
    add("--pair", action="store_true", help="saved_model, raw-string tflite: inputs text and text_pair")
    add("--raw_strings", action="store_true",
        help="tflite: take raw strings (tokenizer inside; run with tensorflow-text's op registrar)")
    add("--batch_size", type=int, default=1, help="raw-string tflite: fixed batch size")
    add("--texts", default=None,
        help="text file, one text per line: checks the export (and calibrates int8)")
    add("--overwrite", action="store_true",
        help="replace --output even if it is not an earlier export of this format")


def _texts(path):
    if path is None:
        return list(_CHECK_TEXTS)
    lines = [line.strip() for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines()]
    texts = [line for line in lines if line]
    if not texts:
        raise ValueError(f"`--texts` {path!r} holds no texts.")
    return texts


def _check_output(args):
    from keras_albert.export.tflite_export import check_output_file

    output = pathlib.Path(args.output)
    if args.format == "tflite":
        check_output_file(output, args.overwrite)
        return
    kind = "tfhub_modules" if args.format == "tfhub" else "saved_model"
    check_replaceable(output, kind, args.overwrite, name="--output")
    check_writable_directory(output.parent, name="--output")


def run(args):
    # The exporters import TensorFlow: imported here so `--help` stays fast.
    from keras_albert.convert.converted_preset import load_preset_model
    from keras_albert.convert.converted_preset import preset_vocabulary
    from keras_albert.export.raw_string_tflite import export_raw_string_tflite
    from keras_albert.export.serving_saved_model import export_serving_saved_model
    from keras_albert.export.task_loading import load_task
    from keras_albert.export.tfhub_export import export_tfhub
    from keras_albert.export.tflite_export import export_tflite
    from keras_albert.models.preset_resolution import resolve_preset

    if args.format != "tflite" and (args.quantize != "none" or args.sequence_length):
        raise ValueError("`--quantize` and `--sequence_length` apply to --format=tflite only.")
    if args.format != "tflite" and (args.raw_strings or args.batch_size != 1):
        raise ValueError("`--raw_strings` and `--batch_size` apply to --format=tflite only.")
    if args.format == "tflite" and args.quantize == "int8" and args.texts is None:
        raise ValueError("Full int8 is checked on held-out texts: pass --texts FILE (100 or more lines).")
    texts = _texts(args.texts)
    # The output is judged before the preset is loaded and converted.
    _check_output(args)
    preset = resolve_preset(args.preset)
    print(f"Exporting {args.preset!r} as {args.format} to {args.output!r}", flush=True)
    if args.format == "tfhub":
        vocabulary = preset_vocabulary(preset)
        if vocabulary is None:
            raise ValueError(f"Preset {args.preset!r} has no SentencePiece vocabulary to export.")
        difference = export_tfhub(
            load_preset_model(preset), vocabulary, args.output, overwrite=args.overwrite
        )
        report = {"format": "tfhub", "max_abs_difference": difference}
    elif args.format == "saved_model":
        difference = export_serving_saved_model(
            load_task(preset), args.output, pair=args.pair, check_texts=texts,
            overwrite=args.overwrite,
        )
        report = {"format": "saved_model", "max_abs_difference": difference}
    elif args.raw_strings:
        report = export_raw_string_tflite(
            load_task(preset), args.output, args.quantize, args.sequence_length,
            pair=args.pair, batch_size=args.batch_size, check_texts=texts,
            overwrite=args.overwrite,
        )
    else:
        report = export_tflite(
            load_task(preset), args.output, args.quantize, args.sequence_length,
            check_texts=texts, overwrite=args.overwrite,
        )
    print(json.dumps(report, indent=2), flush=True)
    return report
