"""Input files read as regular files only.

A directory handed to this package (a preset, a checkpoint to convert) is
data from anyone. A symbolic link in it can point anywhere (the password
file, a private folder) and would be read, or copied into something
published; a FIFO blocks the reader forever; `/dev/zero` never ends. So
links and special files are refused by path before anything is opened, and
sizes are checked before a file is read whole.
"""

import os
import pathlib
import stat

MiB = 1 << 20


def _kind(mode):
    if stat.S_ISFIFO(mode):
        return "a FIFO (reading it would wait forever)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device (reading it may never end)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse(path, what, name):
    return ValueError(
        f"{name} {str(path)!r} is {what}; only regular files and directories are "
        "read. Replace it with a copy of the file it should be."
    )


def check_regular_file(path, name="File", max_bytes=None, follow_link=False):
    """`path` as a Path if it is a regular file (and at most `max_bytes`
    long); a ValueError naming it otherwise. A link is refused unless
    `follow_link`, and then only one that ends at a regular file."""
    path = pathlib.Path(path)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        if not follow_link:
            raise _refuse(path, f"a symbolic link (to {os.readlink(path)!r})", name)
        try:
            info = os.stat(path)
        except OSError:
            raise _refuse(path, f"a link to nothing ({os.readlink(path)!r})", name) from None
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(path, _kind(info.st_mode), name)
    if max_bytes is not None and info.st_size > max_bytes:
        raise ValueError(
            f"{name} {str(path)!r} holds {info.st_size:,} bytes; at most {max_bytes:,} "
            "are read. It is not the file it should be."
        )
    return path


def read_regular_bytes(path, name="File", max_bytes=None, follow_link=False):
    """The bytes of `path`, after `check_regular_file`."""
    return check_regular_file(path, name, max_bytes, follow_link).read_bytes()


def check_regular_tree(directory, name="Directory", follow_links=False, max_bytes=None):
    """Refuses, by path, anything under `directory` that is not a regular
    file or a directory. With `follow_links`, a link to a regular file is
    accepted (hub caches keep their files as links to blobs); a link to a
    directory never is. `max_bytes(relative_path)` gives the size allowed
    for a file, or None for any size.
    """
    directory = pathlib.Path(directory)
    pending = [directory]
    while pending:
        current = pending.pop()
        for entry in os.scandir(current):
            path = pathlib.Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                pending.append(path)
                continue
            if entry.is_symlink() and os.path.isdir(path):
                raise _refuse(path, f"a symbolic link to a directory ({os.readlink(path)!r})", name)
            limit = max_bytes(path.relative_to(directory).as_posix()) if max_bytes else None
            check_regular_file(path, name, limit, follow_link=follow_links)
