"""tools/compare_test_runs.py: counts and differing verdicts of two runs."""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import compare_test_runs  # noqa: E402

HERE = """\
PASSED tests/layers/test_a.py::test_one
PASSED tests/layers/test_a.py::test_two
FAILED tests/models/test_b.py::test_three - AssertionError
SKIPPED [1] tests/c.py:3: no data
ERROR tests/export/test_d.py - ImportError while importing
"""
THERE = """\
[gw0] [ 50%] PASSED tests/layers/test_a.py::test_one
PASSED tests/layers/test_a.py::test_one
FAILED tests/layers/test_a.py::test_two - ValueError: cuDNN
FAILED tests/models/test_b.py::test_three - AssertionError
"""


def test_counts_and_differences(tmp_path, capsys):
    (tmp_path / "here.log").write_text(HERE)
    (tmp_path / "there.log").write_text(THERE)
    compare_test_runs.main(["--reference", str(tmp_path / "here.log"), "--run", str(tmp_path / "there.log"),
                            "--only", "tests/layers", "tests/models", "--names", "cpu", "gpu"])
    out = capsys.readouterr().out
    assert "| PASSED | 2 | 1 |" in out and "| FAILED | 1 | 2 |" in out
    assert "1 tests differ:" in out
    assert "| `tests/layers/test_a.py::test_two` | PASSED | FAILED |" in out
    assert "test_d" not in out  # outside --only


def test_a_log_without_summary_lines_is_refused(tmp_path):
    (tmp_path / "empty.log").write_text("collected 3 items\n")
    (tmp_path / "here.log").write_text(HERE)
    with pytest.raises(SystemExit) as exit_info:
        compare_test_runs.main(["--reference", str(tmp_path / "here.log"), "--run", str(tmp_path / "empty.log")])
    assert exit_info.value.code == 2
