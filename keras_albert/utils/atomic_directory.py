"""Directories that appear whole or not at all."""

import contextlib
import os
import pathlib
import shutil
import tempfile

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


@contextlib.contextmanager
def atomic_directory(dst):
    """Yields a staging directory that replaces `dst` when the block ends.

    Everything is written into a temporary sibling of `dst`; only when the
    block finishes without error is the sibling renamed to `dst` (a
    previous `dst` is moved aside first and removed after). On any error,
    or a kill, `dst` keeps its previous content and the staging directory
    is removed (or, after a kill, left under a `.partial` name).

    Example:
    >>> import tempfile, os
    >>> target = os.path.join(tempfile.mkdtemp(), "preset")
    >>> with atomic_directory(target) as staging:
    ...     _ = open(os.path.join(staging, "config.json"), "w").write("{}")
    >>> os.listdir(target)
    ['config.json']
    """
    dst = pathlib.Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    staging = pathlib.Path(
        tempfile.mkdtemp(prefix=f".{dst.name}.partial.", dir=dst.parent)
    )
    registered = os.path.realpath(staging)
    _OPEN_STAGING_DIRECTORIES.add(registered)
    try:
        yield str(staging)
        if dst.exists():
            retired = pathlib.Path(
                tempfile.mkdtemp(prefix=f".{dst.name}.old.", dir=dst.parent)
            )
            os.replace(dst, retired / dst.name)
            os.replace(staging, dst)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            os.replace(staging, dst)
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
    whole directory is swapped in. Inside an open `atomic_directory` block
    it yields `dst` itself.
    """
    if _inside_open_staging(dst):
        os.makedirs(dst, exist_ok=True)
        yield str(dst)
        return
    with atomic_directory(dst) as staging:
        if os.path.isdir(dst):
            shutil.copytree(dst, staging, symlinks=True, dirs_exist_ok=True)
        yield staging
