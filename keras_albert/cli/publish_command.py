"""Publish a preset: the Keras preset, its exports and a model card, uploaded
to Kaggle or Hugging Face when a handle is given.

  python -m keras_albert publish --preset=runs/sst/preset --output=published
  python -m keras_albert publish --preset=albert_tiny_en_student_supersense \\
      --output=published --handle=kaggle://OWNER/albert-supersense/keras/tiny
  python -m keras_albert publish --preset=runs/sst/preset --output=published \\
      --label_names=negative,positive --handle=hf://OWNER/albert-sst

The directory is written whole or not at all. Without a network the upload
fails with one line; the directory stays complete, and the same command
run again once online publishes and uploads it (it replaces its own
earlier output: no --overwrite needed).
"""

from absl import flags

from keras_albert.cli.flag_types import define_boolean
from keras_albert.cli.flag_types import read_lines
from keras_albert.pipelines.preset_checks import check_known_presets

HELP = "write a publishable directory with a model card; upload it to Kaggle or Hugging Face"
EXPORTS = ("auto", "none", "serving", "tfhub")
LICENSES = ("apache-2.0", "mit")


def define_flags(flag_values):
    fv = flag_values
    flags.DEFINE_string("preset", None, "preset name or directory (required)", required=True, flag_values=fv)
    flags.DEFINE_string("output", None, "directory to write (required)", required=True, flag_values=fv)
    flags.DEFINE_string("handle", None,
                        "where to upload: kaggle://OWNER/MODEL/keras/VARIATION or hf://[OWNER/]NAME "
                        "(default: write only)", flag_values=fv)
    flags.DEFINE_list("label_names", None,
                      "class names, comma-separated, for a classifier saved without them", flag_values=fv)
    flags.DEFINE_string("label_names_file", None,
                        "class names, one per line (like labels.txt), instead of --label_names", flag_values=fv)
    flags.DEFINE_multi_enum("exports", ["auto"], EXPORTS,
                            "exports beside the Keras preset: auto (serving SavedModel for a task, "
                            "TF-Hub modules for an encoder), none, or serving and/or tfhub", flag_values=fv)
    define_boolean("pair", False, "the serving SavedModel takes text and text_pair", fv)
    flags.DEFINE_string("title", None, "the card's title (default: the preset's or its run's folder name)",
                        flag_values=fv)
    flags.DEFINE_string("description", None,
                        "the card's description (default: the bundled preset's, or its task and origin)",
                        flag_values=fv)
    flags.DEFINE_string("base_model", None,
                        "the card's base_model: the Hugging Face Hub id of the model it was made from "
                        "(default: the official ALBERT it descends from, if any)", flag_values=fv)
    flags.DEFINE_list("datasets", [], "the card's datasets: Hugging Face Hub dataset ids, comma-separated "
                      "(default: nyu-mll/glue for a GLUE run, else none)", flag_values=fv)
    flags.DEFINE_string("training_data", None, "the card's training-data text", flag_values=fv)
    flags.DEFINE_multi_string("limitations", [], "a limitation for the card (repeat the flag)", flag_values=fv)
    flags.DEFINE_enum("license", "apache-2.0", LICENSES, "the card's and the upload's licence", flag_values=fv)
    flags.DEFINE_string("language", "en", "the card's language code ('' for none)", flag_values=fv)
    define_boolean("private", True, "a new Hugging Face repository is private", fv)
    flags.DEFINE_string("version_notes", "", "the upload's version notes / commit message", flag_values=fv)
    flags.DEFINE_string("texts", None, "text file, one text per line: checks the exports", flag_values=fv)
    define_boolean("overwrite", False, "replace --output even if it is not an earlier publication", fv)


def _exports(values):
    values = list(values)
    if values == ["auto"]:
        return "auto"
    if values == ["none"]:
        return ()
    if "auto" in values or "none" in values:
        raise ValueError(
            "`--exports` takes auto, none, or serving and/or tfhub; auto and none stand alone. "
            f"Received: {values}"
        )
    return tuple(values)


def check_inputs(flag_values):
    """Before TensorFlow is imported: the preset is one we know."""
    check_known_presets(flag_values.preset)


def run(flag_values):
    from keras_albert.pipelines.publishing import run_publish

    fv = flag_values
    if fv.label_names and fv.label_names_file:
        raise ValueError("Pass `--label_names` or `--label_names_file`, not both.")
    label_names = fv.label_names or (read_lines(fv.label_names_file, "--label_names_file")
                                     if fv.label_names_file else None)
    return run_publish(
        fv.preset, fv.output, fv.handle, label_names=label_names, exports=_exports(fv.exports),
        pair=fv.pair, title=fv.title, description=fv.description, training_data=fv.training_data,
        limitations=tuple(fv.limitations), license=fv.license, language=fv.language or None,
        base_model=fv.base_model, datasets=tuple(fv.datasets),
        private=fv.private, version_notes=fv.version_notes,
        check_texts=read_lines(fv.texts, "--texts") if fv.texts else None, overwrite=fv.overwrite,
    )
