"""benchmarks/long_document_quality.py: flags, the protocol (choices on a seeded
chapter carve-out, the held-out test split read last, mean +- sd over seeds,
n and 95 % intervals), a tiny run of every row kind, resuming."""

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
        "--batch_size", "4", "--truncated_length", "32", "--lsh_chunk_length", "16",
        "--learning_rates", "1e-3", "--poolings", "mean"]


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
                 "--restart", "--keep_names", "--output", "--seeds", "--learning_rates", "--poolings",
                 "--warm_starts"):
        assert flag in result.stdout
    assert "python benchmarks/long_document_quality.py --rows full-512 lsh1-2048 --seeds 0" in result.stdout
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("flags, message", [
    (("--rows", "full-abc"), "not KIND-LENGTH"),
    (("--rows", "lsh0-512"), "not KIND-LENGTH"),
    (("--rows", "full-4096"), "row full-4096: the length must be in [8, --document_length 2048]"),
    (("--epochs", "0"), "--epochs must be >= 1"),
    (("--max_hours_per_row", "-1"), "--max_hours_per_row must be >= 0"),
    (("--seeds", "0", "0"), "--seeds must be distinct integers >= 0"),
    (("--seeds", "-1"), "--seeds must be distinct integers >= 0"),
    (("--learning_rates", "0"), "--learning_rates must be > 0"),
    (("--poolings", "mean", "mean"), "--poolings must not repeat a value"),
    (("--warm_starts", "maybe"), "invalid choice"),
])
def test_bad_flags_exit_2_naming_the_flag(flags, message, capsys, benchmark):
    with pytest.raises(SystemExit) as raised:
        benchmark.parse_args(list(flags))
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


def test_rows_are_ordered_baselines_first(benchmark):
    args = benchmark.parse_args(["--rows", "lsh4-2048", "full-512", "tfidf-512", "full-2048"])
    assert benchmark.row_names(args) == ["majority", "tfidf-512", "tfidf-2048", "lsh4-2048", "full-512",
                                         "full-2048"]


def test_the_grid_is_every_candidate_of_the_flags_for_the_seed(benchmark):
    args = benchmark.parse_args(["--learning_rates", "2e-4", "1e-3", "--rows", "lsh4-2048"])
    grid = benchmark.candidates("lsh4-2048", args, seed=2)
    assert len(grid) == 2 * 2 * 2 and {c.name for c in grid} == {"lsh4-2048"}
    assert {(c.recipe.learning_rate, c.pooling, c.recipe.head_warm_start) for c in grid} == {
        (rate, pooling, warm) for rate in (2e-4, 1e-3) for pooling in ("mean", "cls") for warm in (True, False)}
    assert {c.seed for c in grid} == {2}


def test_the_test_split_is_the_one_kept_out_of_pretraining(benchmark):
    from keras_albert.datasets.heldout import LONG_DOCUMENT_SEED

    setting = benchmark.setting_of(benchmark.parse_args(["--seeds", "4", "5"]))
    assert setting["split_seed"] == LONG_DOCUMENT_SEED and "seeds" not in setting


def _rows(accuracies, n=100, steps=None):
    """{name: {"runs": {seed: run}}} from {name: [accuracy of each seed]}."""
    rows = {}
    for name, values in accuracies.items():
        runs = {}
        for seed, accuracy in enumerate(values):
            run = {"status": "done", "accuracy": accuracy, "macro_f1": accuracy, "test_passages": n}
            if steps and name in steps:
                run["step_seconds"] = {"median": steps[name][seed]}
            runs[str(seed)] = run
        rows[name] = {"runs": runs}
    return rows


def test_rows_are_reported_as_mean_sd_with_n_and_the_interval(benchmark):
    rows = _rows({"majority": [0.2, 0.2, 0.2], "full-512": [0.58, 0.60, 0.62], "tfidf-512": [0.59, 0.59, 0.59]})
    rows["full-512"]["runs"]["3"] = {"status": "started"}
    summary = benchmark.compare(rows, truncated_length=512)["rows"]["full-512"]
    assert summary["accuracy"] == {"mean": 0.6, "sd": 0.02, "seeds": 3} and summary["n"] == 100
    assert summary["wilson_95"] == [0.502, 0.6906] and summary["seeds"] == ["0", "1", "2"]
    # One seed has no sd; different test sets cannot be averaged.
    assert benchmark.summarize(_rows({"full-512": [0.5]})["full-512"])["accuracy"]["sd"] is None
    uneven = _rows({"full-512": [0.5, 0.5]})["full-512"]
    uneven["runs"]["1"]["test_passages"] = 50
    with pytest.raises(ValueError, match="different test sets"):
        benchmark.summarize(uneven)


def test_margins_are_per_seed_differences_and_targets_need_the_interval(benchmark):
    rows = _rows({"full-512": [0.58, 0.60, 0.62], "full-2048": [0.70, 0.71, 0.72],
                  "lsh1-2048": [0.69, 0.70, 0.71], "tfidf-2048": [0.80, 0.80, 0.80]},
                 n=300, steps={"full-2048": [6.0, 6.5, 7.0], "lsh1-2048": [1.0, 1.2, 1.1]})
    comparison = benchmark.compare(rows, truncated_length=512)
    over = comparison["margins"]["lsh1-2048 minus full-512"]
    assert over["mean"] == 10.0 and over["sd"] == 1.0 and over["seeds"] == 3 and over["n"] == 300
    low, high = over["newcombe_95_points"]
    assert 0 < low < 5 < 10 < high
    same = comparison["margins"]["lsh1-2048 minus full-2048"]
    assert same["mean"] == -1.0 and same["newcombe_95_points"][0] < -1
    entry = comparison["lsh"]["lsh1-2048"]
    assert entry["targets_met_on_the_mean"] == {
        "beats_full_512_by_5_points": True, "at_most_1_point_below_full": True, "step_5x_faster": True}
    # 300 test passages show a 10-point margin above 0, not above 5, nor a 1-point gap.
    assert entry["targets_supported_by_interval"] == {
        "beats_full_512_by_5_points": False, "at_most_1_point_below_full": False}
    assert entry["full_over_lsh_step_time"] == round(6.5 / 1.1, 2)
    summary = benchmark.readme_summary(comparison)
    assert any(line.startswith("lsh1-2048: 70.0 +- 1.0 % over 3 seed(s), n = 300 test passages, 95 % interval")
               for line in summary)
    assert any(line.startswith("lsh1-2048 minus full-512: +10.0 +- 1.0 points") and "lsh1-2048 is ahead" in line
               for line in summary)
    tfidf_line = next(line for line in summary if line.startswith("tfidf-2048 minus lsh1-2048"))
    assert tfidf_line.endswith("tfidf-2048 is ahead (the whole interval is above 0).")
    assert any(line.startswith("lsh1-2048 minus full-2048") and "no difference is shown" in line
               for line in summary)
    assert "lsh1-2048 beats full 512 by 5 points: met on the mean, not supported by the interval." in summary
    # Four hash rounds are set against one at the same length.
    rows.update(_rows({"lsh4-2048": [0.70, 0.72, 0.74]}, n=300))
    extra = benchmark.compare(rows, 512)["margins"]["lsh4-2048 minus lsh1-2048"]
    assert extra["mean"] == 2.0 and extra["seeds"] == 3
    assert "lsh1-2048 minus lsh4-2048" not in benchmark.compare(rows, 512)["margins"]
    del rows["lsh4-2048"]
    # Seeds pair up: a seed only one side finished is left out of the margin.
    rows["full-512"]["runs"]["2"]["status"] = "started"
    assert benchmark.compare(rows, 512)["margins"]["lsh1-2048 minus full-512"]["seeds"] == 2


def test_a_file_of_another_setting_is_refused_unless_restarted(tmp_path, benchmark):
    setting = benchmark.setting_of(benchmark.parse_args([]))
    output = tmp_path / "long.json"
    assert benchmark.load_rows(output, setting, restart=False) == {}
    recorded = {"full-128": {"runs": {"0": {"status": "done"}}}}
    output.write_text(json.dumps({"setting": setting, "rows": recorded}))
    assert benchmark.load_rows(output, setting, restart=False) == recorded
    assert benchmark.load_rows(output, setting, restart=True) == {}
    # More seeds extend the file; another grid does not.
    assert benchmark.setting_of(benchmark.parse_args(["--seeds", "7"])) == setting
    other = benchmark.setting_of(benchmark.parse_args(["--batch_size", "4", "--keep_names", "--poolings", "mean"]))
    with pytest.raises(SystemExit, match="differs in: chosen_on_the_carve_out, names_masked, recipe"):
        benchmark.load_rows(output, other, restart=False)


@pytest.mark.large
def test_recorded_runs_are_kept_unfinished_ones_retried_more_seeds_added(tmp_path, capsys, benchmark):
    output = tmp_path / "long.json"
    argv = [*TINY, "--rows", "tfidf-32", "tfidf-64", "--seeds", "0", "--output", str(output)]
    benchmark.main(argv)
    first = json.loads(output.read_text())
    assert set(first["rows"]) == {"majority", "tfidf-32", "tfidf-64"}
    run = first["rows"]["tfidf-32"]["runs"]["0"]
    assert run["status"] == "done" and run["carve_out_passages"] == 12 and run["test_passages"] == 18
    assert first["task"]["names_masked"] is True and first["task"]["seed"] == 0
    assert first["setting"]["document_length"] == 64
    benchmark.main(argv)
    assert "tfidf-32, seed 0: recorded" in capsys.readouterr().out
    assert json.loads(output.read_text())["rows"] == first["rows"]
    # With nothing left to run, a rerun still rewrites the comparison.
    stale = json.loads(output.read_text())
    stale["comparison"] = {}
    output.write_text(json.dumps(stale))
    benchmark.main(argv)
    assert json.loads(output.read_text())["comparison"] == first["comparison"]
    # A run that was killed is retried, up to --max_attempts runs in all.
    first["rows"]["tfidf-64"]["runs"]["0"] = {"status": "started", "attempts": 1}
    output.write_text(json.dumps(first))
    benchmark.main(argv)
    retried = json.loads(output.read_text())["rows"]["tfidf-64"]["runs"]["0"]
    assert retried["status"] == "done" and retried["attempts"] == 2
    first["rows"]["tfidf-64"]["runs"]["0"] = {"status": "started", "attempts": 2}
    output.write_text(json.dumps(first))
    benchmark.main(argv)
    assert "tfidf-64, seed 0: started 2 times and never finished" in capsys.readouterr().out
    # Another seed is added beside the recorded one, on the same test passages.
    benchmark.main([*argv, "--seeds", "0", "1"])
    recorded = json.loads(output.read_text())
    assert set(recorded["rows"]["tfidf-32"]["runs"]) == {"0", "1"}
    assert recorded["rows"]["tfidf-32"]["runs"]["0"] == first["rows"]["tfidf-32"]["runs"]["0"]
    assert recorded["comparison"]["rows"]["tfidf-32"]["accuracy"]["seeds"] == 2
    assert recorded["readme_summary"][0].startswith("majority: ")


@pytest.mark.large
def test_a_tiny_run_chooses_on_the_carve_out_and_records_every_row(tmp_path, benchmark):
    output = tmp_path / "long.json"
    # One model row, one seed, two candidates: two tiny fine-tunings (seeds
    # recorded side by side: test_recorded_runs_are_kept_...).
    benchmark.main([*TINY, "--rows", "lsh1-64", "--seeds", "1", "--warm_starts", "on", "off",
                    "--output", str(output)])
    results = json.loads(output.read_text())
    rows = results["rows"]
    assert set(rows) == {"majority", "tfidf-64", "lsh1-64"}
    for name, entry in rows.items():
        assert set(entry["runs"]) == {"1"}
        for run in entry["runs"].values():
            assert run["status"] == "done" and 0 <= run["accuracy"] <= 1 and run["test_passages"] == 18
    for run in rows["lsh1-64"]["runs"].values():
        # Both candidates fitted; only the carve-out's pick carries test scores.
        assert [c["head_warm_start"] for c in run["candidates"]] == [True, False]
        assert all("accuracy" not in c for c in run["candidates"])
        best = max(c["carve_out_accuracy"] for c in run["candidates"])
        assert run["candidates"][run["chosen_candidate"]]["carve_out_accuracy"] == best
        assert run["step_seconds"]["steps"] >= 1
    assert results["command"].startswith("python benchmarks/long_document_quality.py --document_length 64")
    assert results["machine"]["cpu_cores"] >= 1
    summary = results["comparison"]["rows"]["lsh1-64"]
    assert summary["n"] == 18 and summary["accuracy"]["seeds"] == 1 and summary["step_seconds_median"] > 0
    assert sum(summary["chosen_on_the_carve_out"].values()) == 1
    assert set(results["comparison"]["margins"]) == {"tfidf-64 minus lsh1-64", "lsh1-64 minus majority"}
    assert any(line.startswith("lsh1-64: ") for line in results["readme_summary"])


@pytest.mark.large
def test_sigterm_stops_cleanly_and_the_next_run_goes_on_after_the_fitted_candidates(tmp_path, capsys, benchmark):
    output = tmp_path / "long.json"
    flags = [*TINY, "--rows", "full-64", "--seeds", "0", "--warm_starts", "on", "off", "--output", str(output)]

    def progress():
        try:
            return json.loads(output.read_text())["rows"]["full-64"]["runs"]["0"].get("progress")
        except (FileNotFoundError, KeyError, json.JSONDecodeError):
            return None

    process = subprocess.Popen([sys.executable, str(SCRIPT), *flags], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not progress() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    process.terminate()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    assert "full-64, seed 0: stopped (SIGTERM)" in stderr
    stopped = json.loads(output.read_text())["rows"]["full-64"]["runs"]["0"]
    assert stopped["status"] == "stopped" and stopped["attempts"] == 0
    # The results file alone carries the progress: rows and the leader's scores, no weights.
    assert len(stopped["progress"]["fitted"]) == 1 and stopped["progress"]["best"] == 0
    assert stopped["progress"]["best_test_scores"]["test_passages"] == 18
    # The next run goes on in this process: only the SIGTERM needed one.
    benchmark.main(flags)
    assert "full-64: 1 of 2 candidates fitted before; going on from there" in capsys.readouterr().out
    finished = json.loads(output.read_text())["rows"]["full-64"]["runs"]["0"]
    assert finished["status"] == "done" and finished["attempts"] == 1 and len(finished["candidates"]) == 2
    assert "progress" not in finished


def test_the_readme_table_quotes_every_finished_row_with_tags_that_agree(tmp_path, benchmark):
    from tests.test_readme_figures import problems

    rows = _rows({"majority": [0.25] * 3, "tfidf-512": [0.6, 0.62, 0.61], "tfidf-2048": [0.9, 0.92, 0.94],
                  "full-512": [0.5, 0.45, 0.55], "lsh1-2048": [0.7, 0.72]},
                 steps={"full-512": [0.5, 0.52, 0.51], "lsh1-2048": [1.0, 1.1]})
    comparison = benchmark.compare(rows, truncated_length=512)
    record = tmp_path / "benchmarks" / "results" / "long.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"comparison": comparison}))
    lines = benchmark.readme_table(comparison, "benchmarks/results/long.json")
    assert problems("\n".join(lines) + "\n", tmp_path) == []
    names = [line.split(" | ")[0].lstrip("| ") for line in lines[2:]]
    # lsh1-2048 has 2 of 3 seeds: left out, so TF-IDF at 2,048 stands alone.
    assert names == ["majority", "full-512", "tfidf-2048 (no model row at this length yet)"]
    assert "51.7<!--" not in lines[3] and "50.0<!--" in lines[3] and "61.0<!--" in lines[3]
    assert "0.510 s<!--" in lines[3]
    margins = benchmark.readme_margins(comparison, "benchmarks/results/long.json")
    assert problems("\n".join(margins) + "\n", tmp_path) == []
    # Only between rows with every seed: not lsh1-2048's.
    assert [line.split(":")[0] for line in margins] == ["- tfidf-512 minus full-512", "- full-512 minus majority"]
    assert "+11.0 points<!--" in margins[0] and margins[0].endswith("no difference is shown.")
    assert margins[1].endswith("full-512 is ahead.")
    # A changed record breaks the quoted figures.
    comparison["rows"]["full-512"]["accuracy"]["mean"] = 0.4
    record.write_text(json.dumps({"comparison": comparison}))
    assert problems("\n".join(lines) + "\n", tmp_path)


def test_readme_table_flag_prints_the_table_of_a_record_and_runs_nothing(tmp_path, capsys, benchmark):
    output = tmp_path / "long.json"
    setting = benchmark.setting_of(benchmark.parse_args([]))
    rows = _rows({"majority": [0.25] * 3, "tfidf-512": [0.6, 0.62, 0.61], "full-512": [0.5, 0.45, 0.55]})
    output.write_text(json.dumps({"setting": setting, "rows": rows}))
    benchmark.main(["--readme_table", "--output", str(output)])
    printed = capsys.readouterr().out
    assert f"| full-512 | 50.0<!-- source: {output}#comparison.rows.full-512.accuracy.mean*100 -->" in printed
    assert json.loads(output.read_text()) == {"setting": setting, "rows": rows}
