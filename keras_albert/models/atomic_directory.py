"""Directories that appear whole or not at all."""

import contextlib
import os
import pathlib
import shutil
import tempfile


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
