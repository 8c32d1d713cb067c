"""`run_finetuning(FinetuneSettings(...))` called from Python, no command line.

Runs on every backend, TensorFlow installed or not; the serving SavedModel
and the TensorBoard logs (TensorFlow's) are read in a TensorFlow process
whatever the backend, skipped only where TensorFlow is absent:
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/pipelines/test_finetuning.py
"""

import contextlib
import dataclasses
import io
import json
import pathlib

import keras
import numpy as np
import pytest

import keras_albert
from keras_albert.pipelines import FINETUNING_TASKS
from keras_albert.pipelines import FinetuneSettings
from keras_albert.pipelines import finetuning
from keras_albert.pipelines import make_task
from keras_albert.pipelines import run_finetuning
from keras_albert.pipelines.finetuning_settings import finetune_sequence_length
from keras_albert.utils.backend import tensorflow_available
from tests.conftest import _WORDS
from tests.in_process import on_tensorflow


@pytest.fixture(scope="module")
def preset(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    path = tmp_path_factory.mktemp("preset")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(
        **dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size())
    )
    backbone.save_to_preset(str(path))
    tokenizer.save_to_preset(str(path))
    return str(path)


def _settings(preset, directory):
    """Sixteen labelled rows in `directory`/train.tsv; output in `directory`/out."""
    rng = np.random.default_rng(0)
    rows = ["text\tlabel"] + [
        f"{' '.join(rng.choice(_WORDS, 3))} {animal}\t{label}"
        for animal, label in [("cat", "pet"), ("fish", "wild")] * 8
    ]
    (directory / "train.tsv").write_text("\n".join(rows) + "\n")
    return FinetuneSettings(
        preset=preset, task="classification", train=str(directory / "train.tsv"),
        eval=str(directory / "train.tsv"), output=str(directory / "out"), epochs=1,
        batch_size=8, sequence_length=16, learning_rate=1e-3,
    )


@pytest.fixture
def settings(preset, tmp_path):
    return _settings(preset, tmp_path)


def _written_here(logs=True, serving=True):
    """What a run in this process leaves in OUTPUT: the serving SavedModel
    on TensorFlow only (the export traces the model there) unless `serving`
    is off, the logs where TensorFlow's summary writer is installed."""
    contents = set(finetuning.OUTPUT_CONTENTS)
    if not serving or keras.config.backend() != "tensorflow":
        contents.discard("serving/")
    if not (logs and tensorflow_available()):
        contents.discard("logs/")
    return contents


@pytest.fixture(scope="module")
def default_run(preset, tmp_path_factory):
    """One run at the default length, shared: (settings, metrics, printed).
    On TensorFlow it writes the serving SavedModel and logs too."""
    # The default length: 128 cut to the preset's 32 positions.
    settings = dataclasses.replace(_settings(preset, tmp_path_factory.mktemp("default_run")), sequence_length=None)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        metrics = run_finetuning(settings)
    return settings, metrics, printed.getvalue()


@pytest.mark.large
def test_run_finetuning_returns_metrics_and_writes_its_outputs(default_run):
    settings, metrics, printed = default_run
    # The default length, recorded as used.
    assert metrics["sequence_length"] == 32 and metrics["settings"]["sequence_length"] is None
    output = pathlib.Path(settings.output)
    assert metrics == json.loads((output / "metrics.json").read_text())
    assert metrics["labels"] == ["pet", "wild"]
    assert metrics["settings"] == finetuning.run_settings(settings)
    # The recipe: two of the 16 examples validate and choose; the eval file is only scored.
    assert metrics["selection_metric"] == "validation_accuracy"
    assert metrics["data"]["train_examples"] == 14 and metrics["data"]["validation_examples"] == 2
    assert metrics["head_warm_start"]["epoch"] == 0 and metrics["best_epoch"] in (0, 1)
    assert {"accuracy", "validation_accuracy"} <= set(metrics["history"][0])
    # The names travel with the model: its preset and its serving outputs.
    task = json.loads((output / "preset" / "task.json").read_text())
    assert task["config"]["label_names"] == ["pet", "wild"]
    classifier = keras_albert.AlbertClassifier.from_preset(str(output / "preset"))
    assert classifier.label_names == ["pet", "wild"]
    # Nothing but the documented outputs: the kept weights never reach a file.
    assert {p.name + "/" * p.is_dir() for p in output.iterdir()} == _written_here()
    if "serving/" not in _written_here():
        assert "Serving SavedModel: not written (export needs KERAS_BACKEND=tensorflow)" in printed
    if "logs/" not in _written_here():
        assert "TensorBoard logs: not written" in printed


def _seen_by_tensorflow(output):
    """What TensorFlow reads in a run's OUTPUT: the serving SavedModel's
    labels for two texts, the steps of the logs' scalars, the contents."""
    import tensorflow as tf

    serve = tf.saved_model.load(str(output / "serving")).signatures["serving_default"]
    labels = serve(text=tf.constant(["a cat", "a fish"]))["labels"].numpy()

    def scalar_steps(directory, tag):
        # The steps at which `tag` was written in `directory`'s event files.
        steps = set()
        for path in sorted(directory.rglob("events.out.tfevents.*")):
            for event in tf.compat.v1.train.summary_iterator(str(path)):
                steps |= {event.step for value in event.summary.value if value.tag == tag}
        return sorted(steps)

    return dict(
        labels=[label.decode() for label in labels],
        train_loss=scalar_steps(output / "logs" / "train", "epoch_loss"),
        eval_accuracy=scalar_steps(output / "logs" / "eval", "epoch_accuracy"),
        validation_accuracy=scalar_steps(output / "logs" / "validation", "epoch_accuracy"),
        contents=sorted(p.name + "/" * p.is_dir() for p in output.iterdir()),
    )


def run_and_read(preset, directory):
    """A run of `_settings`, then what TensorFlow reads in its output (for
    a test session on another backend)."""
    settings = _settings(preset, pathlib.Path(directory))
    run_finetuning(settings)
    return _seen_by_tensorflow(pathlib.Path(settings.output))


@pytest.mark.large
def test_on_tensorflow_the_run_serves_named_labels_and_logs_every_epoch(preset, tmp_path, request):
    # The serving SavedModel and TensorBoard's event files are TensorFlow's:
    # checked in a TensorFlow process whatever this run's backend. On
    # TensorFlow, this process: the shared run wrote them.
    pytest.importorskip("tensorflow", reason="SavedModel and TensorBoard logs are TensorFlow's")
    if keras.config.backend() == "tensorflow":
        seen = _seen_by_tensorflow(pathlib.Path(request.getfixturevalue("default_run")[0].output))
    else:
        seen = on_tensorflow(run_and_read, preset, tmp_path)
    # The names travel with the model into its serving outputs.
    assert seen["labels"] and set(seen["labels"]) <= {"pet", "wild"}
    # Keras's training logs and the per-epoch scores, the fitted head (epoch
    # 0) included: loss from epoch 1, the splits' scores from epoch 0.
    assert seen["train_loss"] == [1]
    assert seen["eval_accuracy"] == [0, 1]
    assert seen["validation_accuracy"] == [0, 1]
    assert set(seen["contents"]) == set(finetuning.OUTPUT_CONTENTS)


def test_a_weights_file_an_earlier_version_wrote_is_removed_and_a_users_is_kept(tmp_path):
    from keras_albert.utils.run_directory import record_run_outputs
    from keras_albert.utils.run_directory import remove_run_outputs

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for directory in (ours, theirs):
        directory.mkdir()
        (directory / "best.weights.h5").write_bytes(b"weights")
    record_run_outputs(ours, ["metrics.json", "best.weights.h5"])
    record_run_outputs(theirs, ["metrics.json"])
    for directory in (ours, theirs):
        remove_run_outputs(directory, finetuning.FORMER_OUTPUTS)
    assert not (ours / "best.weights.h5").exists()
    assert (theirs / "best.weights.h5").read_bytes() == b"weights"


@pytest.mark.large
def test_a_run_without_tensorboard_serving_or_validation_writes_neither_and_prints_which_split(
        settings, tmp_path, capsys):
    run_finetuning(dataclasses.replace(settings, tensorboard=False, serving=False, validation_fraction=0.0))
    output = tmp_path / "out"
    assert not (output / "logs").exists() and not (output / "serving").exists()
    assert {p.name + "/" * p.is_dir() for p in output.iterdir()} == _written_here(logs=False, serving=False)
    printed = capsys.readouterr().out
    assert "Serving SavedModel: not written (--noserving)" in printed
    # Keras counts the run's epochs; each score line names its split.
    assert "Epoch 1/1" not in printed and "Epoch 2/" not in printed
    assert f"evaluation data (--eval {settings.eval!r}): accuracy=" in printed
    assert "Kept epoch 1 (the last epoch): accuracy=" in printed and "on the evaluation data (--eval)" in printed


@pytest.mark.parametrize("field, value, expected", [
    ("task", "summarization", "`--task` must be one of"),
    ("epochs", 0, "`--epochs` must be a positive integer. Received: 0"),
    ("batch_size", 2.5, "`--batch_size` must be a positive integer. Received: 2.5"),
    ("learning_rate", 0.0, "`--learning_rate` must be > 0. Received: 0.0"),
    ("validation_fraction", 0.7, "`--validation_fraction` must be in [0, 0.5). Received: 0.7"),
    ("patience", 0, "`--patience` must be a positive integer. Received: 0"),
    ("patience", 1.5, "`--patience` must be a positive integer. Received: 1.5"),
    ("warmup_fraction", 1.5, "`--warmup_fraction` must be in [0, 1]. Received: 1.5"),
    ("strategy", "quantum", "`--strategy` must be one of"),
    ("text_columns", ("a", "b", "c"), "`--text_columns` takes one column, or two"),
    ("train", "/no/such/train.tsv", "/no/such/train.tsv"),
    ("pooling", "max", "`--pooling` must be one of ('cls', 'mean'). Received: 'max'"),
])
def test_bad_settings_fail_before_the_preset_is_loaded(settings, tmp_path, field, value, expected):
    # A preset that does not exist: the check must fail first.
    bad = dataclasses.replace(settings, preset=str(tmp_path / "no_preset"), **{field: value})
    with pytest.raises((ValueError, FileNotFoundError)) as error:
        run_finetuning(bad)
    assert expected in str(error.value)
    assert not (tmp_path / "out").exists()


def test_no_serving_beside_an_earlier_runs_serving_model_is_refused_before_any_work(settings, tmp_path):
    # An earlier run's serving/ would no longer match the new preset.
    earlier = tmp_path / "out" / "serving"
    earlier.mkdir(parents=True)
    (earlier / "saved_model.pb").write_bytes(b"earlier")
    with pytest.raises(ValueError, match=r"`--noserving`: `--output` .* already holds serving/ \(an earlier run's SavedModel would no longer match"):
        run_finetuning(dataclasses.replace(settings, preset=str(tmp_path / "no_preset"), serving=False))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["serving"]
    assert (earlier / "saved_model.pb").read_bytes() == b"earlier"


def test_lengths_past_the_presets_positions_are_refused_before_and_after_loading(settings, tmp_path, monkeypatch):
    # The tiny preset has 32 positions: its config.json says so before loading...
    longer = dataclasses.replace(settings, sequence_length=33)
    message = (r"`--sequence_length` 33 is more than the 32 positions of preset .* \(its max_sequence_length\)\. "
               r"Pass at most 32, or give the backbone more positions first: "
               r"keras_albert\.extend_positions\(backbone, max_sequence_length=33\)")
    with pytest.raises(ValueError, match=message):
        run_finetuning(longer)
    assert not (tmp_path / "out").exists()
    # ...and a preset known only once downloaded is checked when it is built,
    # before anything trains or a preset is written.
    monkeypatch.setattr(finetuning, "check_preset_positions", lambda *args, **kwargs: None)
    with pytest.raises(ValueError, match=message):
        run_finetuning(longer)
    assert not (tmp_path / "out" / "preset").exists() and not (tmp_path / "out" / "metrics.json").exists()


def test_the_refusals_advice_makes_a_preset_that_takes_the_length(settings, tmp_path):
    longer = keras_albert.extend_positions(keras_albert.AlbertBackbone.from_preset(settings.preset),
                                           max_sequence_length=33)
    longer.save_to_preset(str(tmp_path / "longer"))
    keras_albert.AlbertTokenizer.from_preset(settings.preset).save_to_preset(str(tmp_path / "longer"))
    metrics = run_finetuning(dataclasses.replace(
        settings, preset=str(tmp_path / "longer"), sequence_length=33, serving=False))
    assert metrics["sequence_length"] == 33
    assert keras_albert.AlbertClassifier.from_preset(str(tmp_path / "out" / "preset")).preprocessor.sequence_length == 33


def test_the_default_length_is_128_or_a_presets_fewer_positions(settings):
    assert finetune_sequence_length(dataclasses.replace(settings, sequence_length=None)) == 32
    assert finetune_sequence_length(dataclasses.replace(settings, sequence_length=20)) == 20
    # Google's presets (512 positions) are downloaded: their positions are known once loaded.
    assert finetune_sequence_length(dataclasses.replace(settings, preset="albert_base_en_uncased",
                                                        sequence_length=None)) == 128
    assert finetune_sequence_length(dataclasses.replace(settings, preset="albert_tiny_en",
                                                        sequence_length=None)) == 128
    # A preset that is no name at all is left to loading, which names it.
    assert finetune_sequence_length(dataclasses.replace(settings, preset=None, sequence_length=None)) == 128
    with pytest.raises(ValueError, match=r"`preset` must be a preset name or a directory path \(str\)\. "
                                         r"Received: preset=None"):
        run_finetuning(dataclasses.replace(settings, preset=None))


def test_pooling_belongs_to_classifier_heads(settings, tmp_path):
    bad = dataclasses.replace(settings, task="token_classification", pooling="mean")
    with pytest.raises(ValueError, match="`--pooling` sets a classifier's or regressor's head"):
        run_finetuning(bad)
    task = make_task("classification", pooling="mean")
    (texts, labels) = task.read(settings.train, "train")
    classifier = task.build(settings.preset)
    assert classifier.pooling == "mean" and classifier.label_names == ["pet", "wild"]
    assert make_task("regression").build(settings.preset).pooling == "cls"


def test_bad_distillation_settings_are_named(settings, tmp_path):
    bad = dataclasses.replace(settings, teacher="some/teacher", distill_alpha=2.0)
    with pytest.raises(ValueError, match=r"`--distill_alpha` must be in \[0, 1\]. Received: 2.0"):
        run_finetuning(bad)


def test_make_task_takes_explicit_arguments(tmp_path):
    (tmp_path / "train.csv").write_text("a,b,score\nthe cat,the dog,1.5\nthe fish,a bird,0.5\n")
    task = make_task("regression", batch_size=4, text_columns=("a", "b"), label_column="score")
    (texts, pairs), scores = task.read(str(tmp_path / "train.csv"), "train")
    assert texts == ["the cat", "the fish"] and pairs == ["the dog", "a bird"]
    assert scores.tolist() == [1.5, 0.5] and task.metrics == ("pearson", "spearman")
    assert make_task("squad", sequence_length=64, doc_stride=32).doc_stride == 32
    assert set(FINETUNING_TASKS) == {
        "classification", "regression", "squad", "multiple_choice", "token_classification"}
    with pytest.raises(ValueError, match="`task` must be one of"):
        make_task("summarization")


def test_a_teacher_naming_its_classes_otherwise_is_refused(settings, preset, tmp_path):
    teacher = keras_albert.AlbertClassifier.from_preset(preset, num_classes=2, label_names=["wild", "pet"])
    teacher.save_to_preset(str(tmp_path / "teacher"))
    task = make_task("classification")
    train = task.read(settings.train, "train")
    assert task.label_set == ["pet", "wild"]
    with pytest.raises(ValueError, match=r"names its classes \['wild', 'pet'\]; the training file's labels"):
        finetuning.with_teacher_targets(dataclasses.replace(settings, teacher=str(tmp_path / "teacher")), task, train)


def test_split_validation_takes_the_same_examples_from_every_part():
    x = (["a", "b", "c", "d"], ["A", "B", "C", "D"])
    data = (x, np.arange(4))
    train, validation = finetuning.split_validation(data, 0.25, seed=0)
    (texts, pairs), labels = validation
    assert len(texts) == 1 and [t.upper() for t in texts] == pairs and "abcd".index(texts[0]) == labels[0]
    assert len(train[1]) == 3 and sorted(train[0][0] + texts) == ["a", "b", "c", "d"]
    choices = ({"question": ["q0", "q1", "q2", "q3"]}, np.arange(4))
    kept, held = finetuning.split_validation(choices, 0.5, seed=1)
    assert [int(q[1]) for q in kept[0]["question"]] == kept[1].tolist()
    assert finetuning.split_validation(data, 0.0, seed=0) == (data, None)
    with pytest.raises(ValueError, match="`--validation_fraction`=0.1 of 4 training examples"):
        finetuning.split_validation(data, 0.1, seed=0)


def test_classification_validation_keeps_the_class_proportions():
    labels = np.array([0] * 80 + [1] * 20)
    texts = [f"t{i}" for i in range(100)]
    (kept_texts, kept), (held_texts, held) = finetuning.split_validation((texts, labels), 0.1, seed=0, stratify=True)
    assert np.bincount(held).tolist() == [8, 2] and np.bincount(kept).tolist() == [72, 18]
    assert [int(t[1:]) >= 80 for t in held_texts] == (held == 1).tolist()


@pytest.mark.large
def test_patience_stops_when_validation_does_not_improve_and_ties_keep_the_later_epoch(settings, capsys):
    # A rate too small to move anything: every epoch ties the fitted head.
    # A tie is no improvement (patience stops the run) but the later of the
    # tied epochs is kept: it trained longer on the same score.
    metrics = run_finetuning(dataclasses.replace(settings, epochs=4, patience=1, learning_rate=1e-12, serving=False))
    assert len(metrics["history"]) == 1 and metrics["best_epoch"] == 1
    assert metrics["history"][0]["validation_accuracy"] == metrics["head_warm_start"]["validation_accuracy"]
    printed = capsys.readouterr().out
    assert "No better validation accuracy for 1 epochs: stopping after epoch 1" in printed
    assert "Epoch 0 (the fitted head, before fine-tuning)" in printed
    assert "validation split (0.1 of --train, held out): accuracy=" in printed
    # The default: no early stop, every epoch trains; the last of the tied is kept.
    metrics = run_finetuning(dataclasses.replace(settings, epochs=3, learning_rate=1e-12, serving=False))
    assert metrics["best_epoch"] == 3 and len(metrics["history"]) == 3


@pytest.mark.large
def test_without_validation_every_epoch_trains_and_the_last_is_kept(settings):
    metrics = run_finetuning(dataclasses.replace(
        settings, epochs=2, validation_fraction=0.0, head_warm_start=False, serving=False))
    assert metrics["selection_metric"] == "last epoch" and metrics["best_epoch"] == 2
    assert metrics["data"]["train_examples"] == 16 and metrics["head_warm_start"] is None


def test_run_settings_record_what_was_asked_for(settings):
    recorded = finetuning.run_settings(settings)
    assert recorded["preset"] == settings.preset and recorded["batch_size"] == 8 and recorded["seed"] == 0
    assert recorded["epochs_requested"] == 1 and recorded["learning_rate"] == 1e-3
    assert recorded["sequence_length"] == 16 and recorded["weight_decay"] == 0.01
    assert recorded["warmup_fraction"] == settings.warmup_fraction
    assert recorded["validation_fraction"] == settings.validation_fraction
    assert json.loads(json.dumps(recorded)) == recorded


def test_chunk_tags_are_chosen_on_entity_f1_and_other_tags_on_accuracy(tmp_path):
    (tmp_path / "ner.conll").write_text("Anne B-PER\nLee I-PER\nwalks O\n\nin O\nParis B-LOC\n")
    (tmp_path / "pos.conll").write_text("Anne NNP\nwalks VBZ\n")

    class Tagger:  # what the task reads of a model: its word labels
        def __init__(self, labels):
            self.labels = labels

        def predict_word_labels(self, sentences, batch_size):
            return self.labels

    ner = make_task("token_classification")
    data = ner.read(str(tmp_path / "ner.conll"), "train")
    assert ner.metrics[0] == "entity_f1" and ner.label_set == ["B-LOC", "B-PER", "I-PER", "O"]
    # "Anne Lee" cut to "Anne": 4 of 5 words right, 1 of 2 entities.
    cut = [[1, 3, 3], [3, 0]]
    scores = ner.score(Tagger(cut), data)
    assert scores["accuracy"] == pytest.approx(0.8) and scores["entity_f1"] == pytest.approx(0.5)
    assert list(scores) == ["entity_f1", "accuracy", "f1_macro"]
    # A word the length cut (-1) is outside every entity: never the last tag's (S-LOC, sorted after O).
    (tmp_path / "iobes.conll").write_text("Anne B-PER\nLee E-PER\nin O\nParis S-LOC\n")
    iobes = make_task("token_classification")
    data = iobes.read(str(tmp_path / "iobes.conll"), "train")
    assert iobes.label_set[-1] == "S-LOC"
    scores = iobes.score(Tagger([[0, 1, 2, -1]]), data)
    assert scores["entity_f1"] == pytest.approx(2 / 3) and scores["accuracy"] == pytest.approx(0.75)
    pos = make_task("token_classification")
    pos.read(str(tmp_path / "pos.conll"), "train")
    assert pos.metrics == ("accuracy", "f1_macro")
