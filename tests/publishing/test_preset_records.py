"""The records a preset carries, in its directory or beside it (the
OUTPUT/preset layout of finetune, pretrain and distill)."""

import json

import pytest

from keras_albert.presets.preset_resolution import bundled_presets_dir
from keras_albert.publishing.preset_records import Record
from keras_albert.publishing.preset_records import describe_record
from keras_albert.publishing.preset_records import find_records
from keras_albert.publishing.preset_records import record_kind
from keras_albert.publishing.preset_records import recorded_hyperparameters
from keras_albert.publishing.preset_records import recorded_label_names

FINETUNE = {"task": "classification", "selection_metric": "accuracy", "best_epoch": 1,
            "best": {"epoch": 1, "loss": 0.5, "accuracy": 0.75}, "history": [{}], "labels": ["a", "b"]}


def test_bundled_records_are_found_and_described():
    [pretraining] = find_records(bundled_presets_dir() / "albert_tiny_en")
    assert pretraining.kind == "pretraining" and pretraining.published_as == "pretraining_metrics.json"
    sentences, results = describe_record(pretraining)
    assert "Pretrained for 29,000 steps (610,304,000 tokens)" in sentences[0]
    assert any(s.startswith("Where its knowledge comes from:") and "all-MiniLM-L6-v2" in s
               for s in sentences)
    mlm = next(r for r in results if r.metric == "pretraining mlm_accuracy")
    assert (round(mlm.value, 4), mlm.data, mlm.task, mlm.record) == (
        0.2879, "Persuasion (bundled), 729 instances of 128 tokens", "fill-mask", "pretraining_metrics.json")
    [report] = find_records(bundled_presets_dir() / "albert_tiny_en_student_supersense")
    assert report.kind == "student_report" and report.own_row == "student, task-distilled"
    # The report compares four models; only the bundled student's row is this preset's.
    [accuracy] = describe_record(report)[1]
    assert (accuracy.metric, accuracy.value, accuracy.examples) == ("accuracy", 0.7691, 8245)



def test_the_bundled_causal_lm_record_says_next_token_prediction():
    [record] = find_records(bundled_presets_dir() / "albert_tiny_causal_en")
    assert record.kind == "pretraining"
    sentences, results = describe_record(record)
    assert sentences[0].startswith("Pretrained for 3,000 steps (12,288,000 tokens) with next-token prediction")
    perplexity = next(r for r in results if r.metric == "pretraining perplexity")
    assert perplexity.task == "text-generation" and round(perplexity.value, 1) == 167.5

def test_the_run_record_beside_a_pipeline_preset(tmp_path):
    (tmp_path / "preset").mkdir()
    (tmp_path / "metrics.json").write_text(json.dumps(FINETUNE))
    [record] = find_records(tmp_path / "preset")
    assert record.kind == "finetuning" and record.published_as == "training_run/metrics.json"
    assert recorded_label_names([record]) == ["a", "b"]
    # Beside a directory not named preset, or not written by a pipeline: not ours.
    (tmp_path / "other").mkdir()
    assert find_records(tmp_path / "other") == []
    (tmp_path / "metrics.json").write_text(json.dumps({"anything": 1}))
    assert find_records(tmp_path / "preset") == []


@pytest.mark.parametrize("data,kind", [
    (FINETUNE, "finetuning"),
    ({"train_steps": 10, "heldout": {}}, "pretraining"),
    ({"teacher": "t", "student_parameters": 5, "stages": []}, "distillation"),
    ({"task": "x", "models": {}}, "student_report"),
    ({"accuracy": 1}, "other"),
    ([1, 2], "other"),
])
def test_record_kinds(data, kind):
    assert record_kind(data) == kind


def test_an_unreadable_record_is_named(tmp_path):
    (tmp_path / "student_report.json").write_text("{not json")
    with pytest.raises(ValueError, match="student_report.json' cannot be read as JSON"):
        find_records(tmp_path)


def test_a_recipe_record_says_the_held_out_training_examples_chose_the_epoch():
    record = dict(FINETUNE, selection_metric="validation_accuracy",
                  selection_data="0.1 of the training examples, held out",
                  best={"epoch": 3, "loss": 0.4, "accuracy": 0.7, "validation_accuracy": 0.8},
                  data={"eval": "dev.tsv"})
    sentences, results = describe_record(Record("metrics.json", "metrics.json", "finetuning", record))
    assert "chosen by validation_accuracy on 0.1 of the training examples, held out" in sentences[0]
    assert [(r.metric, r.value, r.data, r.split) for r in results] == [
        ("accuracy", 0.7, "`dev.tsv`", "evaluation"),
        ("validation_accuracy", 0.8, "the training data", "validation: 0.1 of the training examples, held out"),
    ]
    last = describe_record(Record("metrics.json", "metrics.json", "finetuning",
                                  dict(FINETUNE, selection_metric="last epoch")))[0][0]
    assert "the last epoch kept" in last


def test_a_pretraining_runs_settings_travel_as_its_hyperparameters(tmp_path):
    (tmp_path / "preset").mkdir()
    (tmp_path / "metrics.json").write_text(json.dumps({"train_steps": 12, "train": {"loss": 4.7}}))
    (tmp_path / "settings.json").write_text(json.dumps({
        "corpus": ["/home/me/corpus.txt"], "vocabulary_size": 60, "max_seq_length": 32,
        "max_predictions_per_seq": 5, "masked_lm_prob": 0.15, "dupe_factor": 2, "sentence_task": "sop",
        "seed": 12345, "num_groups": None}))
    records = find_records(tmp_path / "preset")
    assert [(r.kind, r.published_as) for r in records] == [
        ("pretraining", "training_run/metrics.json"), ("pretraining_settings", "training_run/settings.json")]
    rows = {name: value for name, value, _ in recorded_hyperparameters(records)}
    assert rows == {"training steps": "12", "SentencePiece vocabulary size": "60",
                    "sequence length (pieces)": "32", "masked positions per sequence": "5",
                    "masking rate": "0.15", "masking passes over the corpus (dupe factor)": "2",
                    "sentence-level task": "sop", "seed": "12,345"}
    assert describe_record(records[1])[0] == ["Pretraining data made from `corpus.txt` (`training_run/settings.json`)."]
