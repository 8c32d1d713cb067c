"""Directories that appear whole or not at all, and never replace what we did
not write.

A directory is staged next to its destination as `.NAME.partial.PID.X` and
swapped in when complete. An existing destination is replaced only when it
holds an artifact of the same kind: one this module wrote (it leaves a
marker file) or, for artifacts written before the marker existed, one that
has the artifact's own files (a keras-hub preset's config.json and
metadata.json, a SavedModel's saved_model.pb). Anything else is refused
unless the caller passes `overwrite=True`.

On Linux the swap is one `renameat2(RENAME_EXCHANGE)`, so the path never
holds nothing; elsewhere the old directory is first moved to
`.NAME.old.PID.X/NAME`, and `recover_interrupted` (called by the next save
and by preset loading) moves it back if a kill fell between the two renames.
The next save also removes the `.partial`/`.old` siblings that dead
processes left behind.
"""

import contextlib
import ctypes
import errno
import json
import os
import pathlib
import secrets
import shutil

# Left in every directory this module writes: {"kind": ..., "writer": ...}.
MARKER_FILE = ".keras_albert_artifact.json"
# The files that identify an artifact written before the marker existed.
KNOWN_FILES = {
    "preset": ("config.json", "metadata.json"),
    "saved_model": ("saved_model.pb",),
    "huggingface": ("config.json",),
    "tfhub_modules": ("encoder/saved_model.pb", "preprocessor/saved_model.pb"),
    # Checked after "preset": without its marker, a published model (a
    # preset with a model card) is taken for the preset it holds.
    "published_model": ("README.md", "config.json", "metadata.json"),
}
_DESCRIPTIONS = {
    "preset": "preset (config.json and metadata.json)",
    "saved_model": "SavedModel (saved_model.pb)",
    "huggingface": "Hugging Face model directory (config.json)",
    "tfhub_modules": "TF-Hub export (encoder/ and preprocessor/)",
    "published_model": "published model (README.md model card and a preset)",
}
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100

# Staging directories of the `atomic_directory` blocks now open. A writer
# asked to write inside one (keras-hub's task saver calls the backbone's and
# the preprocessor's `save_to_preset` on the same directory) writes in place:
# the outer block already makes the whole directory atomic.
_OPEN_STAGING_DIRECTORIES = set()


def _inside_open_staging(path):
    real = os.path.realpath(path)
    return any(
        real == staging or real.startswith(staging + os.sep)
        for staging in _OPEN_STAGING_DIRECTORIES
    )


def _check_kind(kind):
    if kind not in KNOWN_FILES:
        raise ValueError(
            f"`kind` must be one of {tuple(KNOWN_FILES)}. Received: kind={kind!r}"
        )


def artifact_kind(path):
    """The kind of artifact directory `path` holds, or None.

    Example:
    >>> import tempfile
    >>> artifact_kind(tempfile.mkdtemp()) is None
    True
    """
    path = pathlib.Path(path)
    try:
        marker = json.loads((path / MARKER_FILE).read_text(encoding="utf-8"))
        if isinstance(marker, dict) and marker.get("kind") in KNOWN_FILES:
            return marker["kind"]
    except (OSError, ValueError):
        pass
    for kind, names in KNOWN_FILES.items():
        if all((path / name).is_file() for name in names):
            return kind
    return None


def check_replaceable(dst, kind, overwrite=False, name="dst"):
    """Refuses, before any work, a `dst` that writing there would destroy.

    `dst` may be missing, an empty directory, or a directory holding an
    artifact of `kind`; with `overwrite=True` any directory. Never a file.
    """
    _check_kind(kind)
    dst = pathlib.Path(dst)
    if not os.path.lexists(dst):
        return dst
    if not dst.is_dir() or dst.is_symlink():
        raise ValueError(
            f"`{name}` must be a directory path, but {str(dst)!r} is a file: "
            "an existing file (or link) is never replaced. Pass a new "
            "directory path."
        )
    if overwrite:
        return dst
    try:
        entries = sorted(os.listdir(dst))
    except OSError as error:
        raise ValueError(f"`{name}` {str(dst)!r} cannot be read: {error}") from None
    if entries and artifact_kind(dst) != kind:
        shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
        raise ValueError(
            f"`{name}` {str(dst)!r} is an existing directory that does not "
            f"hold a {_DESCRIPTIONS[kind]} written before (it holds: "
            f"{shown}); replacing it would delete those files. Pass a new "
            "or empty directory, or overwrite=True (CLI: --overwrite) to "
            "replace it anyway."
        )
    return dst


def _sibling(dst, role):
    return dst.parent / f".{dst.name}.{role}.{os.getpid()}.{secrets.token_hex(4)}"


def _siblings(dst, role):
    prefix = f".{dst.name}.{role}."
    try:
        names = os.listdir(dst.parent)
    except OSError:
        return []
    return [dst.parent / n for n in names if n.startswith(prefix)]


def _writer_alive(path, role, dst):
    """Whether the process that made sibling `path` may still be using it."""
    pid = path.name[len(f".{dst.name}.{role}."):].split(".")[0]
    if not pid.isdigit():
        return False  # Named by an older version (mkdtemp): stale.
    pid = int(pid)
    if pid == os.getpid():
        return os.path.realpath(path) in _OPEN_STAGING_DIRECTORIES
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def recover_interrupted(dst):
    """Puts back the previous `dst` if a kill left it only as `.NAME.old.*`.

    Returns True if it did. Loading a preset calls this, so a save killed
    between its two renames loses nothing.
    """
    dst = pathlib.Path(dst)
    if os.path.lexists(dst):
        return False
    candidates = [
        old / dst.name
        for old in _siblings(dst, "old")
        if (old / dst.name).is_dir() and not _writer_alive(old, "old", dst)
    ]
    if not candidates:
        return False
    newest = max(candidates, key=lambda p: p.stat().st_mtime)
    try:
        os.rename(newest, dst)
    except OSError:
        return False
    shutil.rmtree(newest.parent, ignore_errors=True)
    return True


def stale_siblings(dst, role="partial"):
    """The `.NAME.ROLE.*` siblings of `dst` whose writer is gone."""
    dst = pathlib.Path(dst)
    return [p for p in _siblings(dst, role) if not _writer_alive(p, role, dst)]


def clean_stale_siblings(dst):
    """Removes `.partial`/`.old` siblings of `dst` whose writer is gone."""
    dst = pathlib.Path(dst)
    recover_interrupted(dst)
    for role in ("partial", "old"):
        for path in stale_siblings(dst, role):
            shutil.rmtree(path, ignore_errors=True)


def _exchange(a, b):
    """Swaps two paths in one step (Linux renameat2); False if unsupported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [
        ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint
    ]
    result = renameat2(
        _AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False  # Kernel or filesystem without the flag.
    raise OSError(code, os.strerror(code), str(b))


def _fsync_directory(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _swap_in(staging, dst):
    if not os.path.lexists(dst):
        os.rename(staging, dst)
    elif _exchange(staging, dst):
        shutil.rmtree(staging, ignore_errors=True)  # Now the old directory.
    else:
        retired = _sibling(dst, "old")
        os.mkdir(retired)
        os.rename(dst, retired / dst.name)
        os.rename(staging, dst)
        shutil.rmtree(retired, ignore_errors=True)
    _fsync_directory(dst.parent)


def _write_marker(directory, kind):
    with open(os.path.join(directory, MARKER_FILE), "w", encoding="utf-8") as handle:
        json.dump({"kind": kind, "writer": "keras_albert"}, handle)


@contextlib.contextmanager
def atomic_directory(dst, kind="preset", overwrite=False, mark=True):
    """Yields a staging directory that replaces `dst` when the block ends.

    Args:
        dst: the directory to write.
        kind: what is written: a key of `KNOWN_FILES` ("preset", ...). An
            existing `dst` is replaced only if it holds the same kind (or is
            empty); otherwise a ValueError is raised before the block runs.
        overwrite: replace any existing directory `dst`.
        mark: leave the marker file that recognises the artifact later.

    On any error, or a kill, `dst` keeps its previous content; the staging
    directory is removed (after a kill, by the next save). Directories and
    files are created with the modes the umask gives.

    Example:
    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "preset")
    >>> with atomic_directory(target) as staging:
    ...     _ = open(os.path.join(staging, "config.json"), "w").write("{}")
    >>> sorted(os.listdir(target))
    ['.keras_albert_artifact.json', 'config.json']
    """
    dst = check_replaceable(dst, kind, overwrite)
    dst.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_siblings(dst)
    staging = _sibling(dst, "partial")
    os.mkdir(staging)  # 0o777 less the umask, unlike mkdtemp's 0o700.
    registered = os.path.realpath(staging)
    _OPEN_STAGING_DIRECTORIES.add(registered)
    try:
        yield str(staging)
        if mark:
            _write_marker(staging, kind)
        # Something may have appeared at `dst` while the block ran.
        check_replaceable(dst, kind, overwrite)
        _swap_in(staging, dst)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        _OPEN_STAGING_DIRECTORIES.discard(registered)


@contextlib.contextmanager
def atomic_directory_update(dst):
    """Like `atomic_directory`, but the staging copy starts with `dst`'s files.

    keras-hub's `save_to_preset` adds files to a directory (a tokenizer
    saved next to a backbone), so the update is staged on a copy and the
    whole directory is swapped in; nothing already there is lost. Inside an
    open `atomic_directory` block it yields `dst` itself.
    """
    if _inside_open_staging(dst):
        os.makedirs(dst, exist_ok=True)
        yield str(dst)
        return
    recover_interrupted(dst)
    # A directory of other files gains files but is not marked a preset.
    mark = not os.path.isdir(dst) or not os.listdir(dst) or artifact_kind(dst) == "preset"
    with atomic_directory(dst, kind="preset", overwrite=True, mark=mark) as staging:
        if os.path.isdir(dst):
            shutil.copytree(dst, staging, symlinks=True, dirs_exist_ok=True)
        yield staging
