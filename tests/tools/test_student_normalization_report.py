"""tools/student_normalization_report.py and the distillation script's
--normalization: the two students differ only in their normalisation,
seeds are summed up as mean +- sd, kept results resume and results made
with other settings are refused."""

import json
import pathlib

import numpy as np
import pytest

import keras_albert
from tests.scripts import load_script

report_tool = load_script("tools/student_normalization_report.py")
distill_tool = load_script("tools/distill_albert_tiny_en_student.py")


def _student_config(argv, tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for name in distill_tool.CORPUS:
        (corpus / name).write_text("text\n")
    seen = []
    monkeypatch.setattr(distill_tool, "cli_main", lambda cli_argv: seen.append(cli_argv) or 0)
    monkeypatch.setattr("sys.argv", ["distill", "--corpus_dir", str(corpus), *argv])
    assert distill_tool.main() == 0
    command = seen[0]
    return json.loads(command[command.index("--student_config") + 1])


def test_the_nonorm_student_differs_from_the_bundled_one_only_in_normalization(
        tmp_path, monkeypatch):
    bundled = _student_config([], tmp_path, monkeypatch)
    assert bundled == distill_tool.STUDENT_CONFIG
    assert bundled["normalization"] == "layer_norm"
    no_norm = _student_config(["--normalization", "no_norm"], tmp_path, monkeypatch)
    assert {key for key in bundled if bundled[key] != no_norm[key]} == {"normalization"}
    assert no_norm["normalization"] == "no_norm"


def seed_report(seed, accuracies, growths, settings):
    models = {
        name: {"accuracy": accuracy, "most_frequent_prediction_share": share,
               "activation_growth": growth}
        for name, accuracy, share, growth in zip(
            report_tool.NORMALIZATIONS, accuracies, (0.2, 1.0), growths)
    }
    return {"seed": seed, "fine_tuning": settings, "test_examples": 100, "models": models,
            "baselines": {"majority": 0.15, "tfidf": 0.5 + seed / 100}}


def _args(argv=()):
    return report_tool.parse_args(list(argv))


def test_summary_is_the_mean_and_sd_over_seeds():
    settings = report_tool.fine_tuning_settings(_args())
    reports = [seed_report(0, (0.60, 0.15), (1.0, 90.0), settings),
               seed_report(1, (0.64, 0.15), (1.0, 110.0), settings)]
    distillations = {"layer_norm": {"seconds": 100.0, "train_steps": 450},
                     "no_norm": {"seconds": 98.0, "train_steps": 450, "resumed": True}}
    summary = report_tool.summarise(_args(), distillations,
                                    {"layer_norm": 0.5, "no_norm": 0.4}, reports)
    layer_norm, no_norm = summary["models"]["layer_norm"], summary["models"]["no_norm"]
    assert layer_norm["accuracy"]["mean"] == pytest.approx(0.62)
    assert layer_norm["accuracy"]["sd"] == pytest.approx(0.0283, abs=1e-4)
    assert layer_norm["accuracy"]["seeds"] == 2
    assert no_norm["activation_growth"]["mean"] == pytest.approx(100.0)
    assert no_norm["most_frequent_prediction_share"]["mean"] == pytest.approx(1.0)
    assert no_norm["distillation_seconds"] == 98.0
    # A stopped and resumed distillation's seconds cover only the rest: said so.
    assert no_norm["distillation_resumed"] and not layer_norm["distillation_resumed"]
    assert (layer_norm["latency_float32_ms"], no_norm["latency_float32_ms"]) == (0.5, 0.4)
    assert summary["baselines"]["tfidf"]["mean"] == pytest.approx(0.505)
    # The margin is a per-seed difference: +45 and +49 points.
    margin = summary["margins_points"]["layer_norm_minus_no_norm"]
    assert margin["mean"] == pytest.approx(47.0) and margin["sd"] == pytest.approx(2.8284, abs=1e-3)
    assert summary["per_seed"] == reports


def _kept_run(output, settings, train_steps=450):
    for normalization in report_tool.NORMALIZATIONS:
        (output / normalization).mkdir(parents=True)
        (output / normalization / "distillation.json").write_text(
            json.dumps({"seconds": 100.0, "train_steps": train_steps}))
    (output / "seed_0.json").write_text(
        json.dumps(seed_report(0, (0.6, 0.15), (1.0, 90.0), settings)))


def _fake_quickstart(monkeypatch):
    monkeypatch.setattr(report_tool, "quickstart", lambda: type("qs", (), {"log": print}))
    monkeypatch.setattr(report_tool, "float32_latency_ms",
                        lambda args, presets, output: {name: 0.5 for name in presets})


def test_kept_distillations_and_seeds_are_reused(tmp_path, monkeypatch):
    output = tmp_path / "run"
    _kept_run(output, report_tool.fine_tuning_settings(_args()))
    ran = []

    def fake_run_seed(args, seed, presets, qs):
        ran.append((seed, {name: path.name for name, path in presets.items()}))
        return seed_report(seed, (0.64, 0.15), (1.0, 110.0),
                           report_tool.fine_tuning_settings(args))

    monkeypatch.setattr(report_tool, "run_seed", fake_run_seed)
    monkeypatch.setattr(report_tool.subprocess, "run",
                        lambda *a, **k: pytest.fail("a kept distillation ran again"))
    _fake_quickstart(monkeypatch)
    assert report_tool.main(["--output", str(output), "--seeds", "0", "1"]) == 0
    assert ran == [(1, {"layer_norm": "preset", "no_norm": "preset"})]
    summary = json.loads((output / "report.json").read_text())
    assert summary["models"]["layer_norm"]["accuracy"]["mean"] == pytest.approx(0.62)
    assert [report["seed"] for report in summary["per_seed"]] == [0, 1]


@pytest.mark.parametrize("argv, message", [
    (["--epochs", "3"], "--epochs=4, not 3"),
    (["--train_steps", "600"], "--train_steps=450, not 600"),
])
def test_results_made_with_other_settings_are_refused(tmp_path, monkeypatch, argv, message):
    output = tmp_path / "run"
    _kept_run(output, report_tool.fine_tuning_settings(_args()))
    monkeypatch.setattr(report_tool, "run_seed", lambda *a: pytest.fail("nothing should run"))
    monkeypatch.setattr(report_tool.subprocess, "run", lambda *a, **k: pytest.fail("no run"))
    _fake_quickstart(monkeypatch)
    with pytest.raises(SystemExit, match=message):
        report_tool.main(["--output", str(output), "--seeds", "0", *argv])
    assert not (output / "report.json").exists()


def test_activation_scale_counts_real_tokens_only():
    preset = "albert_tiny_en_student"
    backbone = keras_albert.AlbertBackbone.from_preset(preset)
    texts = ["a large dog", "a feeling of great joy at the news"]
    scales = []
    for length in (16, 48):
        preprocessor = keras_albert.AlbertTextClassifierPreprocessor.from_preset(
            preset, sequence_length=length)
        classifier = keras_albert.AlbertClassifier(backbone, num_classes=3,
                                                   preprocessor=preprocessor)
        scales.append(report_tool.activation_scale(classifier, texts))
    # More padding changes nothing: padded positions are not counted.
    assert scales[0] == pytest.approx(scales[1], rel=1e-5)
    assert np.isfinite(scales[0]) and scales[0] > 0


def test_latency_is_timed_on_each_students_float32_tflite_file(tmp_path, monkeypatch):
    monkeypatch.setattr(report_tool, "LATENCY_ROUNDS", 1)
    monkeypatch.setattr(report_tool, "LATENCY_CALLS", 2)
    # The bundled student twice: each entry gets its own file.
    presets = {"layer_norm": "albert_tiny_en_student",
               "no_norm": "albert_tiny_en_student"}
    latency = report_tool.float32_latency_ms(_args(["--sequence_length", "16"]), presets, tmp_path)
    assert set(latency) == set(presets)
    assert all(0 < value < 1000 for value in latency.values())
    for normalization in presets:
        content = (tmp_path / normalization / "float32.tflite").read_bytes()
        assert content[4:8] == b"TFL3"


def test_a_distillation_that_goes_on_from_a_stopped_run_is_marked_resumed(tmp_path, monkeypatch):
    ran = []

    def fake_distillation(command, check):
        ran.append(command[command.index("--normalization") + 1])
        (pathlib.Path(command[command.index("--output") + 1]) / "preset").mkdir(parents=True)

    monkeypatch.setattr(report_tool.subprocess, "run", fake_distillation)
    (tmp_path / "no_norm" / "data").mkdir(parents=True)  # a stopped run's leftovers
    args = _args(["--train_steps", "7"])
    _, fresh = report_tool.distil(args, "layer_norm", tmp_path / "layer_norm")
    _, resumed = report_tool.distil(args, "no_norm", tmp_path / "no_norm")
    assert ran == ["layer_norm", "no_norm"]
    assert (fresh["resumed"], resumed["resumed"]) == (False, True)
    assert fresh["train_steps"] == 7 and fresh["seconds"] >= 0
    # Kept: a second call runs nothing and returns the record.
    assert report_tool.distil(args, "no_norm", tmp_path / "no_norm")[1] == resumed
    assert ran == ["layer_norm", "no_norm"]
