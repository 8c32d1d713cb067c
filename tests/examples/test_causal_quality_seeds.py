"""benchmarks/causal_quality_seeds.py: mean and spread over seeds of
causal_quality.py records, refusing runs that scored other things."""

import copy
import json
import pathlib
import re
import statistics
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import causal_quality_seeds  # noqa: E402


def record(seed, albert, gpt2, albert_cloze, gpt2_cloze):
    """A causal_quality.py record's shape, with the figures given."""
    def neural(perplexity, correct, **extra):
        return {"perplexity": perplexity, "cloze": {"n": 10, "correct": correct, "accuracy": correct / 10}, **extra}

    return {
        "settings": {"preset": f"runs/p{seed}", "seed": seed, "gpt2_output": f"runs/g{seed}",
                     "gpt2_preset": None, "window_length": 128, "learning_rate": 5e-4},
        "perplexity_eval": {"windows_sha256_16": "aaaa", "windows": 9},
        "cloze": {"passages_sha256_16": "bbbb", "passages": 10},
        "models": {"albert": neural(albert, albert_cloze, preset=f"runs/p{seed}"),
                   "gpt2": neural(gpt2, gpt2_cloze, training={"preset": f"runs/g{seed}"}),
                   "kneser_ney": neural(161.1, 3)},
    }


def write(tmp_path, records):
    paths = []
    for index, data in enumerate(records):
        path = tmp_path / f"run{index}.json"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    return paths


def test_mean_and_sd_per_model_over_the_seeds(tmp_path, capsys):
    paths = write(tmp_path, [record(0, 167.5, 170.2, 1, 2), record(1, 165.0, 171.0, 2, 2),
                             record(2, 169.0, 168.0, 3, 1)])
    output = tmp_path / "seeds.json"
    assert causal_quality_seeds.main([*paths, "--output", str(output)]) == 0
    written = json.loads(output.read_text())
    assert written["seeds"] == [0, 1, 2]
    albert = written["models"]["albert"]
    assert albert["perplexity"]["mean"] == pytest.approx(statistics.fmean([167.5, 165.0, 169.0]), abs=1e-4)
    assert albert["perplexity"]["sd"] == pytest.approx(statistics.stdev([167.5, 165.0, 169.0]), abs=1e-4)
    assert albert["cloze_accuracy"] == {"mean": 0.2, "sd": 0.1, "n": 3}
    assert [run["preset"] for run in albert["runs"]] == ["runs/p0", "runs/p1", "runs/p2"]
    assert [run["preset"] for run in written["models"]["gpt2"]["runs"]] == ["runs/g0", "runs/g1", "runs/g2"]
    assert written["models"]["kneser_ney"]["perplexity"] == {"mean": 161.1, "sd": 0.0, "n": 3}
    assert {"date", "machine", "versions", "command"} <= written.keys()
    assert "albert: perplexity 167.17 +- 2.02" in capsys.readouterr().out
    # Paired by seed: 167.5-170.2, 165.0-171.0, 169.0-168.0.
    versus_gpt2 = written["paired_differences"]["albert_minus_gpt2"]
    assert versus_gpt2["perplexity"]["mean"] == pytest.approx(statistics.fmean([-2.7, -6.0, 1.0]), abs=1e-4)
    assert versus_gpt2["perplexity"]["sd"] == pytest.approx(statistics.stdev([-2.7, -6.0, 1.0]), abs=1e-4)
    # Cloze: 1-2, 2-2, 3-1 right of 10 passages.
    assert versus_gpt2["cloze_points"]["mean"] == pytest.approx(statistics.fmean([-10, 0, 20]), abs=1e-4)
    assert versus_gpt2["cloze_points"]["sd"] == pytest.approx(statistics.stdev([-10, 0, 20]), abs=1e-4)
    assert written["paired_differences"]["albert_minus_kneser_ney"]["cloze_points"]["mean"] == pytest.approx(-10.0, abs=1e-4)


def other_windows(data):
    data["perplexity_eval"]["windows_sha256_16"] = "cccc"


def other_rate(data):
    data["settings"]["learning_rate"] = 1e-3


def without_gpt2(data):
    del data["models"]["gpt2"]


@pytest.mark.parametrize("change, message", [
    (other_windows, "scored other perplexity_eval"),
    (other_rate, r"settings \['learning_rate'\]"),
    (without_gpt2, "only some runs scored gpt2"),
    (lambda data: data["settings"].update(seed=0), "different seeds"),
])
def test_runs_that_are_not_seeds_of_one_setting_are_refused(tmp_path, capsys, change, message):
    second = copy.deepcopy(record(1, 165.0, 171.0, 2, 2))
    change(second)
    paths = write(tmp_path, [record(0, 167.5, 170.2, 1, 2), second])
    with pytest.raises(SystemExit) as stopped:
        causal_quality_seeds.main([*paths, "--output", str(tmp_path / "x.json")])
    assert stopped.value.code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "x.json").exists()


def test_one_run_or_a_foreign_file_is_refused(tmp_path, capsys):
    [path] = write(tmp_path, [record(0, 167.5, 170.2, 1, 2)])
    with pytest.raises(SystemExit) as stopped:
        causal_quality_seeds.main([path])
    assert stopped.value.code == 2 and "two or more runs" in capsys.readouterr().err
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"rows": []}))
    with pytest.raises(SystemExit):
        causal_quality_seeds.main([path, str(foreign)])
    assert "not a causal_quality.py record" in capsys.readouterr().err
