"""Files that appear whole or not at all."""

import os
import pathlib
import secrets

from keras_albert.utils.atomic_directory import stale_siblings


def write_file_atomically(path, data, name="path"):
    """Writes `data` (bytes, str as UTF-8, or a callable that writes into the
    open binary file, e.g. `lambda f: np.savez(f, **arrays)`) to `path` via a
    renamed sibling.

    The sibling `.NAME.partial.PID.X` is created with mode 0o666 less the
    umask (as any new file, unlike `tempfile`'s 0o600), flushed to disk,
    then renamed over `path`: a reader sees the old file or the new one.

    Example:
    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "metrics.json")
    >>> write_file_atomically(target, "{}")
    >>> open(target).read()
    '{}'
    """
    path = pathlib.Path(path)
    if path.is_dir():
        raise ValueError(
            f"`{name}` must be a file path, but {str(path)!r} is a directory."
        )
    if isinstance(data, str):
        data = data.encode("utf-8")
    write = data if callable(data) else (lambda handle: handle.write(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    # What a killed writer of this file left behind.
    for stale in stale_siblings(path):
        try:
            os.unlink(stale)
        except OSError:
            pass
    staging = path.with_name(f".{path.name}.partial.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, path)
    except BaseException:
        try:
            os.unlink(staging)
        except OSError:
            pass
        raise


def check_writable_directory(directory, name="path"):
    """Fails fast if files cannot be created in `directory` (or the nearest
    existing parent it would be created under): before long work, not after.
    """
    directory = pathlib.Path(directory).absolute()
    existing = directory
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(
            f"`{name}` {str(directory)!r} cannot be created: "
            f"{str(existing)!r} is a file."
        )
    probe = existing / f".keras_albert_probe.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as error:
        raise ValueError(
            f"`{name}` {str(directory)!r} is not writable: cannot create files "
            f"in {str(existing)!r} ({error.strerror}). Pass a directory you "
            "can write to."
        ) from None
