"""Publish a preset: one directory a model hub can take whole, and the upload.

`publish_preset(preset, output, handle=None)` writes `output/`:

    README.md              the model card (front matter for Kaggle and the
                           Hugging Face Hub; see `model_card.py`)
    config.json, task.json, tokenizer.json, preprocessor.json,
    metadata.json, *.weights.h5, assets/
                           the Keras preset, as keras-hub lays it out, so
                           `keras_albert.<Task>.from_preset(handle)` loads it
    labels.txt             class names, line i naming class id i (classifiers)
    WORDNET_LICENSE        WordNet's licence, for a model trained on its text
    serving/               raw-string serving SavedModel (task presets), or
    tfhub/                 TF-Hub encoder + preprocessor (encoder presets)
    training_run/          the run's metrics.json (and pretrain's settings.json),
                           for a preset written by `finetune`, `pretrain` or
                           `distill` (OUTPUT/preset)

The directory is staged and renamed into place only when complete (every
export checked against the Keras model), then uploaded when `handle` is
given: `kaggle://OWNER/MODEL/keras/VARIATION` or `hf://[OWNER/]NAME`. A
failed upload raises `UploadError` and leaves the complete directory; the
same call again once online retries (it replaces its own earlier output),
or `upload_published` uploads the directory as it is; nothing claims
success.
"""

import json
import os
import pathlib
import shutil

from keras_albert.convert.converted_preset import load_preset_model
from keras_albert.convert.converted_preset import preset_vocabulary
from keras_albert.convert.converted_preset import task_config
from keras_albert.convert.keras_hub_preset import keras_hub_can_hold
from keras_albert.models.albert_presets import BUNDLED_PRESET_DESCRIPTIONS
from keras_albert.models.albert_presets import OFFICIAL_PRESETS
from keras_albert.models.albert_presets import PRESET_ALIASES
from keras_albert.models.label_names import check_label_names
from keras_albert.models.label_names import check_num_classes
from keras_albert.presets.preset_resolution import bundled_presets
from keras_albert.presets.preset_resolution import bundled_presets_dir
from keras_albert.presets.preset_resolution import resolve_preset
from keras_albert.publishing.hub_upload import check_handle
from keras_albert.publishing.hub_upload import check_license
from keras_albert.publishing.hub_upload import check_uploader
from keras_albert.publishing.hub_upload import upload_directory
from keras_albert.publishing.model_card import TASK_WORDS
from keras_albert.publishing.model_card import CardFacts
from keras_albert.publishing.model_card import render_model_card
from keras_albert.publishing.preset_records import find_records
from keras_albert.publishing.preset_records import recorded_label_names
from keras_albert.publishing.task_loading import TASK_CLASSES
from keras_albert.publishing.training_data_licences import PRESET_DATA
from keras_albert.publishing.training_data_licences import PRESET_WEIGHTS_LICENCE
from keras_albert.publishing.training_data_licences import uses_wordnet
from keras_albert.utils.atomic_directory import MARKER_FILE
from keras_albert.utils.atomic_directory import artifact_kind
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import check_replaceable
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.backend import TensorFlowRequiredError
from keras_albert.utils.backend import optional_tensorflow
from keras_albert.utils.backend import require_tensorflow
from keras_albert.utils.label_file import LABELS_FILE
from keras_albert.utils.label_file import check_label_lines
from keras_albert.utils.label_file import write_label_file
from keras_albert.utils.package_resources import open_package_file
from keras_albert.utils.regular_files import check_regular_file

EXPORTS = ("serving", "tfhub")
WORDNET_LICENSE = "WORDNET_LICENSE"
# Tasks whose classes have names: a published one must carry them.
_NAMED_CLASSES = ("AlbertClassifier", "AlbertTokenClassifier")
_CHECK_TEXTS = [
    "It is a truth universally acknowledged.",
    "a small domesticated animal kept as a pet",
    "She walked slowly to the village in the evening.",
]


def _check_exports(exports):
    if exports == "auto":
        return exports
    if isinstance(exports, str) or not all(e in EXPORTS for e in exports):
        raise ValueError(
            f'`exports` must be "auto" or a list of {EXPORTS} (may be empty: the Keras preset '
            f"alone). Received: exports={exports!r}"
        )
    return tuple(dict.fromkeys(exports))


def _check_utf8_path(preset):
    """The card names the source preset; a name with bytes that are not
    UTF-8 (decoded by Python as surrogates) cannot be written into it."""
    try:
        str(preset).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"`preset` {os.fsencode(str(preset))!r} holds bytes that are not UTF-8; the model "
            "card names its source preset, so rename it with UTF-8 characters only."
        ) from None


def _check_output(output, preset_dir, overwrite):
    output = pathlib.Path(output).absolute()
    source, target = preset_dir.resolve(), output.resolve()
    if target == source or source in target.parents or target in source.parents:
        raise ValueError(
            f"`output` {str(output)!r} and the preset {str(preset_dir)!r} must not contain "
            "each other: publishing copies the preset and then replaces `output`."
        )
    check_replaceable(output, "published_model", overwrite, name="output")
    # The staging directory is made beside `output`; the message names `output`.
    check_writable_directory(output.parent if output.exists() else output, name="output")
    return output


def _resolve_label_names(task_class, config, label_names, records, preset):
    """(names, where they come from); an error when a classifier has none."""
    num_classes = config.get("num_classes")
    if task_class in _NAMED_CLASSES and num_classes is not None:
        check_num_classes(num_classes, name=f"task.json of preset {preset!r}: config.num_classes")
    if task_class not in _NAMED_CLASSES or num_classes in (None, 1):
        if label_names is not None:
            raise ValueError(
                f"`label_names` names the classes of a classifier; preset {preset!r} holds "
                f"{task_class or 'no task'}{' (a regressor)' if num_classes == 1 else ''}. "
                f"Received: label_names={label_names!r}"
            )
        return None, None
    saved = config.get("label_names")
    if label_names is not None:
        label_names = check_label_names(label_names, num_classes)
        if saved and saved != label_names:
            raise ValueError(
                f"Preset {preset!r} already names its classes {saved}; `label_names` "
                f"{label_names} differs. Publish the names the model was trained with."
            )
        return label_names, "given when publishing, now saved in task.json"
    if saved:
        return check_label_names(saved, num_classes), "saved with the model in task.json"
    recorded = recorded_label_names(records)
    if recorded and len(recorded) == num_classes:
        return check_label_names(recorded, num_classes), (
            "recorded by finetune in training_run/metrics.json, now saved in task.json")
    raise ValueError(
        f"Preset {preset!r} is a {task_class} with {num_classes} classes but no class names "
        "(saved before `label_names` existed, and no finetune metrics.json beside it). A "
        "published classifier must say what its classes are: pass label_names=[...] (one "
        "name per class id, in order)."
    )


def _copy_file(source, target):
    # Links and special files were refused when the preset was resolved
    # (a hub cache's links lead to regular blobs); checked again as copied.
    check_regular_file(source, "Preset file", follow_link=True)
    return shutil.copy2(source, target)


def _copy_preset(preset_dir, staging, records):
    # The preset as it is, without this package's bookkeeping files.
    shutil.copytree(preset_dir, staging, dirs_exist_ok=True, copy_function=_copy_file,
                    ignore=shutil.ignore_patterns(MARKER_FILE, ".*.partial.*", ".*.old.*"))
    for record in records:
        target = staging / record.published_as
        target.parent.mkdir(parents=True, exist_ok=True)
        # As read (and stripped of this machine's paths), not copied.
        target.write_text(json.dumps(record.data, indent=2), encoding="utf-8")


def _shown_path(value):
    """An absolute path of this machine by its name (a preset/ by its run's
    too): a published card or record names files, never where they lay."""
    if isinstance(value, str) and os.path.isabs(value) and "\n" not in value:
        parts = pathlib.PurePath(os.path.normpath(value)).parts[1:]
        return "/".join(parts[-2:] if parts[-1:] == ("preset",) else parts[-1:]) or value
    if isinstance(value, dict):
        # Class names are names, whatever they look like.
        return {key: item if key in ("labels", "label_names") else _shown_path(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_shown_path(item) for item in value]
    return value


def _without_machine_paths(records):
    for record in records:
        record.data = _shown_path(record.data)
    return records


def _write_names(staging, label_names):
    # The one edit to the copied preset: the names, in the key the task's
    # get_config writes (what save_to_preset would produce).
    task_file = staging / "task.json"
    task = json.loads(task_file.read_text(encoding="utf-8"))
    if task["config"].get("label_names") != label_names:
        task["config"]["label_names"] = label_names
        task_file.write_text(json.dumps(task, indent=4), encoding="utf-8")


def _load(staging, task_class):
    if task_class in TASK_CLASSES:
        return TASK_CLASSES[task_class].from_preset(str(staging))
    return load_preset_model(str(staging))


def _require_tensorflow_for(exports):
    """Exports are TensorFlow SavedModels: asked for (or left to "auto")
    where TensorFlow or its backend is missing, one line says what to do,
    before any work."""
    if not exports:
        return
    what = ("default exports=\"auto\" (a serving SavedModel for a task, TF-Hub modules for an "
            "encoder)" if exports == "auto" else f"exports={list(exports)}")
    try:
        require_tensorflow(f"publish's {what}", backend_too=True)
    except TensorFlowRequiredError as error:
        raise TensorFlowRequiredError(
            f"{error} To publish the preset and its model card alone: exports=() (--exports=none)."
        ) from None


def _plan_exports(exports, model, task_class):
    """The exports to write and sentences for those left out (auto mode)."""
    from keras_albert.export.tfhub_export import check_hub_exportable

    serving_ok = task_class in TASK_CLASSES and getattr(model, "preprocessor", None) is not None
    try:
        check_hub_exportable(getattr(model, "backbone", model))
        hub_problem = None
    except ValueError as error:
        hub_problem = str(error)
    if exports != "auto":
        return exports, []
    if serving_ok:
        return ("serving",), []
    notes = ["No serving SavedModel: the preset holds no fine-tuned task with a preprocessor."]
    if hub_problem:
        return (), notes + [f"No TF-Hub modules: {hub_problem}"]
    return ("tfhub",), notes


def _serving_description(path):
    # The signature as written (read from saved_model.pb: no graph loading).
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel.FromString((path / "saved_model.pb").read_bytes())
    signature = saved.meta_graphs[0].signature_def["serving_default"]
    inputs = ", ".join(f"`{name}`" for name in sorted(signature.inputs))
    outputs = ", ".join(f"`{name}`" for name in sorted(signature.outputs))
    return (f"SavedModel, signature `serving_default`: raw strings {inputs} -> {outputs}; "
            "tokenization in the graph (`import tensorflow_text` before loading)")


def _write_exports(staging, model, planned, pair, check_texts, length_buckets):
    files = {}
    if not planned:
        return files
    from keras_albert.export.serving_saved_model import export_serving_saved_model
    from keras_albert.export.tfhub_export import export_tfhub

    if "serving" in planned:
        export_serving_saved_model(model, staging / "serving", pair=pair, check_texts=check_texts,
                                   length_buckets=length_buckets)
        files["serving/"] = _serving_description(staging / "serving")
    if "tfhub" in planned:
        vocabulary = preset_vocabulary(staging)
        if vocabulary is None:
            raise ValueError("TF-Hub modules need the preset's SentencePiece vocabulary; it has none.")
        export_tfhub(model, vocabulary, staging / "tfhub")
        mlm = ", and `encoder.mlm` with the masked-LM head" if hasattr(model, "masked_lm_head") else ""
        names = "; `labels.txt` names the classes" if getattr(model, "label_names", None) else ""
        files["tfhub/"] = ("TF-Hub modules in the ALBERT interface: `encoder/` (input_word_ids, "
                           "input_mask, input_type_ids -> pooled_output, sequence_output, "
                           f"encoder_outputs{mlm}) and `preprocessor/` (strings -> encoder inputs){names}")
    return files


def _json_config(path):
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("config", {})


def _entries(directory):
    """Top-level names in `directory` (directories with a trailing /),
    without this package's bookkeeping files."""
    return sorted(
        p.name + ("/" if p.is_dir() else "") for p in directory.iterdir() if p.name != MARKER_FILE
    )


def _versions():
    import keras
    import keras_hub

    import keras_albert

    versions = {"keras_albert": keras_albert.__version__, "Keras": keras.__version__,
                "Keras backend": keras.config.backend(), "keras-hub": keras_hub.__version__}
    tensorflow, _ = optional_tensorflow()
    if tensorflow is not None:
        versions["TensorFlow"] = tensorflow.__version__
    return versions


def _title(preset, preset_dir):
    if not os.path.isdir(preset):  # a bundled or official name, a handle
        return str(preset)
    return preset_dir.parent.name if preset_dir.name == "preset" else preset_dir.name


def _description(preset, task_class, lineage):
    if preset in bundled_presets():
        return BUNDLED_PRESET_DESCRIPTIONS.get(preset)
    if preset in OFFICIAL_PRESETS:
        return OFFICIAL_PRESETS[preset]["description"]
    words = TASK_WORDS.get(task_class, task_class)
    start = f", made from `{lineage[0]}`" if lineage else ""
    return f"ALBERT for {words}{start}, published with keras_albert."


def _preset_name(name):
    """A bundled or official preset's name for `name` (aliases and the
    bundled directories included), or None."""
    name = PRESET_ALIASES.get(str(name), str(name))
    if name in PRESET_DATA:
        return name
    path = pathlib.Path(name)
    if path.is_absolute() and path.parent == bundled_presets_dir() and path.name in PRESET_DATA:
        return path.name
    return None


def _lineage(preset, records):
    """The bundled or official presets this one is or descends from, itself
    first: what the records say it was fine-tuned or distilled from."""
    names = [preset] + [
        record.data.get("preset") if record.kind == "finetuning" else record.data.get("teacher")
        for record in records if record.kind in ("finetuning", "distillation")
    ]
    known = [_preset_name(name) for name in names if name]
    return list(dict.fromkeys(name for name in known if name))


def _data_sources(lineage):
    return list(dict.fromkeys(source for name in lineage for source in PRESET_DATA[name]))


def _base_model(lineage, given):
    if given:
        return given
    for name in lineage:
        handle = OFFICIAL_PRESETS.get(name, {}).get("hf_handle")
        if handle:
            return handle.removeprefix("hf://")
    return None


def _datasets(records, given):
    if given:
        return list(given)
    # GLUE is the one task data finetune reads by a Hub dataset's name.
    glue = any((r.data.get("data") or {}).get("glue_task") for r in records if r.kind == "finetuning")
    return ["nyu-mll/glue"] if glue else []


def _facts(preset, preset_dir, staging, model, task_class, label_names, label_source, records,
           files, not_exported, options):
    backbone = getattr(model, "backbone", model)
    regression = task_class == "AlbertClassifier" and getattr(model, "num_classes", None) == 1
    metadata_file = staging / "metadata.json"
    sources = _data_sources(options["lineage"])
    not_preset = {"README.md", LABELS_FILE, WORDNET_LICENSE, *files,
                  *(r.published_as.split("/")[0] + ("/" if "/" in r.published_as else "") for r in records)}
    preset_files = [name for name in _entries(staging) if name not in not_preset]
    files = {
        "README.md": "this model card",
        **({WORDNET_LICENSE: "WordNet 3.0's licence (its text trained this model)"}
           if uses_wordnet(sources) else {}),
        ", ".join(preset_files):
            f"the Keras preset (keras-hub layout; `keras_albert.{task_class or 'AlbertBackbone'}"
            ".from_preset` loads it)",
        **({"labels.txt": "class names, line i naming class id i"} if label_names else {}),
        **files,
        **{r.published_as: f"record: {r.kind.replace('_', ' ')}" for r in records},
    }
    lineage = options["lineage"]
    return CardFacts(
        title=options["title"] or _title(preset, preset_dir),
        description=options["description"] or _description(preset, task_class, lineage[1:] or lineage),
        source=_shown_path(str(preset)), task_class=task_class,
        backbone_config=backbone.get_config(), backbone_parameters=backbone.count_params(),
        model_parameters=model.count_params(), regression=regression,
        label_names=label_names, label_source=label_source,
        sequence_length=_json_config(staging / "preprocessor.json").get("sequence_length"),
        lowercase=_json_config(staging / "tokenizer.json").get("lowercase"),
        records=records, files=files, not_exported=not_exported,
        metadata=json.loads(metadata_file.read_text()) if metadata_file.is_file() else {},
        license=options["license"], language=options["language"], handle=options["handle"],
        training_data=options["training_data"], limitations=list(options["limitations"]),
        versions=_versions(),
        keras_hub_loadable=keras_hub_can_hold(backbone.get_config(), task_class),
        base_model=_base_model(lineage, options["base_model"]),
        datasets=_datasets(records, options["datasets"]), data_sources=sources,
        weights_origin=next((PRESET_WEIGHTS_LICENCE[n] for n in lineage if n in PRESET_WEIGHTS_LICENCE), None),
    )


def publish_preset(
    preset, output, handle=None, *, label_names=None, exports="auto", pair=False,
    title=None, description=None, training_data=None, limitations=(), license="apache-2.0",
    language="en", base_model=None, datasets=(), private=True, version_notes="", check_texts=None,
    length_buckets="auto", overwrite=False,
):
    """Writes a publishable directory for `preset` and uploads it to `handle`.

    Args:
        preset: a preset directory, a bundled or official preset name.
        output: the directory to write; replaced only when complete, and only
            if it is empty or an earlier publication (else `overwrite`).
        handle: None (write only), `kaggle://OWNER/MODEL/keras/VARIATION` or
            `hf://[OWNER/]NAME`. Checked before any work.
        label_names: class names for a classifier preset saved without
            them; must equal the saved names when the preset has some.
            Without either (or finetune's metrics.json beside the preset),
            a classifier is refused: a published classifier names its classes.
        exports: "auto" (the serving SavedModel for a fine-tuned task,
            TF-Hub modules for an encoder whose layout TF-Hub holds) or a
            list from ("serving", "tfhub"); () publishes the Keras preset only.
        pair: the serving SavedModel takes `text` and `text_pair`.
        title, description, training_data: card text (defaults: the preset's
            name, its bundled description or its task and origin, what its
            records say).
        limitations: more limitations for the card.
        license: "apache-2.0" or "mit" (the card's and the upload's licence).
        language: the card's language code, or None.
        base_model: the Hugging Face Hub id of the model it was made from
            (default: the official ALBERT it descends from, if any).
        datasets: Hugging Face Hub ids of its training data (default: GLUE
            for a GLUE run, else none).
        private: a Hugging Face repository created by the upload is private
            (Kaggle creates new models private).
        version_notes: the upload's version notes / commit message.
        check_texts: texts the exports are checked against the Keras model on.
        length_buckets: the serving SavedModel's (see
            `export_serving_saved_model`).
        overwrite: replace `output` whatever it holds.

    Returns:
        dict: `output`, `files` (the directory's top-level entries),
        `label_names`, `handle`, `uploaded` (True only after the upload
        returned).

    Raises:
        ValueError: bad arguments (before any work).
        keras_albert.publishing.hub_upload.UploadError: the upload failed; the
            directory is complete.

    Example:
    >>> publish_preset("albert_tiny_en_student_supersense", "published")  # doctest: +SKIP
    """
    scheme = check_handle(handle)[0] if handle is not None else None
    if scheme:
        check_uploader(scheme)
    check_license(license)
    exports = _check_exports(exports)
    _require_tensorflow_for(exports)
    _check_utf8_path(preset)
    preset_dir = pathlib.Path(resolve_preset(preset))
    output = _check_output(output, preset_dir, overwrite)
    records = _without_machine_paths(find_records(preset_dir))
    task_class, config = task_config(preset_dir)
    label_names, label_source = _resolve_label_names(task_class, config, label_names, records, str(preset))
    if label_names:
        check_label_lines(label_names)
    options = dict(title=title, description=description, training_data=training_data,
                   limitations=limitations, license=license, language=language, handle=handle,
                   base_model=base_model, datasets=datasets, lineage=_lineage(str(preset), records))
    with atomic_directory(output, "published_model", overwrite) as staging:
        staging = pathlib.Path(staging)
        _copy_preset(preset_dir, staging, records)
        if label_names:
            _write_names(staging, label_names)
            write_label_file(staging, label_names)
        if uses_wordnet(_data_sources(options["lineage"])):
            with open_package_file("keras_albert.datasets", "data", WORDNET_LICENSE) as licence:
                (staging / WORDNET_LICENSE).write_bytes(licence.read())
        model = _load(staging, task_class)
        planned, not_exported = _plan_exports(exports, model, task_class) if exports else ((), [])
        files = _write_exports(staging, model, planned, pair, list(check_texts or _CHECK_TEXTS),
                               length_buckets)
        facts = _facts(preset, preset_dir, staging, model, task_class, label_names, label_source,
                       records, files, not_exported, options)
        (staging / "README.md").write_text(render_model_card(facts), encoding="utf-8")
    result = {"output": str(output), "files": _entries(output), "label_names": label_names,
              "handle": handle, "uploaded": False}
    if handle is not None:
        upload_directory(output, handle, license=license, private=private, version_notes=version_notes)
        result["uploaded"] = True
    return result


def _card_license(directory):
    for line in (directory / "README.md").read_text(encoding="utf-8").splitlines()[1:]:
        if line == "---":
            break
        if line.startswith("license:"):
            return line.split(":", 1)[1].strip()
    return None


def upload_published(directory, handle, *, private=True, version_notes=""):
    """Uploads a directory `publish_preset` wrote (e.g. after a failed
    upload) under the licence its card states. Returns the handle."""
    scheme = check_handle(handle)[0]
    directory = pathlib.Path(directory)
    if not directory.is_dir() or artifact_kind(directory) != "published_model":
        raise ValueError(
            f"`directory` {str(directory)!r} is not a directory written by publish_preset "
            "(no model card and preset with its marker). Publish it first."
        )
    check_uploader(scheme)
    license = check_license(_card_license(directory))
    upload_directory(os.fspath(directory), handle, license=license, private=private,
                     version_notes=version_notes)
    return handle
