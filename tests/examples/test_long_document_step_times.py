"""benchmarks/long_document_step_times.py: every row's steps timed in one
process, the rows in turn, and full attention's median over each LSH row's."""

import importlib.util
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "long_document_step_times.py"


@pytest.fixture(scope="module")
def step_times():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("long_document_step_times", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("flags, message", [
    (["--rows", "tfidf-2048"], "only full and lshN rows train steps"),
    (["--rows", "full-4096"], "row full-4096: the length must be in [8, --document_length 2048]"),
    (["--rows", "full-512", "full-512"], "--rows must not repeat a row"),
    (["--steps", "0"], "--steps must be >= 1 (received 0)"),
    (["--lsh_chunks_after", "-1"], "--lsh_chunks_after must be >= 0 (received -1)"),
])
def test_bad_flags_are_refused_naming_the_flag_and_value(flags, message, step_times, capsys):
    with pytest.raises(SystemExit) as stopped:
        step_times.parse_args(flags)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_each_row_is_the_median_of_all_its_rounds_and_full_is_divided_by_each_lsh_row(step_times):
    summary = step_times.summarize({
        "full-64": [[1.0, 3.0], [2.0, 4.0]],
        "lsh1-64": [[0.5, 0.5], [1.5, 0.5]],
        "lsh4-32": [[0.1]],
    })
    assert summary["rows"]["full-64"] == {"median": 2.5, "min": 1.0, "max": 4.0, "steps": 4,
                                          "round_medians": [2.0, 3.0]}
    assert summary["rows"]["lsh1-64"]["median"] == 0.5
    # An LSH row with no full row at its length has no ratio.
    assert summary["full_over"] == {"lsh1-64": 5.0}


@pytest.mark.large
def test_a_smoke_run_times_every_row_in_turn_and_records_it(tmp_path, step_times, capsys):
    # main() in this process: the rows share the process either way.
    output = tmp_path / "steps.json"
    step_times.main(["--document_length", "64", "--rows", "full-64", "lsh1-64", "--lsh_chunk_length", "16",
                     "--steps", "1", "--rounds", "2", "--batch_size", "2", "--output", str(output)])
    stdout = capsys.readouterr().out
    order = [line.split(":")[0] for line in stdout.splitlines() if line.startswith("round ")]
    assert order == ["round 1/2, full-64", "round 1/2, lsh1-64", "round 2/2, full-64", "round 2/2, lsh1-64"]
    recorded = json.loads(output.read_text())
    rows = recorded["rows"]
    assert set(rows) == {"full-64", "lsh1-64"}
    assert all(row["steps"] == 2 and len(row["round_medians"]) == 2 and row["median"] > 0
               for row in rows.values())
    assert recorded["full_over"]["lsh1-64"] == pytest.approx(rows["full-64"]["median"] / rows["lsh1-64"]["median"],
                                                             abs=1e-3)
    assert recorded["command"].startswith("python benchmarks/long_document_step_times.py --document_length 64")
    assert recorded["machine"]["cpu_cores"] >= 1 and "keras" in recorded["versions"]
