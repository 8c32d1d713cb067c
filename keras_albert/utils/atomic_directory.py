"""Directories that appear whole or not at all, and never replace what we did
not write.

A directory is staged next to its destination as `.NAME.partial.PID.X` and
swapped in when complete. Every directory this module writes holds a marker
file, `.keras_albert_artifact.json`, that names its kind and lists the files
written (the manifest). An existing destination is replaced only when its
marker names the same kind; file names never count (any folder may hold a
`config.json`). Anything else is refused unless the caller passes
`overwrite=True`. A replaced artifact keeps what its owner added since (a
`.git`, notes, `assets.extra/`): files outside the manifest are linked into
the new directory before the swap; one the new write would also write is
refused, by name, without `overwrite`.

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
import re
import secrets
import shutil

# Left in every directory this module writes:
# {"kind": ..., "writer": "keras_albert", "files": [relative paths written]}.
MARKER_FILE = ".keras_albert_artifact.json"
_DESCRIPTIONS = {
    "preset": "preset",
    "saved_model": "SavedModel",
    "huggingface": "Hugging Face model directory",
    "tfhub_modules": "TF-Hub export (encoder/ and preprocessor/)",
    "published_model": "published model (model card and preset)",
    "run": "training run",
}
KINDS = tuple(_DESCRIPTIONS)
# What a killed `write_file_atomically` or swap left: never a user's file.
_LEFTOVER = re.compile(r"^\..+\.(partial|old)\.[^.]+\.[^.]+$")
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
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS}. Received: kind={kind!r}")


def read_marker(path):
    """The marker of directory `path` as a dict, or None without one."""
    marker_path = pathlib.Path(path) / MARKER_FILE
    try:
        if not marker_path.is_file() or marker_path.is_symlink():
            return None
        marker = json.loads(marker_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("kind") not in KINDS:
        return None
    return marker


def artifact_kind(path):
    """The kind of artifact directory `path` holds (by its marker), or None.

    Example:
    >>> import tempfile
    >>> artifact_kind(tempfile.mkdtemp()) is None
    True
    """
    marker = read_marker(path)
    return marker["kind"] if marker else None


def written_files(path):
    """The relative paths the marker of `path` lists as written by this
    package: a set, or None for a marker older than the manifest."""
    marker = read_marker(path)
    files = marker.get("files") if marker else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return set(files)


def _files_under(directory):
    """Relative paths (with /) of everything under `directory`; those of
    directories end in /."""
    found = []
    for root, dirs, files in os.walk(directory):
        relative = os.path.relpath(root, directory)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        # os.walk lists links to directories among `dirs` and never enters them.
        found += [prefix + n + ("" if os.path.islink(os.path.join(root, n)) else "/") for n in dirs]
        found += [prefix + n for n in files]
    return sorted(f for f in found if f != MARKER_FILE)


def foreign_entries(directory, written=None):
    """What `directory` holds that this package did not write, or None when
    that is unknown (no marker, or one older than the manifest).

    `written` is the manifest (default: the directory's own). Returns
    relative paths: files and links not in it, and whole directories none
    of whose files are in it.
    """
    directory = pathlib.Path(directory)
    if written is None:
        written = written_files(directory)
    if written is None:
        return None
    # Directories the write made (older manifests list files only).
    made = {"/".join(f.split("/")[:i]) + "/" for f in written for i in range(1, f.count("/") + 1)}
    foreign = []

    def visit(path, relative):
        for entry in sorted(os.scandir(path), key=lambda e: e.name):
            name = f"{relative}{entry.name}"
            if name == MARKER_FILE or _LEFTOVER.match(entry.name):
                continue
            if entry.is_dir(follow_symlinks=False):
                if name + "/" in made or name + "/" in written:
                    visit(entry.path, name + "/")
                else:
                    foreign.append(name)
            elif name not in written:
                foreign.append(name)

    visit(directory, "")
    return foreign


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
            f"hold a {_DESCRIPTIONS[kind]} written before by keras_albert (no "
            f"{MARKER_FILE} of that kind; it holds: {shown}); replacing it "
            "would delete those files. Pass a new or empty directory, or "
            "overwrite=True (CLI: --overwrite) to replace it anyway."
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


def _write_marker(directory, kind, files=None):
    """`files`: the manifest (default: everything now in `directory`)."""
    files = _files_under(directory) if files is None else sorted(files)
    with open(os.path.join(directory, MARKER_FILE), "w", encoding="utf-8") as handle:
        json.dump({"kind": kind, "writer": "keras_albert", "files": files}, handle, indent=1)


def _link_or_copy(src, dst):
    """Hard link (no data copied, nothing opened: a FIFO cannot block it);
    a copy where links are refused. Links are copied as links."""
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return dst
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        if not os.path.isfile(src):
            raise
        shutil.copy2(src, dst)
    return dst


def _copy_regular(src, dst):
    if not os.path.isfile(src):
        raise ValueError(
            f"{src!r} is not a regular file (a FIFO, socket or device); it is never "
            "opened or copied. Remove it from the directory."
        )
    return shutil.copy2(src, dst)


def _keep_foreign_files(dst, staging, kind, overwrite):
    """Links what the owner of artifact `dst` added since it was written
    into `staging`; a name both hold is refused without `overwrite`."""
    if not os.path.isdir(dst) or read_marker(dst) is None or artifact_kind(dst) != kind:
        return  # New, empty, or replaced whole at the caller's request.
    foreign = foreign_entries(dst)
    if foreign is None:
        # A marker older than the manifest: every top-level name the new
        # write does not produce is the owner's.
        foreign = [
            n for n in sorted(os.listdir(dst))
            if n != MARKER_FILE and not _LEFTOVER.match(n) and not os.path.lexists(staging / n)
        ]
    clashes = [f for f in foreign if _clashes(staging, f)]
    if clashes and not overwrite:
        shown = ", ".join(clashes[:5]) + (", ..." if len(clashes) > 5 else "")
        raise ValueError(
            f"{str(dst)!r} holds files keras_albert did not write where this write puts "
            f"its own: {shown}. Nothing was changed. Move them away, or pass "
            "overwrite=True (CLI: --overwrite) to replace them."
        )
    for relative in foreign:
        if relative in clashes:
            continue
        source, target = dst / relative, staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(source, target)


def _clashes(staging, relative):
    """Whether `relative` (or a file on its way) is taken in `staging`."""
    parts = relative.split("/")
    for i in range(1, len(parts)):
        above = staging.joinpath(*parts[:i])
        if os.path.lexists(above) and not above.is_dir():
            return True
    return os.path.lexists(staging / relative)


def _file_stats(directory):
    return {
        f: (s.st_size, s.st_mtime_ns)
        for f in _files_under(directory)
        for s in [os.lstat(os.path.join(directory, f))]
    }


@contextlib.contextmanager
def _staged(dst, kind, overwrite, mark, update):
    dst = check_replaceable(dst, kind, overwrite)
    dst.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_siblings(dst)
    staging = _sibling(dst, "partial")
    os.mkdir(staging)  # 0o777 less the umask, unlike mkdtemp's 0o700.
    registered = os.path.realpath(staging)
    _OPEN_STAGING_DIRECTORIES.add(registered)
    try:
        before, previous = {}, set()
        if update and os.path.isdir(dst):
            # Copies, not links: the block rewrites files in place.
            shutil.copytree(dst, staging, symlinks=True, dirs_exist_ok=True,
                            copy_function=_copy_regular)
            before, previous = _file_stats(staging), written_files(dst) or set()
        yield str(staging)
        # The manifest: what the block wrote (an update: what it changed,
        # and what an earlier write listed), never what the owner added.
        after = _file_stats(staging)
        written = {f for f, stat in after.items() if before.get(f) != stat or f in previous}
        if mark:
            _write_marker(staging, kind, written)
        # Something may have appeared at `dst` while the block ran.
        check_replaceable(dst, kind, overwrite)
        if not update:
            _keep_foreign_files(dst, staging, kind, overwrite)
        _swap_in(staging, dst)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        _OPEN_STAGING_DIRECTORIES.discard(registered)


@contextlib.contextmanager
def atomic_directory(dst, kind="preset", overwrite=False, mark=True):
    """Yields a staging directory that replaces `dst` when the block ends.

    Args:
        dst: the directory to write.
        kind: what is written: one of `KINDS` ("preset", ...). An existing
            `dst` is replaced only if its marker names the same kind (or it
            is empty); otherwise a ValueError is raised before the block runs.
        overwrite: replace any existing directory `dst`, and files its
            owner added where this write puts its own.
        mark: leave the marker file (with the manifest of what was written)
            that recognises the artifact later.

    What the owner of an earlier artifact at `dst` added to it (files not
    in its manifest) is kept. On any error, or a kill, `dst` keeps its
    previous content; the staging directory is removed (after a kill, by
    the next save). Directories and files are created with the modes the
    umask gives.

    Example:
    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "preset")
    >>> with atomic_directory(target) as staging:
    ...     _ = open(os.path.join(staging, "config.json"), "w").write("{}")
    >>> sorted(os.listdir(target))
    ['.keras_albert_artifact.json', 'config.json']
    """
    with _staged(dst, kind, overwrite, mark, update=False) as staging:
        yield staging


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
    with _staged(dst, "preset", overwrite=True, mark=mark, update=True) as staging:
        yield staging
