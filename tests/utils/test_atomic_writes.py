"""Atomic directories and files: never destroy what they did not write, never
leave the path empty, follow the umask, clean up after crashed writers."""

import json
import os
import stat
import subprocess
import sys

import pytest

from keras_albert.utils import atomic_directory as atomic
from keras_albert.utils.atomic_directory import atomic_directory
from keras_albert.utils.atomic_directory import atomic_directory_update
from keras_albert.utils.atomic_file import check_writable_directory
from keras_albert.utils.atomic_file import write_file_atomically


def _write(directory, name, text):
    path = os.path.join(directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def _save(dst, text="new", kind="preset", **kwargs):
    with atomic_directory(dst, kind, **kwargs) as staging:
        _write(staging, "config.json", text)
        _write(staging, "metadata.json", "{}")


def _unrelated(tmp_path):
    user = tmp_path / "user"
    (user / "sub").mkdir(parents=True)
    (user / "keep_me.txt").write_text("mine")
    (user / "sub" / "data.bin").write_bytes(b"\x01")
    return user


@pytest.mark.parametrize("kind", ["preset", "saved_model", "huggingface", "tfhub_modules"])
def test_unrelated_directory_is_refused_and_kept(tmp_path, kind):
    user = _unrelated(tmp_path)
    with pytest.raises(ValueError) as error:
        _save(user, kind=kind)
    message = str(error.value)
    for needle in ("`dst`", str(user), "keep_me.txt", "overwrite=True", "--overwrite"):
        assert needle in message
    assert (user / "keep_me.txt").read_text() == "mine"
    assert (user / "sub" / "data.bin").read_bytes() == b"\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["user"]


def test_overwrite_replaces_an_unrelated_directory(tmp_path):
    user = _unrelated(tmp_path)
    _save(user, overwrite=True)
    assert sorted(os.listdir(user)) == [atomic.MARKER_FILE, "config.json", "metadata.json"]


def test_file_destination_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="existing file"):
        _save(tmp_path / "f", overwrite=True)


def test_previous_artifact_is_replaced_and_marked(tmp_path):
    dst = tmp_path / "preset"
    _save(dst, "old")
    marker = json.loads((dst / atomic.MARKER_FILE).read_text())
    assert marker["kind"] == "preset"
    _save(dst, "new")
    assert (dst / "config.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preset"]


def test_artifact_of_another_kind_is_refused(tmp_path):
    dst = tmp_path / "out"
    _save(dst, kind="saved_model")
    with pytest.raises(ValueError, match="does not hold a preset"):
        _save(dst, kind="preset")


@pytest.mark.parametrize("names", [["config.json", "metadata.json"], ["saved_model.pb"]])
def test_file_names_never_make_a_directory_ours(tmp_path, names):
    """A folder with a config.json is anyone's project: only the marker counts."""
    dst = tmp_path / "project"
    (dst / "src").mkdir(parents=True)
    for name in names + ["src/main.py"]:
        (dst / name).write_text("mine")
    for kind in ("preset", "huggingface", "saved_model", "published_model"):
        with pytest.raises(ValueError, match="does not hold"):
            _save(dst, kind=kind)
    assert sorted(_tree(dst)) == sorted(names + ["src/main.py"])


def _tree(directory):
    return [str(p.relative_to(directory)) for p in directory.rglob("*") if not p.is_dir()]


def test_rewrite_keeps_what_the_owner_added(tmp_path):
    dst = tmp_path / "preset"
    with atomic_directory(dst) as staging:
        _write(staging, "config.json", "old")
        _write(staging, "variables/a.data", "old")
    _write(dst, "NOTES.md", "mine")
    _write(dst, ".git/HEAD", "ref")
    _write(dst, "variables/extra.txt", "mine too")
    os.symlink("NOTES.md", dst / "link")
    with atomic_directory(dst) as staging:
        _write(staging, "config.json", "new")
        _write(staging, "weights.h5", "new")
    assert sorted(_tree(dst)) == sorted([
        atomic.MARKER_FILE, ".git/HEAD", "NOTES.md", "config.json", "link",
        "variables/extra.txt", "weights.h5",
    ])
    assert (dst / "config.json").read_text() == "new"
    assert (dst / ".git" / "HEAD").read_text() == "ref"
    assert os.readlink(dst / "link") == "NOTES.md"
    # What the tool wrote is listed; the owner's files never are.
    assert atomic.written_files(dst) == {"config.json", "weights.h5"}
    assert atomic.foreign_entries(dst) == [".git", "NOTES.md", "link", "variables"]


def test_rewrite_refuses_to_replace_an_owners_file(tmp_path):
    dst = tmp_path / "out"
    _save(dst, "old")
    _write(dst, "labels.txt", "mine")
    with pytest.raises(ValueError) as error:
        with atomic_directory(dst) as staging:
            _write(staging, "labels.txt", "tool")
    assert "labels.txt" in str(error.value) and "--overwrite" in str(error.value)
    assert (dst / "labels.txt").read_text() == "mine"
    assert (dst / "config.json").read_text() == "old"
    with atomic_directory(dst, overwrite=True) as staging:
        _write(staging, "labels.txt", "tool")
    assert (dst / "labels.txt").read_text() == "tool"


def test_marker_without_manifest_keeps_names_the_write_does_not_make(tmp_path):
    dst = tmp_path / "preset"
    _save(dst, "old")
    (dst / atomic.MARKER_FILE).write_text(json.dumps({"kind": "preset", "writer": "keras_albert"}))
    _write(dst, "NOTES.md", "mine")
    _save(dst, "new")
    assert (dst / "NOTES.md").read_text() == "mine"
    assert (dst / "config.json").read_text() == "new"


def test_empty_directory_is_filled(tmp_path):
    (tmp_path / "empty").mkdir()
    _save(tmp_path / "empty")
    assert (tmp_path / "empty" / "config.json").read_text() == "new"


def test_failed_block_keeps_the_previous_artifact_and_leaves_no_sibling(tmp_path):
    dst = tmp_path / "preset"
    _save(dst, "old")
    with pytest.raises(RuntimeError):
        with atomic_directory(dst) as staging:
            _write(staging, "config.json", "half")
            raise RuntimeError("check failed")
    assert (dst / "config.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preset"]


def test_modes_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        _save(tmp_path / "preset")
        write_file_atomically(tmp_path / "model.tflite", b"data")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "preset").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "preset" / "config.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "model.tflite").stat().st_mode) == 0o644


def test_swap_without_renameat2_keeps_working(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    dst = tmp_path / "preset"
    _save(dst, "old")
    _save(dst, "new")
    assert (dst / "config.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preset"]


def test_renameat2_exchanges_two_directories(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    exchanged = atomic._exchange(tmp_path / "a", tmp_path / "b")
    if not sys.platform.startswith("linux"):
        # Elsewhere the exchange reports False and the two-rename fallback
        # (test_swap_without_renameat2_keeps_working) does the swap.
        assert exchanged is False and (tmp_path / "a" / "x").exists()
        return
    assert exchanged is True
    assert (tmp_path / "b" / "x").read_text() == "a"
    assert not (tmp_path / "a" / "x").exists()


def _crashed_sibling(tmp_path, role, dst_name="preset"):
    """A sibling as a killed writer (a dead process) leaves it."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    path = tmp_path / f".{dst_name}.{role}.{dead.stdout.strip()}.abcd1234"
    path.mkdir()
    return path


def test_next_save_cleans_siblings_of_crashed_saves(tmp_path):
    dst = tmp_path / "preset"
    _save(dst, "old")
    partial = _crashed_sibling(tmp_path, "partial")
    _write(partial, "big.bin", "x" * 1000)
    old = _crashed_sibling(tmp_path, "old")
    (old / "preset").mkdir()
    legacy = tmp_path / ".preset.partial.k2j4h5g6"  # mkdtemp name, older versions
    legacy.mkdir()
    other = tmp_path / ".other.partial.1.x"  # another destination's: not ours
    other.mkdir()
    _save(dst, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.partial.1.x", "preset"]


def test_sibling_of_a_live_writer_is_kept(tmp_path):
    live = tmp_path / f".preset.partial.{os.getppid()}.abcd1234"
    live.mkdir()
    _save(tmp_path / "preset")
    assert live.exists()


def test_kill_between_renames_is_recovered_by_loading(tmp_path):
    """The fallback swap's window: `dst` moved aside, the new one not in."""
    dst = tmp_path / "preset"
    _save(dst, "old")
    old = _crashed_sibling(tmp_path, "old")
    os.rename(dst, old / "preset")
    _crashed_sibling(tmp_path, "partial")
    assert atomic.recover_interrupted(dst)
    assert (dst / "config.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir())[-1] == "preset"


def test_preset_loading_recovers_a_preset_left_aside(tmp_path):
    import keras_albert

    dst = tmp_path / "backbone_preset"
    backbone = keras_albert.AlbertBackbone(
        vocabulary_size=50, num_layers=1, num_heads=2, embedding_dim=8,
        hidden_dim=16, intermediate_dim=32, max_sequence_length=16,
    )
    backbone.save_to_preset(str(dst))
    old = _crashed_sibling(tmp_path, "old", "backbone_preset")
    os.rename(dst, old / "backbone_preset")
    loaded = keras_albert.AlbertBackbone.from_preset(str(dst))
    assert loaded.count_params() == backbone.count_params()
    assert dst.is_dir() and not old.exists()


def test_update_adds_files_without_marking_unrelated_directories(tmp_path):
    user = _unrelated(tmp_path)
    with atomic_directory_update(user) as staging:
        _write(staging, "tokenizer.json", "{}")
    assert (user / "keep_me.txt").read_text() == "mine"
    assert (user / "tokenizer.json").exists()
    assert not (user / atomic.MARKER_FILE).exists()


def test_update_lists_what_it_wrote_not_what_it_kept(tmp_path):
    dst = tmp_path / "preset"
    _save(dst)
    _write(dst, "NOTES.md", "mine")
    with atomic_directory_update(dst) as staging:
        _write(staging, "tokenizer.json", "{}")
    assert atomic.written_files(dst) == {"config.json", "metadata.json", "tokenizer.json"}
    assert (dst / "NOTES.md").read_text() == "mine"


def test_update_never_opens_a_fifo(tmp_path):
    dst = tmp_path / "preset"
    _save(dst)
    os.mkfifo(dst / "pipe")
    with pytest.raises(ValueError, match="not a regular file"):
        with atomic_directory_update(dst) as staging:
            _write(staging, "tokenizer.json", "{}")
    assert not (dst / "tokenizer.json").exists()


def test_atomic_file_refuses_a_directory(tmp_path):
    with pytest.raises(ValueError, match="`path` must be a file path"):
        write_file_atomically(tmp_path, b"x")


def test_unwritable_directory_is_named(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    # Root ignores permission bits; an immutable directory stops it too.
    immutable = os.geteuid() == 0 and subprocess.run(["chattr", "+i", str(locked)]).returncode == 0
    try:
        with pytest.raises(ValueError, match="not writable"):
            check_writable_directory(locked / "out", name="--output")
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(locked)], check=True)


def test_directory_under_a_file_is_named(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        check_writable_directory(tmp_path / "file" / "out", name="--output")


def test_atomic_file_removes_what_a_killed_writer_left(tmp_path):
    dead = _crashed_sibling(tmp_path, "partial", "metrics.json")
    dead.rmdir()
    dead.write_bytes(b"half")
    live = tmp_path / f".metrics.json.partial.{os.getppid()}.abcd1234"
    live.write_bytes(b"someone else's")
    write_file_atomically(tmp_path / "metrics.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "metrics.json"]
