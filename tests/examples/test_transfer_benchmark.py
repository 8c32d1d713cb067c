"""benchmarks/transfer.py at a small setting: every row, the comparison, the
JSON (with the mean-pooling head, which the run records), and --resume
keeping a stopped run's finished rows."""

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_benchmark():
    spec = importlib.util.spec_from_file_location("transfer_benchmark",
                                                  ROOT / "benchmarks" / "transfer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SMALL = ["--train_sizes", "100", "--max_test", "50", "--epochs", "1", "--pooling", "mean"]


@pytest.mark.large
def test_small_run_then_resume_keeps_finished_rows_and_runs_the_rest(tmp_path, capsys):
    benchmark = load_benchmark()
    output = tmp_path / "transfer.json"
    benchmark.main(SMALL + ["--models", "tfidf", "pretrained", "--output", str(output)])
    first = json.loads(output.read_text())
    assert first["pooling"] == "mean"
    (size,) = first["sizes"]
    assert size["train_examples"] == 100 and size["test_examples"] == 50
    assert set(size["rows"]) == {"tfidf", "pretrained"} and size["comparison"] == {}

    benchmark.main(SMALL + ["--models", "tfidf", "pretrained", "scratch", "random_head",
                            "--resume", "--output", str(output)])
    second = json.loads(output.read_text())
    (size,) = second["sizes"]
    assert set(size["rows"]) == {"tfidf", "pretrained", "scratch", "random_head"}
    for row in size["rows"].values():
        assert 0 <= row["accuracy"] <= 1 and 0 <= row["macro_f1"] <= 1
    # The kept row is the earlier one, seconds and all: it did not run again.
    assert size["rows"]["pretrained"] == first["sizes"][0]["rows"]["pretrained"]
    tfidf, pretrained = size["rows"]["tfidf"], size["rows"]["pretrained"]
    assert size["comparison"]["pretrained_minus_tfidf_points"] == pytest.approx(
        100 * (pretrained["accuracy"] - tfidf["accuracy"]), abs=0.01)
    assert second["date"] == first["date"] and len(second["resumed"]) == 1
    assert not output.with_suffix(".partial").exists()
    printed = capsys.readouterr().out
    assert "kept from the earlier run" in printed and "pretrained - tfidf" in printed


def test_resume_refuses_a_file_made_with_other_settings(tmp_path):
    benchmark = load_benchmark()
    output = tmp_path / "transfer.json"
    args = benchmark.argparse.Namespace(
        preset="albert_tiny_en", sequence_length=32, pooling="cls", seed=0, max_test=50,
        argv=[])
    recipe = benchmark.ClassifierRecipe(epochs=1)
    earlier = benchmark.fresh_results(args, recipe)
    output.write_text(json.dumps(earlier))
    args.seed = 1
    with pytest.raises(SystemExit, match=r"seed=0.*seed=1"):
        benchmark.resumed_results(output, benchmark.fresh_results(args, recipe))
