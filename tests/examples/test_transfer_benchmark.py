"""benchmarks/transfer.py at a small setting: every row of the protocol on a
built task, the per-seed summary and margins, --resume keeping finished
rows, and the task loader's checks."""

import importlib.util
import json
import pathlib
import statistics
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_benchmark():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("transfer_benchmark",
                                                  ROOT / "benchmarks" / "transfer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_task(directory, name, count=120, seed=0):
    """A built task whose label is carried by one word of the text."""
    rng = np.random.default_rng(seed)
    words = {"river": "water", "engine": "machines", "melody": "music"}
    folder = directory / name
    folder.mkdir(parents=True)
    for split, size in (("train", count), ("test", count // 2)):
        with open(folder / f"{split}.jsonl", "w") as out:
            for _ in range(size):
                word = rng.choice(sorted(words))
                text = f"the {word} of {rng.choice(['a', 'the', 'one'])} day"
                out.write(json.dumps({"text": text, "label": words[word]}) + "\n")


# 60 texts: 54 fit after the tenth carved out, so a batch of 64 makes each
# epoch (and the probe's dropout pass) one step of one traced shape; 30 test
# texts, of which --max_test keeps 20.
SMALL = ["--tasks", "fortunes", "--seeds", "0", "1", "--max_test", "20", "--epochs", "1",
         "--batch_size", "64"]


@pytest.mark.large
def test_small_suite_then_resume_keeps_finished_rows(tmp_path, capsys):
    benchmark = load_benchmark()
    write_task(tmp_path, "fortunes", count=60)
    output = tmp_path / "transfer.json"
    common = SMALL + ["--tasks_dir", str(tmp_path), "--output", str(output)]
    benchmark.main(common + ["--models", "majority", "tfidf", "probe", "finetuned"])
    first = json.loads(output.read_text())
    entry = first["tasks"]["fortunes"]
    assert entry["train_examples"] == 60 and entry["test_examples"] == 20
    assert entry["classes"] == 3 and set(entry["runs"]) == {"0", "1"}
    for rows in entry["runs"].values():
        assert set(rows) == {"majority", "tfidf", "probe", "finetuned"}
        for row in rows.values():
            assert 0 <= row["accuracy"] <= 1 and 0 <= row["macro_f1"] <= 1
        # The word decides the label: TF-IDF finds it on any carve-out.
        assert rows["tfidf"]["accuracy"] == 1.0
    tfidf = [entry["runs"][s]["tfidf"]["accuracy"] for s in ("0", "1")]
    tuned = [entry["runs"][s]["finetuned"]["accuracy"] for s in ("0", "1")]
    assert entry["summary"]["finetuned"]["accuracy"]["mean"] == pytest.approx(
        statistics.fmean(tuned), abs=1e-4)
    assert entry["summary"]["finetuned"]["accuracy"]["sd"] == pytest.approx(
        statistics.stdev(tuned), abs=1e-4)
    margin = entry["margins"]["finetuned_minus_tfidf_points"]
    assert margin["mean"] == pytest.approx(
        statistics.fmean(100 * (a - b) for a, b in zip(tuned, tfidf)), abs=1e-2)
    assert margin["seeds"] == 2
    assert first["command"].startswith("python benchmarks/transfer.py --tasks fortunes")

    # (The scratch row runs the same recipe as random_head, on the model
    # test_scratch_is_the_presets_architecture_with_new_weights checks.)
    benchmark.main(common + ["--models", "majority", "finetuned", "random_head", "--resume"])
    second = json.loads(output.read_text())
    rows = second["tasks"]["fortunes"]["runs"]["0"]
    assert set(rows) == {"majority", "tfidf", "probe", "finetuned", "random_head"}
    # The same recipe without its warm start: the probe is never kept there.
    assert rows["random_head"]["kept_head_warm_start"] is False
    without = [second["tasks"]["fortunes"]["runs"][s]["random_head"]["accuracy"] for s in ("0", "1")]
    assert second["tasks"]["fortunes"]["margins"]["finetuned_minus_random_head_points"]["mean"] == (
        pytest.approx(statistics.fmean(100 * (a - b) for a, b in zip(tuned, without)), abs=1e-2))
    # The kept row is the earlier one, seconds and all: it did not run again.
    assert rows["finetuned"] == entry["runs"]["0"]["finetuned"]
    assert "kept from the earlier run" in capsys.readouterr().out


def test_resume_refuses_a_file_made_with_other_settings(tmp_path):
    benchmark = load_benchmark()
    output = tmp_path / "transfer.json"
    args = benchmark.argparse.Namespace(preset="albert_tiny_en", train_size=None, max_test=50,
                                        tasks_dir="runs/transfer_tasks")
    recipe = benchmark.ClassifierRecipe(epochs=1)
    output.write_text(json.dumps(benchmark.fresh_results(args, recipe)))
    args.max_test = 60
    with pytest.raises(SystemExit, match=r"max_test=50.*max_test=60"):
        benchmark.resumed_results(output, benchmark.fresh_results(args, recipe))


def test_tasks_load_with_the_seed_and_refuse_what_is_missing(tmp_path):
    load_benchmark()
    import transfer_tasks

    write_task(tmp_path, "debian_sections")
    first = transfer_tasks.load_task("debian_sections", 50, seed=0, directory=tmp_path)
    other = transfer_tasks.load_task("debian_sections", 50, seed=1, directory=tmp_path)
    assert len(first.train_texts) == 50 and len(first.test_texts) == 60
    assert first.label_names == ["machines", "music", "water"]
    assert first.train_texts != other.train_texts
    assert first.test_texts == other.test_texts
    with pytest.raises(SystemExit, match="build_transfer_tasks.py"):
        transfer_tasks.load_task("fortunes", directory=tmp_path)
    with pytest.raises(SystemExit, match="unknown task 'imdb'"):
        transfer_tasks.load_task("imdb", directory=tmp_path)
    supersense = transfer_tasks.load_task("supersense", 100, seed=0)
    # The test split (crc buckets 90-99), never the validation split.
    from keras_albert import datasets

    assert supersense.test_texts == datasets.load_supersense("test", pos="n")[0]


def test_scratch_is_the_presets_architecture_with_new_weights(tmp_path):
    benchmark = load_benchmark()
    import transfer_tasks

    write_task(tmp_path, "fortunes")
    task = transfer_tasks.load_task("fortunes", 20, seed=0, directory=tmp_path)
    pretrained = benchmark.albert_classifier("albert_tiny_en", task)
    scratch = benchmark.albert_classifier("albert_tiny_en", task, from_scratch=True)
    assert scratch.backbone.get_config() == pretrained.backbone.get_config()
    assert scratch.num_classes == pretrained.num_classes == 3
    for new, kept in zip(scratch.backbone.weights, pretrained.backbone.weights):
        # Fresh weights everywhere but the layer norms' ones and zeros.
        if not np.all(np.isin(kept.numpy(), (0.0, 1.0))):
            assert not np.allclose(new.numpy(), kept.numpy()), new.path


def test_the_printed_table_keeps_its_columns_for_long_model_names(capsys):
    benchmark = load_benchmark()
    stat = {"mean": 0.5, "sd": 0.01, "seeds": 3}
    results = {"tasks": {"supersense": {"summary": {
        name: {"accuracy": stat, "macro_f1": stat} for name in ("tfidf", "random_head")}}}}
    benchmark.print_table(results)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("supersense")]
    # The accuracy column ends at the same place on every row.
    assert len({line.index("50.0 +- 1.0") for line in lines}) == 1, lines
