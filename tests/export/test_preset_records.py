"""The records a preset carries, in its directory or beside it (the
OUTPUT/preset layout of finetune, pretrain and distill)."""

import json

import pytest

from keras_albert.export.preset_records import Record
from keras_albert.export.preset_records import describe_record
from keras_albert.export.preset_records import find_records
from keras_albert.export.preset_records import record_kind
from keras_albert.export.preset_records import recorded_label_names
from keras_albert.presets.preset_resolution import bundled_presets_dir

FINETUNE = {"task": "classification", "selection_metric": "accuracy", "best_epoch": 1,
            "best": {"epoch": 1, "loss": 0.5, "accuracy": 0.75}, "history": [{}], "labels": ["a", "b"]}


def test_bundled_records_are_found_and_described():
    [pretraining] = find_records(bundled_presets_dir() / "albert_tiny_en")
    assert pretraining.kind == "pretraining" and pretraining.published_as == "pretraining_metrics.json"
    sentences, rows = describe_record(pretraining)
    assert "Pretrained for 21,000 steps" in sentences[0]
    assert any(s.startswith("Where its knowledge comes from:") and "all-MiniLM-L6-v2" in s
               for s in sentences)
    assert ("pretraining mlm_accuracy", "0.2765",
            "Persuasion (bundled), 729 instances of 128 tokens (`pretraining_metrics.json`)") in rows
    [report] = find_records(bundled_presets_dir() / "albert_tiny_en_student_supersense")
    assert report.kind == "student_report"
    rows = describe_record(report)[1]
    assert any(name == "student, task-distilled: accuracy" and value == "0.6961" for name, value, _ in rows)


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
    sentences, rows = describe_record(Record("metrics.json", "metrics.json", "finetuning", record))
    assert "chosen by validation_accuracy on 0.1 of the training examples, held out" in sentences[0]
    assert ("accuracy", "0.7000", "`dev.tsv`, best epoch (`metrics.json`)") in rows
    assert ("validation_accuracy", "0.8000",
            "0.1 of the training examples, held out, best epoch (`metrics.json`)") in rows
    last = describe_record(Record("metrics.json", "metrics.json", "finetuning",
                                  dict(FINETUNE, selection_metric="last epoch")))[0][0]
    assert "the last epoch kept" in last
