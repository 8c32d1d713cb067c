"""The tracked tree stays small enough to travel to a GPU run (64 MiB with
its corpus): under 40 MB, at most one progress preset, no file over 8 MB."""

import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tracked():
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode().split("\0")
    return [ROOT / name for name in listed if name and (ROOT / name).is_file()]


def test_tree_is_under_40_mb_and_no_file_over_8_mb():
    files = _tracked()
    sizes = {path: path.stat().st_size for path in files}
    assert sum(sizes.values()) < 40_000_000, sum(sizes.values())
    large = sorted(str(p.relative_to(ROOT)) for p, size in sizes.items() if size > 8_000_000)
    assert not large, large


def test_at_most_one_progress_preset():
    presets = {
        path.relative_to(ROOT).parts[2]
        for path in _tracked()
        if path.relative_to(ROOT).parts[:2] == ("tools", "progress")
        and len(path.relative_to(ROOT).parts) > 3
        and path.relative_to(ROOT).parts[3] == "preset"
    }
    assert len(presets) <= 1, sorted(presets)
