"""`publish_preset` without a handle: the directory (preset, labels, exports,
records, card), label names for old presets, and bad input refused before
any work."""

import json
import shutil

import pytest
import tensorflow as tf
import yaml
from huggingface_hub import ModelCard

import keras_albert
from keras_albert import datasets
from keras_albert.export.label_file import read_label_file
from keras_albert.presets.preset_resolution import bundled_presets_dir
from keras_albert.publishing import publisher as publishing
from keras_albert.publishing.publisher import publish_preset
from keras_albert.utils.atomic_directory import artifact_kind

SUPERSENSE = "albert_tiny_en_student_supersense"
NAMES = ["animal", "person", "place"]


def _card(directory):
    text = (directory / "README.md").read_text()
    return yaml.safe_load(text.split("---\n")[1]), text


@pytest.fixture(scope="module")
def unnamed_run(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    """A finetune-style run (OUTPUT/preset + OUTPUT/metrics.json) whose
    preset was saved before label names existed."""
    run = tmp_path_factory.mktemp("run")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(tokenizer, sequence_length=16)
    keras_albert.AlbertClassifier(backbone, num_classes=3, preprocessor=preprocessor).save_to_preset(
        str(run / "preset"))
    task_file = run / "preset" / "task.json"
    task = json.loads(task_file.read_text())
    del task["config"]["label_names"]
    task_file.write_text(json.dumps(task))
    return run


def _write_run_metrics(run, labels):
    (run / "metrics.json").write_text(json.dumps({
        "task": "classification", "preset": "albert_tiny_en", "selection_metric": "accuracy",
        "best_epoch": 1, "best": {"epoch": 1, "loss": 0.4, "accuracy": 0.625}, "history": [{}],
        "labels": labels, "data": {"train": "train.tsv", "eval": "dev.tsv", "train_examples": 40},
    }))


def test_bundled_classifier_publishes_preset_labels_and_card(tmp_path):
    result = publish_preset(SUPERSENSE, tmp_path / "published", exports=())
    out = tmp_path / "published"
    names = list(datasets.supersense_labels(pos="n"))
    assert result["uploaded"] is False and result["label_names"] == names
    assert artifact_kind(out) == "published_model"
    for name in ("config.json", "task.json", "model.weights.h5", "task.weights.h5", "tokenizer.json",
                 "preprocessor.json", "metadata.json", "assets/tokenizer/vocabulary.spm",
                 "student_report.json"):
        assert (out / name).is_file(), name
    assert read_label_file(out) == names
    assert not (out / "serving").exists()
    restored = keras_albert.AlbertClassifier.from_preset(str(out))
    assert restored.label_names == names
    meta, card = _card(out)
    assert meta["pipeline_tag"] == "text-classification" and meta["license"] == "apache-2.0"
    assert "| 25 | noun.time |" in card and "414,464" in card
    assert "**every Keras backend**" in card and "sun2020mobilebert" in card
    # Read back as the Hub reads it: the MobileBERT-style student is no
    # keras-hub model, and its report's other three models are not its results.
    data = ModelCard.load(out / "README.md").data
    assert data.library_name is None and "keras-hub" not in data.tags
    assert [(r.metric_name, r.metric_value, r.dataset_split) for r in data.eval_results] == [
        ("accuracy", 0.7691, "test split")]
    assert "0.7973" not in card and "0.5062" not in card
    # The data's licences, WordNet's named and shipped.
    assert "WordNet 3.0 licence" in card and "public domain" in card
    assert "Princeton University" in (out / "WORDNET_LICENSE").read_text()
    assert "| student epochs | 4 | `student_report.json` |" in card
    # A second publication replaces the first (it is ours); the source is untouched.
    publish_preset(SUPERSENSE, out, exports=(), title="Supersense student", description="Tags nouns by sense.")
    text = ModelCard.load(out / "README.md").text
    assert "# Supersense student\n\nTags nouns by sense." in text
    assert ModelCard.load(out / "README.md").data.model_name == "Supersense student"


@pytest.mark.large
def test_a_fine_tuned_run_publishes_its_serving_model_and_run_record(tmp_path, unnamed_run):
    _write_run_metrics(unnamed_run, NAMES)
    out = tmp_path / "published"
    result = publish_preset(unnamed_run / "preset", out)
    # The names recorded by finetune now travel with the published model.
    assert result["label_names"] == NAMES
    assert json.loads((out / "task.json").read_text())["config"]["label_names"] == NAMES
    assert "label_names" not in json.loads((unnamed_run / "preset" / "task.json").read_text())["config"]
    assert (out / "training_run" / "metrics.json").is_file()
    serve = tf.saved_model.load(str(out / "serving")).signatures["serving_default"]
    labels = serve(text=tf.constant(["the cat sleeps", "a dog"]))["labels"].numpy()
    assert {name.decode() for name in labels} <= set(NAMES)
    meta, card = _card(out)
    assert "raw strings `text` -> `labels`, `logits`, `probabilities`" in card
    assert "recorded by finetune in training_run/metrics.json" in card
    assert "| accuracy | 0.6250 | `dev.tsv` | evaluation |" in card
    assert "40 examples of `train.tsv`" in card and "# run" in card
    # Fine-tuned from the bundled albert_tiny_en (as its record says): that
    # preset's data and licences; a plain ALBERT classifier is a keras-hub model.
    assert "`albert_tiny_en`, whose weights ship" in card and "King James" in card
    assert meta["library_name"] == "keras-hub"


@pytest.mark.large
def test_an_encoder_publishes_tfhub_modules(tmp_path):
    publish_preset("albert_tiny_en", tmp_path / "published")
    out = tmp_path / "published"
    assert (out / "tfhub" / "encoder" / "saved_model.pb").is_file()
    assert (out / "tfhub" / "preprocessor" / "saved_model.pb").is_file()
    meta, card = _card(out)
    assert meta["pipeline_tag"] == "fill-mask"
    # ALBERT's own architecture: keras-hub's classes hold it.
    assert meta["library_name"] == "keras-hub" and "convert --from=keras_albert --to=keras_hub" in card
    assert "`encoder.mlm` with the masked-LM head" in card
    recorded = json.loads(
        (bundled_presets_dir() / "albert_tiny_en" / "pretraining_metrics.json").read_text())
    sop = recorded["heldout"]["sentence_order_accuracy"]
    assert f"| pretraining sentence_order_accuracy | {sop:.4f} |" in card
    assert "Where its knowledge comes from:" in card and "all-MiniLM-L6-v2" in card


def test_a_classifier_without_names_is_refused_unless_given_them(tmp_path, unnamed_run):
    (unnamed_run / "metrics.json").unlink(missing_ok=True)
    with pytest.raises(ValueError, match=r"AlbertClassifier with 3 classes but no class names.*label_names=\["):
        publish_preset(unnamed_run / "preset", tmp_path / "published", exports=())
    assert not (tmp_path / "published").exists()
    with pytest.raises(ValueError, match="3 names for num_classes=3. Received 2"):
        publish_preset(unnamed_run / "preset", tmp_path / "published", exports=(), label_names=["a", "b"])
    _write_run_metrics(unnamed_run, ["x", "y"])  # recorded, but for another head
    with pytest.raises(ValueError, match="no class names"):
        publish_preset(unnamed_run / "preset", tmp_path / "published", exports=())
    (unnamed_run / "metrics.json").unlink()
    result = publish_preset(unnamed_run / "preset", tmp_path / "published", exports=(), label_names=NAMES)
    assert result["label_names"] == NAMES and read_label_file(tmp_path / "published") == NAMES
    assert "given when publishing, now saved in task.json" in _card(tmp_path / "published")[1]


def test_names_that_contradict_the_saved_ones_are_refused(tmp_path):
    wrong = list(reversed(datasets.supersense_labels(pos="n")))
    with pytest.raises(ValueError, match="already names its classes"):
        publish_preset(SUPERSENSE, tmp_path / "published", label_names=wrong, exports=())
    with pytest.raises(ValueError, match="names the classes of a classifier; preset 'albert_tiny_en' holds"):
        publish_preset("albert_tiny_en", tmp_path / "published", label_names=["a"], exports=())
    assert not (tmp_path / "published").exists()


def _no_loading(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the bad input was refused")

    monkeypatch.setattr(publishing, "_load", refuse)


def test_unwritable_output_is_refused_before_any_work(unwritable_directory, monkeypatch):
    _no_loading(monkeypatch)
    with pytest.raises(ValueError, match="`output` .*locked/published.* is not writable"):
        publish_preset(SUPERSENSE, unwritable_directory / "published")


def test_bad_outputs_and_arguments_are_refused(tmp_path, monkeypatch):
    _no_loading(monkeypatch)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="cannot be created: .*file' is a file"):
        publish_preset(SUPERSENSE, tmp_path / "file" / "published")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    with pytest.raises(ValueError, match="does not hold a published model"):
        publish_preset(SUPERSENSE, tmp_path / "notes")
    assert (tmp_path / "notes" / "todo.txt").read_text() == "keep me"
    assert not (tmp_path / "published").exists()


def test_output_and_preset_may_not_contain_each_other(unnamed_run, monkeypatch):
    _no_loading(monkeypatch)
    preset = unnamed_run / "preset"
    with pytest.raises(ValueError, match="must not contain each other"):
        publish_preset(preset, preset / "published", label_names=NAMES)
    with pytest.raises(ValueError, match="must not contain each other"):
        publish_preset(preset, unnamed_run, label_names=NAMES, overwrite=True)
    assert not (preset / "published").exists() and (preset / "task.json").is_file()


def test_bad_arguments_are_refused(tmp_path, monkeypatch):
    _no_loading(monkeypatch)
    with pytest.raises(ValueError, match="`exports` must be"):
        publish_preset(SUPERSENSE, tmp_path / "published", exports=["tflite"])
    with pytest.raises(ValueError, match="`license` must be one of"):
        publish_preset(SUPERSENSE, tmp_path / "published", license="gpl-3.0")
    assert not (tmp_path / "published").exists()


def test_no_path_of_this_machine_is_published(tmp_path, unnamed_run):
    """A run's record names its files by absolute path; the card and the
    published record name them by file name."""
    run = tmp_path / "home" / "someone" / "project" / "run"
    run.parent.mkdir(parents=True)
    shutil.copytree(unnamed_run / "preset", run / "preset")
    _write_run_metrics(run, NAMES)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["preset"] = str(tmp_path / "home" / "someone" / "base" / "preset")
    metrics["data"].update(train=str(tmp_path / "home" / "someone" / "data" / "train.tsv"))
    (run / "metrics.json").write_text(json.dumps(metrics))
    out = tmp_path / "published"
    publish_preset(str(run / "preset"), out, exports=())
    for name in ("README.md", "training_run/metrics.json"):
        text = (out / name).read_text()
        assert str(tmp_path) not in text and "someone" not in text, name
    _, card = _card(out)
    assert "`train.tsv`" in card and "base/preset" in card and "run/preset" in card
    assert json.loads((out / "training_run" / "metrics.json").read_text())["labels"] == NAMES


def test_base_model_and_datasets_come_from_the_run_record():
    from keras_albert.publishing.preset_records import Record

    record = Record("metrics.json", "training_run/metrics.json", "finetuning",
                    {"preset": "albert-base-v2", "data": {"glue_task": "SST-2"}})
    lineage = publishing._lineage("runs/sst/preset", [record])
    # An alias of the official model is that model; its Hub id is the base.
    assert lineage == ["albert_base_en_uncased"]
    assert publishing._base_model(lineage, None) == "albert/albert-base-v2"
    assert publishing._base_model(lineage, "me/my-albert") == "me/my-albert"
    assert publishing._datasets([record], ()) == ["nyu-mll/glue"]
    assert publishing._datasets([record], ["me/data"]) == ["me/data"]
    # A bundled preset is no Hub model: no base_model claimed.
    assert publishing._base_model(publishing._lineage("albert_tiny_en", []), None) is None
