"""Every recorded result says where, when, how and with what it was made,
and names no directory of the machine it ran on.

A live check over benchmarks/results/ (and the records bundled presets ship
with, for paths), plus `benchmarks/recording.py` on a scratch file.
"""

import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
FIELDS = ("command", "date", "machine", "threads", "versions")
# Files written before benchmarks/recording.py recorded every field, each
# with the fields it lacks; a rerun records them all (then drop its entry).
RECORDED_BEFORE_THE_FIELDS = {
    # benchmarks/transfer.py's records (issue 36 item 1 rewrites them).
    "transfer_albert_tiny_en_12k.json": {"date", "threads", "versions"},
    "transfer_albert_tiny_en_12k_recipe.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v2_step1250_12k.json": {"date", "threads", "versions"},
    "transfer_albert_tiny_en_v4_12k.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v5_12k.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v6_12k.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v6_12k_lpft.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v6_12k_mean_pooling.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v6_12k_recipe.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v8.json": {"threads", "versions"},
    "transfer_albert_tiny_en_v8_12k.json": {"threads", "versions"},
    "transfer_head_warm_start_small.json": {"threads", "versions"},
    "transfer_teacher_frozen.json": {"threads", "versions"},
    "transfer_tfidf.json": {"date", "threads", "versions"},
    "transfer_word_distill_v7_12k.json": {"threads", "versions"},
}
# A path from the file system's root (/home/..., /tmp/x/...) or a drive.
ABSOLUTE_PATH = re.compile(r"(?:^|[\s='\"(,:])(?:/[\w.+-]+){2,}|\b[A-Za-z]:\\")


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def records():
    return sorted(RESULTS.glob("*.json"))


@pytest.mark.parametrize("path", records(), ids=lambda path: path.name)
def test_result_records_date_machine_threads_versions_and_command(path):
    record = json.loads(path.read_text(encoding="utf-8"))
    missing = {field for field in FIELDS if field not in record}
    # A rerun records every field (then its entry can go); nothing else may lack one.
    assert missing <= RECORDED_BEFORE_THE_FIELDS.get(path.name, set()), (
        f"{path.name} lacks {sorted(missing)}: write it with benchmarks/recording.py's write_result")


def test_every_listed_old_record_exists():
    names = {path.name for path in records()}
    assert set(RECORDED_BEFORE_THE_FIELDS) <= names, set(RECORDED_BEFORE_THE_FIELDS) - names


@pytest.mark.parametrize(
    "path",
    records() + sorted((ROOT / "keras_albert" / "presets").glob("*/*.json")),
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_no_record_names_an_absolute_path(path):
    for text in strings_in(json.loads(path.read_text(encoding="utf-8"))):
        assert not ABSOLUTE_PATH.search(text), f"{path.relative_to(ROOT)}: {text[:200]!r}"


def test_the_path_pattern():
    for text in ("/tmp/run/preset", "--source /home/me/keras-hub --x", "C:\\runs", "path=/work/main/x"):
        assert ABSOLUTE_PATH.search(text), text
    for text in ("GFLOP/s", "texts/s", "lsh-1/hf-lsh-1", "benchmarks/results/x.json", "8192/lsh-1",
                 "<elsewhere>/plain/preset", "max |ours - keras-hub|"):
        assert not ABSOLUTE_PATH.search(text), text


def test_write_result_records_every_field_and_no_repository_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    sys.modules.pop("recording", None)
    import recording

    output = recording.write_result(
        tmp_path / "run.json",
        {"preset": str(ROOT / "runs" / "quickstart" / "preset"), "rows": [str(ROOT), f"{ROOT}2/x"]},
        argv=[str(ROOT / "benchmarks" / "suite.py"), "--quick"],
        threads={"tensorflow_intra_op": 1},
    )
    record = json.loads(output.read_text())
    assert set(FIELDS) <= set(record)
    assert record["command"] == "python benchmarks/suite.py --quick"
    assert record["threads"] == {"tensorflow_intra_op": 1}
    assert record["versions"]["keras"] and record["versions"]["numpy"]
    assert record["machine"]["cores_available"] >= 1
    assert record["preset"] == "runs/quickstart/preset" and record["rows"] == [".", f"{ROOT}2/x"]
    # Without a given count: this process's (TensorFlow's when it is imported).
    assert recording.threads_in_process()


def test_a_busy_machine_is_named_when_the_result_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    sys.modules.pop("recording", None)
    import recording

    cores = recording.machine()["cores_available"]
    monkeypatch.setattr(recording.os, "getloadavg", lambda: (cores + 1.5, 1.0, 1.0))
    recording.write_result(tmp_path / "busy.json", {"rows": {}}, argv=["benchmarks/x.py"])
    assert f"1-minute load average was {cores + 1.5} on {cores} cores" in capsys.readouterr().out
    monkeypatch.setattr(recording.os, "getloadavg", lambda: (float(cores), 1.0, 1.0))
    recording.write_result(tmp_path / "quiet.json", {"rows": {}}, argv=["benchmarks/x.py"])
    assert "load average" not in capsys.readouterr().out
