"""tools/student_report.py: seeds summed up as mean +- sd, finished seeds kept."""

import json
import pathlib

import pytest

from keras_albert.publishing.preset_records import Record
from keras_albert.publishing.preset_records import describe_record
from keras_albert.publishing.preset_records import record_kind
from tests.scripts import load_script

student_report = load_script("tools/student_report.py")

NAMES = ("teacher", "student, task-distilled", "student, general-distilled",
         "student without distillation")


def seed_report(seed, accuracies, latencies, tfidf):
    rows = {}
    for name, accuracy, latency in zip(NAMES, accuracies, latencies):
        rows[name] = {"preset": name, "training": "labels",
                      "backbone_parameters": 400 if name != "teacher" else 2000,
                      "accuracy": accuracy, "tflite_float32_accuracy": accuracy,
                      "tflite_int8_accuracy": accuracy - 0.01, "training_seconds": 10.0,
                      "tflite_float32_bytes": 100, "tflite_int8_bytes": 50,
                      "tflite_int8_check": {"argmax_agreement": 1.0},
                      "latency_float32_ms": latency, "latency_int8_ms": latency / 2}
    student_report.compare_with_teacher(rows)
    return {"task": student_report.TASK, "seed": seed, "fine_tuning": {"train_examples": 12000,
                                                                       "test_examples": 5},
            "latency": {"threads": 1}, "models": rows,
            "baselines": {"majority": 0.1, "tfidf": tfidf}, "seconds": 60.0}


REPORTS = [seed_report(0, (0.60, 0.62, 0.55, 0.50), (4.0, 1.0, 1.0, 1.0), 0.58),
           seed_report(1, (0.64, 0.63, 0.57, 0.46), (4.0, 1.0, 1.0, 1.0), 0.60),
           seed_report(2, (0.62, 0.67, 0.56, 0.48), (4.0, 1.0, 1.0, 1.0), 0.56)]


def test_summary_is_means_with_spread_and_per_seed_margins():
    summary = student_report.summarise(REPORTS)
    teacher = summary["models"]["teacher"]
    assert teacher["accuracy"] == pytest.approx(0.62)
    assert teacher["accuracy_sd"] == pytest.approx(0.02)
    assert teacher["accuracy_per_seed"] == [0.60, 0.64, 0.62]
    # Margins are differences seed by seed, not differences of the means'
    # spreads: task-distilled minus teacher is +2, -1, +5 points.
    margin = summary["margins"]["task_distilled_minus_teacher"]
    assert margin["mean"] == pytest.approx(2.0) and margin["sd"] == pytest.approx(3.0)
    assert margin["seeds"] == 3
    tfidf_margin = summary["margins"]["task_distilled_minus_tfidf"]
    assert tfidf_margin["mean"] == pytest.approx((4 + 3 + 11) / 3)
    assert summary["baselines"]["tfidf"]["per_seed"] == [0.58, 0.60, 0.56]
    # Ratios against the teacher come from the mean latencies; the export
    # checks are kept per seed, not as one seed's.
    task = summary["models"]["student, task-distilled"]
    assert task["speedup_float32_vs_teacher"] == pytest.approx(4.0)
    assert task["parameter_ratio_vs_teacher"] == pytest.approx(5.0)
    assert "tflite_int8_check" not in task
    assert task["tflite_int8_check_per_seed"] == [{"argmax_agreement": 1.0}] * 3
    assert summary["seeds"] == [0, 1, 2] and summary["seconds"] == pytest.approx(180.0)


def test_model_card_reads_the_summary_like_a_seed_report():
    summary = student_report.summarise(REPORTS)
    assert record_kind(summary) == "student_report"
    record = Record(pathlib.Path("student_report.json"), "student_report.json", "student_report",
                    summary, own_row="student, task-distilled")
    _, results = describe_record(record)
    assert [(r.metric, r.value) for r in results] == [("accuracy", pytest.approx(0.64))]


def test_finished_seeds_are_kept_and_only_missing_ones_run(tmp_path, monkeypatch):
    output = tmp_path / "report"
    (output / "seed_0").mkdir(parents=True)
    (output / "seed_0" / "report.json").write_text(json.dumps(REPORTS[0]))
    ran = []

    def fake_run_seed(args, seed, directory, qs):
        ran.append(seed)
        return REPORTS[seed]

    monkeypatch.setattr(student_report, "run_seed", fake_run_seed)
    monkeypatch.setattr(student_report, "quickstart", lambda: type("qs", (), {"log": print}))
    student_report.main(["--plain", "p", "--output", str(output), "--seeds", "0", "1"])
    assert ran == [1]
    assert json.loads((output / "seed_1" / "report.json").read_text())["seed"] == 1
    summary = json.loads((output / "report.json").read_text())
    assert summary["seeds"] == [0, 1]
    assert summary["models"]["teacher"]["accuracy"] == pytest.approx(0.62)


def test_a_kept_seed_made_with_another_schedule_is_refused(tmp_path, monkeypatch):
    output = tmp_path / "report"
    (output / "seed_0").mkdir(parents=True)
    kept = dict(REPORTS[0], fine_tuning={"train_examples": 12000, "epochs": 2})
    (output / "seed_0" / "report.json").write_text(json.dumps(kept))
    monkeypatch.setattr(student_report, "run_seed", lambda *a: pytest.fail("nothing should run"))
    monkeypatch.setattr(student_report, "quickstart", lambda: type("qs", (), {"log": print}))
    with pytest.raises(SystemExit, match="--epochs=2, not 3"):
        student_report.main(["--plain", "p", "--output", str(output), "--seeds", "0", "--epochs", "3"])
    assert not (output / "report.json").exists()
