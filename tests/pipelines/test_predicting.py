"""`predict_texts`: rows equal the classifier's own predictions, from a
preset or its serving SavedModel, in JSON lines or TSV.

Runs on every backend; the serving SavedModel's tests on KERAS_BACKEND=tensorflow
(elsewhere the library refuses to write or load one):
    KERAS_BACKEND=jax python -m pytest -p tests.tensorflow_blocked tests/pipelines/test_predicting.py
"""

import csv
import json
import logging

import numpy as np
import pytest

import keras_albert
from keras_albert.pipelines.predicting import classify
from keras_albert.pipelines.predicting import load_classifier
from keras_albert.pipelines.predicting import predict_texts
from keras_albert.pipelines.predicting import read_texts
from keras_albert.pipelines.prediction_settings import PredictSettings
from tests.pipelines.tiny_classifier import LABELS
from tests.pipelines.tiny_classifier import animal_texts
from tests.pipelines.tiny_classifier import skip_unless_serving_runs
from tests.pipelines.tiny_classifier import tiny_classifier
from tests.pipelines.tiny_classifier import tiny_regressor
from tests.pipelines.tiny_classifier import write_table


@pytest.fixture(scope="module")
def trained(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    return tiny_classifier(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)


def _softmax(logits):
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_preset_rows_equal_the_models_own_predict(trained, tmp_path):
    texts, _ = animal_texts(9, seed=5)
    (tmp_path / "texts.txt").write_text("\ufeff" + "\n\n".join(texts) + "\n  \n", encoding="utf-8")
    output = tmp_path / "rows.jsonl"
    returned = predict_texts(PredictSettings(texts=str(tmp_path / "texts.txt"), preset=str(trained / "preset"),
                                             output=str(output), batch_size=4))
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert rows == returned and [row["text"] for row in rows] == texts  # blank lines and the BOM dropped
    model = keras_albert.AlbertClassifier.from_preset(str(trained / "preset"))
    expected = _softmax(np.asarray(model.predict(texts, verbose=0), "float64"))
    got = np.asarray([[row["probabilities"][name] for name in LABELS] for row in rows])
    np.testing.assert_allclose(got, expected, atol=2e-6)
    assert [row["label"] for row in rows] == [LABELS[i] for i in expected.argmax(-1)]
    assert [row["probability"] for row in rows] == pytest.approx(expected.max(-1), abs=2e-6)


def test_saved_model_agrees_with_the_preset_and_names_every_class(trained, tmp_path):
    skip_unless_serving_runs()
    texts, _ = animal_texts(40, seed=6)
    preset = load_classifier(preset=str(trained / "preset"))
    served = load_classifier(saved_model=str(trained / "serving"))
    assert served.label_names == list(LABELS)  # from the export's labels.txt
    np.testing.assert_allclose(classify(served, texts, batch_size=8), classify(preset, texts, batch_size=8),
                               atol=1e-5)


def test_tsv_output_and_progress_in_texts(trained, tmp_path, caplog):
    texts, _ = animal_texts(70, seed=7)
    write_table(tmp_path / "in.tsv", texts, ["?"] * 70, header=("sentence", "other"))
    output = tmp_path / "rows.tsv"
    with caplog.at_level(logging.INFO, logger="keras_albert"):
        rows = predict_texts(PredictSettings(texts=str(tmp_path / "in.tsv"), text_columns=("sentence",),
                                             preset=str(trained / "preset"), output=str(output), batch_size=1))
    with output.open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    assert list(table[0]) == ["text", "label", "probability"] + [f"p({name})" for name in LABELS]
    assert [line["text"] for line in table] == texts
    assert [line["label"] for line in table] == [row["label"] for row in rows]
    assert [float(line["p(cat)"]) for line in table] == [row["probabilities"]["cat"] for row in rows]
    # One chunk is 64 batches: a 70-text input at batch size 1 reports twice.
    progress = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Texts classified")]
    assert [line.split(" (")[0] for line in progress] == ["Texts classified: 64/70", "Texts classified: 70/70"]


def test_read_texts_lines_and_tables(tmp_path):
    (tmp_path / "a.txt").write_text("one\r\ntwo\u2028still two\n\n", encoding="utf-8")
    assert read_texts(str(tmp_path / "a.txt")) == (["one", "two\u2028still two"], None)
    (tmp_path / "b.csv").write_text('a,b,label\n"x, y",z,1\n', encoding="utf-8")
    assert read_texts(str(tmp_path / "b.csv"), ("a", "b")) == (["x, y"], ["z"])
    (tmp_path / "blank.txt").write_text("\n \n", encoding="utf-8")
    with pytest.raises(ValueError, match="holds no text: every line is blank"):
        read_texts(str(tmp_path / "blank.txt"))
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ValueError, match="is not UTF-8"):
        read_texts(str(tmp_path / "latin.txt"))


def test_a_saved_model_of_single_texts_refuses_pairs(trained, tmp_path):
    skip_unless_serving_runs()
    served = load_classifier(saved_model=str(trained / "serving"))
    with pytest.raises(ValueError, match="classifies single texts; received two `--text_columns`"):
        classify(served, ["a"], ["b"])


def test_presets_that_are_not_classifiers_are_refused(tmp_path, sentencepiece_proto, tiny_backbone_config):
    with pytest.raises(ValueError, match=r"'albert_tiny_en' holds AlbertPretrainer \(its task.json\); predict and "
                                         r"evaluate take the task presets `finetune` writes: text classifiers "
                                         r"\(AlbertClassifier, .*\), token classifiers .* and multiple choice "
                                         r"\(AlbertMultipleChoice, `--task=multiple_choice`\)"):
        load_classifier(preset="albert_tiny_en")
    tokenizer = keras_albert.AlbertTokenizer(proto=sentencepiece_proto)
    backbone = keras_albert.AlbertBackbone(**dict(tiny_backbone_config, vocabulary_size=tokenizer.vocabulary_size()))
    backbone.save_to_preset(str(tmp_path / "backbone"))
    tokenizer.save_to_preset(str(tmp_path / "backbone"))
    with pytest.raises(ValueError, match=r"holds no fine-tuned task \(no task.json\)"):
        load_classifier(preset=str(tmp_path / "backbone"))


def test_lengths_past_the_presets_positions_are_refused(trained, tmp_path):
    # Checked on the loaded model too (a downloaded preset has no config.json
    # to read first); 32 positions are accepted and padded to their bucket.
    with pytest.raises(ValueError, match=r"`--sequence_length` 33 is more than the 32 positions of preset "):
        load_classifier(preset=str(trained / "preset"), sequence_length=33)
    (tmp_path / "texts.txt").write_text("a cat\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"Pass at most 32, or give the backbone more positions first"):
        predict_texts(PredictSettings(texts=str(tmp_path / "texts.txt"), preset=str(trained / "preset"),
                                      sequence_length=33, output=str(tmp_path / "rows.jsonl")))
    assert not (tmp_path / "rows.jsonl").exists()
    classifier = load_classifier(preset=str(trained / "preset"), sequence_length=32)
    assert classify(classifier, ["a cat " * 40]).shape == (1, len(LABELS))


def test_a_regressors_rows_are_its_scores(tmp_path, tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    regressor = tiny_regressor(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)
    texts, _ = animal_texts(7, seed=8)
    (tmp_path / "texts.txt").write_text("\n".join(texts), encoding="utf-8")
    model = keras_albert.AlbertClassifier.from_preset(str(regressor / "preset"))
    expected = np.asarray(model.predict(texts, verbose=0))[:, 0]
    rows = predict_texts(PredictSettings(texts=str(tmp_path / "texts.txt"), preset=str(regressor / "preset"),
                                         output=str(tmp_path / "rows.tsv")))
    assert [sorted(row) for row in rows] == [["score", "text"]] * 7
    np.testing.assert_allclose([row["score"] for row in rows], expected, atol=1e-6)
    lines = (tmp_path / "rows.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "text\tscore" and [float(line.split("\t")[1]) for line in lines[1:]] == [
        row["score"] for row in rows]


def test_a_served_regressors_scores_are_the_presets(tmp_path_factory, sentencepiece_proto, tiny_backbone_config):
    skip_unless_serving_runs()
    regressor = tiny_regressor(tmp_path_factory, sentencepiece_proto, tiny_backbone_config)
    texts, _ = animal_texts(7, seed=8)
    expected = np.asarray(keras_albert.AlbertClassifier.from_preset(str(regressor / "preset")).predict(
        texts, verbose=0))[:, 0]
    served = load_classifier(saved_model=str(regressor / "serving"))
    assert served.regression
    np.testing.assert_allclose(classify(served, texts)[:, 0], expected, atol=1e-5)
