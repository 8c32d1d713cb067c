"""The slow-files-first order of tests/schedule.py reaches xdist."""

import pathlib
import re
from types import SimpleNamespace

from tests.schedule import SLOW_FILES_FIRST
from tests.schedule import slow_files_first

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_named_file_exists_once():
    missing = [name for name in SLOW_FILES_FIRST if not (ROOT / name).is_file()]
    assert not missing, f"tests/schedule.py names files that are gone: {missing}"
    assert len(set(SLOW_FILES_FIRST)) == len(SLOW_FILES_FIRST)


def test_named_files_go_first_and_each_files_tests_keep_their_order():
    first, second = SLOW_FILES_FIRST[:2]
    items = [SimpleNamespace(nodeid=n) for n in (
        "tests/a.py::x", f"{second}::one", "tests/b.py::y", f"{first}::one",
        f"{second}::two", "tests/a.py::z", f"{first}::two",
    )]
    slow_files_first(items)
    assert [item.nodeid for item in items] == [
        f"{first}::one", f"{first}::two", f"{second}::one", f"{second}::two",
        "tests/a.py::x", "tests/b.py::y", "tests/a.py::z",
    ]


def test_make_test_keeps_the_collected_order():
    # xdist's default reorders files by how many tests they hold.
    recipe = re.search(r"^test:.*\n\t(.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    assert "--dist loadfile" in recipe and "--no-loadscope-reorder" in recipe
