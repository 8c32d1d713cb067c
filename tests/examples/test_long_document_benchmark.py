"""benchmarks/long_document_quality.py: flags, a tiny run of every row kind, resuming."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "long_document_quality.py"
TINY = ["--document_length", "64", "--max_passages_per_class", "3", "--epochs", "1",
        "--batch_size", "4", "--truncated_length", "32", "--lsh_chunk_length", "16"]


def run(*flags, timeout=120):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *flags],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=timeout,
    )


@pytest.fixture(scope="module")
def benchmark():
    spec = importlib.util.spec_from_file_location("long_document_quality", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_help_lists_the_flags_without_tensorflow():
    started = time.perf_counter()
    result = run("--help")
    assert result.returncode == 0, result.stderr
    for flag in ("--rows", "--document_length", "--truncated_length", "--max_hours_per_row",
                 "--restart", "--keep_names", "--output"):
        assert flag in result.stdout
    assert "python benchmarks/long_document_quality.py --rows full-512 lsh1-2048" in result.stdout
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("flags, message", [
    (("--rows", "full-abc"), "not KIND-LENGTH"),
    (("--rows", "lsh0-512"), "not KIND-LENGTH"),
    (("--rows", "full-4096"), "row full-4096: the length must be in [8, --document_length 2048]"),
    (("--epochs", "0"), "--epochs must be >= 1"),
    (("--max_hours_per_row", "-1"), "--max_hours_per_row must be >= 0"),
])
def test_bad_flags_exit_2_naming_the_flag(flags, message, capsys, benchmark):
    with pytest.raises(SystemExit) as raised:
        benchmark.parse_args(list(flags))
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


def test_rows_are_ordered_baselines_first(benchmark):
    args = benchmark.parse_args(["--rows", "lsh4-2048", "full-512", "tfidf-512", "full-2048"])
    assert benchmark.row_names(args) == ["tfidf-512", "tfidf-2048", "lsh4-2048", "full-512", "full-2048"]


def test_comparison_holds_the_targets(benchmark):
    def row(model, length, accuracy, step):
        return {"model": model, "sequence_length": length, "accuracy": accuracy, "status": "done",
                "step_seconds": {"median": step}, "test_passages": 100}

    rows = {"full-512": row("full", 512, 0.60, 1.0), "full-2048": row("full", 2048, 0.71, 6.0),
            "lsh1-2048": row("lsh", 2048, 0.70, 1.0), "lsh4-2048": row("lsh", 2048, 0.64, 2.0),
            "tfidf-512": row("tfidf", 512, 0.59, None)}
    comparison = benchmark.compare(rows, truncated_length=512)
    assert comparison["full_accuracy_by_length"] == {"512": 0.60, "2048": 0.71}
    one, four = comparison["lsh"]["lsh1-2048"], comparison["lsh"]["lsh4-2048"]
    assert one["minus_full_512_points"] == 10.0 and one["minus_full_same_length_points"] == -1.0
    assert one["full_over_lsh_step_time"] == 6.0
    assert all(one["targets"].values())
    assert four["targets"] == {"beats_full_512_by_5_points": False, "at_most_1_point_below_full": False,
                               "step_5x_faster": False}
    # 100 test passages cannot show a 1-point gap or a 4-point margin.
    assert one["minus_full_same_length_95"][0] < -1 < one["minus_full_same_length_95"][1]
    assert one["targets_supported_by_interval"] == {
        "beats_full_512_by_5_points": False, "at_most_1_point_below_full": False}
    assert comparison["accuracy_95"]["full-512"] == {
        "n": 100, "correct": 60, "accuracy": 0.60, "wilson_95": [0.5020, 0.6906]}
    assert comparison["margins_95"]["tfidf-512 minus full-512"]["points"] == -1.0
    # Full attention over its time budget still gives its step time.
    rows["full-2048"]["status"] = "over_time_budget"
    entry = benchmark.compare(rows, truncated_length=512)["lsh"]["lsh1-2048"]
    assert "minus_full_same_length_points" not in entry and entry["full_over_lsh_step_time"] == 6.0


def test_recompute_intervals_adds_them_from_the_recorded_rows(tmp_path, benchmark):
    rows = {
        "full-512": {"model": "full", "sequence_length": 512, "accuracy": 9 / 26, "status": "done",
                     "test_passages": 26},
        "lsh1-8192": {"model": "lsh", "sequence_length": 8192, "accuracy": 21 / 26, "status": "done",
                      "test_passages": 26, "step_seconds": {"median": 1.0, "min": 1.0, "max": 1.0}},
    }
    output = tmp_path / "long.json"
    output.write_text(json.dumps({"command": "python benchmarks/long_document_quality.py",
                                  "date": "2026-11-25T00:00:00+00:00", "rows": rows}))
    assert run("--recompute_intervals", "--output", str(output)).returncode == 0
    recorded = json.loads(output.read_text())
    assert recorded["date"] == "2026-11-25T00:00:00+00:00" and recorded["rows"] == rows
    assert recorded["intervals_recomputed"]["from"].endswith("no model was trained")
    assert recorded["comparison"]["accuracy_95"]["lsh1-8192"]["correct"] == 21
    low, high = recorded["comparison"]["lsh"]["lsh1-8192"]["minus_full_512_95"]
    assert 0 < low < 46.15 < high


def test_a_file_of_another_setting_is_refused_unless_restarted(tmp_path, benchmark):
    setting = benchmark.setting_of(benchmark.parse_args([]))
    output = tmp_path / "long.json"
    assert benchmark.load_rows(output, setting, restart=False) == {}
    output.write_text(json.dumps({"setting": setting, "rows": {"full-128": {"status": "done"}}}))
    assert benchmark.load_rows(output, setting, restart=False) == {"full-128": {"status": "done"}}
    assert benchmark.load_rows(output, setting, restart=True) == {}
    other = benchmark.setting_of(benchmark.parse_args(["--batch_size", "4", "--keep_names"]))
    with pytest.raises(SystemExit, match="differs in: names_masked, recipe"):
        benchmark.load_rows(output, other, restart=False)


@pytest.mark.large
def test_recorded_rows_are_kept_unfinished_ones_retried(tmp_path, capsys, benchmark):
    output = tmp_path / "long.json"
    argv = [*TINY, "--rows", "tfidf-32", "tfidf-64", "--output", str(output)]
    benchmark.main(argv)
    first = json.loads(output.read_text())
    assert first["rows"]["tfidf-32"]["status"] == "done" and first["task"]["names_masked"] is True
    assert first["setting"]["document_length"] == 64
    benchmark.main(argv)
    assert "tfidf-32: recorded" in capsys.readouterr().out
    assert json.loads(output.read_text())["rows"] == first["rows"]
    # A row whose run was killed is retried, up to --max_attempts runs in all.
    first["rows"]["tfidf-64"] = {"status": "started", "attempts": 1}
    output.write_text(json.dumps(first))
    benchmark.main(argv)
    retried = json.loads(output.read_text())["rows"]["tfidf-64"]
    assert retried["status"] == "done" and retried["attempts"] == 2
    first["rows"]["tfidf-64"] = {"status": "started", "attempts": 2}
    output.write_text(json.dumps(first))
    benchmark.main(argv)
    assert "tfidf-64: started 2 times and never finished" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="differs in: seed"):
        benchmark.main([*argv, "--seed", "1"])
    benchmark.main([*argv, "--seed", "1", "--restart"])
    assert json.loads(output.read_text())["setting"]["seed"] == 1


@pytest.mark.large
def test_a_tiny_run_records_every_row_and_the_ratios(tmp_path, benchmark):
    output = tmp_path / "long.json"
    benchmark.main([*TINY, "--rows", "full-32", "full-64", "lsh1-64", "lsh4-64", "--output", str(output)])
    results = json.loads(output.read_text())
    rows = results["rows"]
    assert set(rows) == {"tfidf-32", "tfidf-64", "full-32", "full-64", "lsh1-64", "lsh4-64"}
    for row in rows.values():
        assert row["status"] == "done" and 0 <= row["accuracy"] <= 1 and 0 <= row["macro_f1"] <= 1
        assert row["test_passages"] == 18
    assert results["command"].startswith("python benchmarks/long_document_quality.py --document_length 64")
    assert results["machine"]["cpu_cores"] >= 1
    for name in ("lsh1-64", "lsh4-64"):
        entry = results["comparison"]["lsh"][name]
        assert entry["minus_full_32_points"] == pytest.approx(
            100 * (rows[name]["accuracy"] - rows["full-32"]["accuracy"]), abs=0.01)
        assert entry["minus_full_same_length_points"] == pytest.approx(
            100 * (rows[name]["accuracy"] - rows["full-64"]["accuracy"]), abs=0.01)
        assert entry["full_over_lsh_step_time"] == pytest.approx(
            rows["full-64"]["step_seconds"]["median"] / rows[name]["step_seconds"]["median"], abs=0.01)
    assert set(results["comparison"]["full_accuracy_by_length"]) == {"32", "64"}
