"""Fine-tuned classifiers cross the keras-hub boundary with their heads,
packed length and class names, both ways, with equal logits."""

import json

import keras_hub
import numpy as np
import pytest

import keras_albert
from keras_albert.cli.main import main
from keras_albert.convert import from_keras_hub_preset
from keras_albert.convert import to_keras_hub_preset
from keras_albert.presets.preset_resolution import bundled_presets_dir
from keras_albert.utils.label_file import read_label_file
from keras_albert.utils.label_file import write_label_file

# keras-hub's tokenizer neither lowercases nor collapses spaces: compare on
# text that ours leaves unchanged.
TEXTS = ["the cat sat on the mat.", "emma walks to the river and sees a bird.", "a fine day"]
NAMES = ["animal", "person", "weather"]
TINY = dict(num_layers=2, num_heads=2, embedding_dim=8, hidden_dim=16,
            intermediate_dim=32, max_sequence_length=32)


@pytest.fixture(scope="module")
def bundled_vocabulary():
    return (bundled_presets_dir() / "albert_tiny_en" / "assets" / "tokenizer"
            / "vocabulary.spm").read_bytes()


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_ALBERT_CACHE", str(tmp_path / "cache"))


def _keras_hub_classifier(vocabulary, num_classes=3, sequence_length=24):
    tokenizer = keras_hub.models.AlbertTokenizer(proto=vocabulary)
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_groups=2, **TINY)
    preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=sequence_length, truncate="waterfall")
    return keras_hub.models.AlbertTextClassifier(
        backbone, num_classes=num_classes, preprocessor=preprocessor, dropout=0.2)


def _our_classifier(vocabulary, label_names=NAMES, sequence_length=20):
    tokenizer = keras_albert.AlbertTokenizer(proto=vocabulary)
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), **TINY)
    preprocessor = keras_albert.AlbertTextClassifierPreprocessor(
        tokenizer, sequence_length=sequence_length)
    return keras_albert.AlbertClassifier(
        backbone, num_classes=len(label_names), preprocessor=preprocessor,
        label_names=label_names, dropout=0.3)


@pytest.mark.large
def test_keras_hub_classifier_preset_loads_with_its_head_and_labels(
    tmp_path, cache, bundled_vocabulary
):
    theirs = _keras_hub_classifier(bundled_vocabulary)
    theirs.save_to_preset(str(tmp_path / "kh"))
    write_label_file(tmp_path / "kh", NAMES)

    ours = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "kh"))
    assert ours.num_classes == 3 and ours.label_names == NAMES and ours.dropout == 0.2
    assert ours.preprocessor.sequence_length == 24
    assert ours.preprocessor.truncate == "waterfall"
    expected = theirs.predict(TEXTS, verbose=0)
    # A re-initialised head would be far off: keras-hub draws its own.
    assert np.abs(ours.predict(TEXTS, verbose=0) - expected).max() <= 1e-5
    # The keras_hub alias loads the same.
    same = keras_albert.models.AlbertTextClassifier.from_preset(str(tmp_path / "kh"))
    assert np.abs(same.predict(TEXTS, verbose=0) - expected).max() <= 1e-5

    # As in keras-hub, `num_classes` asks for a new head: no stale names.
    fresh = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "kh"), num_classes=5)
    assert fresh.num_classes == 5 and fresh.label_names is None


def test_a_keras_hub_preset_saved_again_is_converted_again(tmp_path, cache, bundled_vocabulary):
    first = _keras_hub_classifier(bundled_vocabulary)
    first.save_to_preset(str(tmp_path / "kh"))
    keras_albert.AlbertClassifier.from_preset(str(tmp_path / "kh"))
    second = _keras_hub_classifier(bundled_vocabulary, num_classes=4)
    second.save_to_preset(str(tmp_path / "kh"))
    again = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "kh"))
    assert again.num_classes == 4
    assert np.abs(again.predict(TEXTS, verbose=0) - second.predict(TEXTS, verbose=0)).max() <= 1e-5


def test_labels_that_do_not_fit_the_head_are_an_error_naming_the_file(
    tmp_path, bundled_vocabulary
):
    _keras_hub_classifier(bundled_vocabulary).save_to_preset(str(tmp_path / "kh"))
    write_label_file(tmp_path / "kh", ["yes", "no"])
    with pytest.raises(ValueError, match="labels.txt.*3 names for num_classes=3"):
        from_keras_hub_preset(tmp_path / "kh", tmp_path / "ours")
    assert not (tmp_path / "ours").exists()


def test_a_keras_hub_task_we_cannot_map_warns_and_keeps_the_backbone(
    tmp_path, bundled_vocabulary
):
    tokenizer = keras_hub.models.AlbertTokenizer(proto=bundled_vocabulary)
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), **TINY)
    keras_hub.models.AlbertMaskedLM(
        backbone,
        preprocessor=keras_hub.models.AlbertMaskedLMPreprocessor(tokenizer, sequence_length=16),
    ).save_to_preset(str(tmp_path / "kh"))
    with pytest.warns(UserWarning, match="keras_hub>AlbertMaskedLM.*without that head"):
        from_keras_hub_preset(tmp_path / "kh", tmp_path / "ours")
    ours = keras_albert.AlbertBackbone.from_preset(str(tmp_path / "ours"))
    x = {"token_ids": np.array([[2, 10, 11, 3, 0]], "int32"),
         "segment_ids": np.zeros((1, 5), "int32"),
         "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32")}
    assert np.abs(np.asarray(ours(x)["pooled_output"])
                  - np.asarray(backbone(x)["pooled_output"])).max() <= 1e-5


def test_our_classifier_exports_to_a_preset_keras_hub_loads_and_predicts_alike(
    tmp_path, cache, bundled_vocabulary
):
    ours = _our_classifier(bundled_vocabulary)
    to_keras_hub_preset(ours, tmp_path / "kh")

    files = sorted(p.name for p in (tmp_path / "kh").iterdir())
    for name in ("config.json", "model.weights.h5", "task.json", "task.weights.h5",
                 "tokenizer.json", "preprocessor.json", "labels.txt", "assets"):
        assert name in files
    preprocessor = json.loads((tmp_path / "kh" / "preprocessor.json").read_text())
    assert preprocessor["registered_name"] == "keras_hub>AlbertTextClassifierPreprocessor"
    assert preprocessor["config"]["sequence_length"] == 20
    assert read_label_file(tmp_path / "kh") == NAMES

    theirs = keras_hub.models.AlbertTextClassifier.from_preset(str(tmp_path / "kh"))
    assert type(theirs) is keras_hub.models.AlbertTextClassifier
    assert theirs.dropout == 0.3
    expected = ours.predict(TEXTS, verbose=0)
    assert np.abs(theirs.predict(TEXTS, verbose=0) - expected).max() <= 1e-5

    # And back again, names included.
    back = keras_albert.AlbertClassifier.from_preset(str(tmp_path / "kh"))
    assert back.label_names == NAMES
    assert np.abs(back.predict(TEXTS, verbose=0) - expected).max() <= 1e-5


def test_a_classifier_preset_exports_through_the_cli(tmp_path, cache, bundled_vocabulary, capsys):
    ours = _our_classifier(bundled_vocabulary)
    ours.save_to_preset(str(tmp_path / "ours"))
    assert main(["convert", "--from=keras_albert", "--to=keras_hub",
                 f"--src={tmp_path / 'ours'}", f"--dst={tmp_path / 'kh'}"]) == 0
    task = json.loads((tmp_path / "kh" / "task.json").read_text())
    assert task["registered_name"] == "keras_hub>AlbertTextClassifier"
    theirs = keras_hub.models.AlbertTextClassifier.from_preset(str(tmp_path / "kh"))
    assert np.abs(theirs.predict(TEXTS, verbose=0) - ours.predict(TEXTS, verbose=0)).max() <= 1e-5


@pytest.mark.large
def test_a_bundled_backbone_preset_gets_a_preprocessor_keras_hub_can_run(tmp_path):
    # keras-hub's default packing (512) is longer than the 128 positions.
    to_keras_hub_preset("albert_tiny_en", tmp_path / "kh")
    preprocessor = json.loads((tmp_path / "kh" / "preprocessor.json").read_text())
    assert preprocessor["config"]["sequence_length"] == 128
    assert not (tmp_path / "kh" / "task.json").exists()  # pretraining heads stay
    theirs = keras_hub.models.AlbertTextClassifier.from_preset(str(tmp_path / "kh"), num_classes=2)
    assert theirs.predict(TEXTS, verbose=0).shape == (3, 2)
    ours = keras_albert.AlbertBackbone.from_preset("albert_tiny_en")
    x = theirs.preprocessor(TEXTS)
    assert np.abs(np.asarray(theirs.backbone(x)["pooled_output"])
                  - np.asarray(ours(x)["pooled_output"])).max() <= 1e-5


def test_what_keras_hub_cannot_hold_is_refused_by_name(tmp_path, bundled_vocabulary):
    # The bundled student is MobileBERT-style: bottlenecks, stacked FFNs.
    with pytest.raises(ValueError) as error:
        to_keras_hub_preset("albert_tiny_en_student_supersense", tmp_path / "student")
    message = str(error.value)
    for setting in ("albert_tiny_en_student_supersense", "bottleneck_dim=64",
                    "num_feedforward_stacks=2", "embedding_type='trigram'"):
        assert setting in message
    lsh = keras_albert.AlbertBackbone(vocabulary_size=50, attention="lsh", **TINY)
    with pytest.raises(ValueError, match="attention='lsh'"):
        to_keras_hub_preset(lsh, tmp_path / "lsh")
    backbone = keras_albert.AlbertBackbone(vocabulary_size=50, **TINY)
    answerer = keras_albert.AlbertQuestionAnswerer(backbone)
    with pytest.raises(ValueError, match="AlbertQuestionAnswerer"):
        to_keras_hub_preset(answerer, tmp_path / "qa")
    mean = keras_albert.AlbertClassifier(backbone, num_classes=2, pooling="mean")
    with pytest.raises(ValueError, match="pooling='mean'"):
        to_keras_hub_preset(mean, tmp_path / "mean", vocabulary=bundled_vocabulary)
    for name in ("student", "lsh", "qa", "mean"):
        assert not (tmp_path / name).exists()
    # A plain backbone needs no vocabulary (then there is nothing to pack).
    to_keras_hub_preset(backbone, tmp_path / "plain")
    assert not (tmp_path / "plain" / "preprocessor.json").exists()
    assert keras_hub.models.AlbertBackbone.from_preset(str(tmp_path / "plain")).num_layers == 2
