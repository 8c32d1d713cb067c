"""benchmarks/transfer.py --resume: a stopped run keeps its finished rows."""

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


SMALL = ["--train_sizes", "100", "--max_test", "50", "--epochs", "1"]


@pytest.mark.large
def test_resume_keeps_finished_rows_and_runs_the_rest(tmp_path):
    benchmark = load_benchmark()
    output = tmp_path / "transfer.json"
    benchmark.main(SMALL + ["--models", "tfidf", "pretrained", "--output", str(output)])
    first = json.loads(output.read_text())
    (size,) = first["sizes"]
    assert set(size["rows"]) == {"tfidf", "pretrained"} and size["comparison"] == {}

    benchmark.main(SMALL + ["--models", "tfidf", "pretrained", "scratch", "random_head",
                            "--resume", "--output", str(output)])
    second = json.loads(output.read_text())
    (size,) = second["sizes"]
    assert set(size["rows"]) == {"tfidf", "pretrained", "scratch", "random_head"}
    # The kept row is the earlier one, seconds and all: it did not run again.
    assert size["rows"]["pretrained"] == first["sizes"][0]["rows"]["pretrained"]
    assert size["comparison"]["pretrained_over_scratch_accuracy"] > 0
    assert second["date"] == first["date"] and len(second["resumed"]) == 1
    assert not output.with_suffix(".partial").exists()


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
