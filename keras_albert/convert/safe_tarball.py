"""Extracts a release tarball without letting it write outside its target.

Google publishes ALBERT as `.tar.gz` files holding only directories and
regular files. A crafted archive can hold members named `../x` or `/etc/x`,
symbolic or hard links (alone or in chains that defeat path checks made
before the links exist on disk, as in CVE-2025-4517), or device files.
So every member is judged before anything is written, links and special
files are refused outright, and the files are written by this module, not
by `tarfile.extractall`: each path component is opened relative to its
parent's descriptor with `O_NOFOLLOW`, and each file is created with
`O_EXCL`, so nothing on disk can redirect a write.
"""

import os
import pathlib
import shutil
import stat
import tarfile
import zlib

_CHUNK = 1 << 20
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
)
# Errors of a damaged archive, raised while its members are read.
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError)


class ArchiveRefusedError(ValueError):
    """An archive holding something a release never holds (links, devices,
    names outside the target)."""


def _parts(member, refuse):
    """The member's path as a tuple of plain names ('.' dropped)."""
    name = member.name
    if "\x00" in name:
        refuse("has a NUL byte in its name")
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        refuse("has an absolute path")
    parts = tuple(p for p in pathlib.PurePosixPath(name).parts if p != ".")
    if ".." in parts:
        refuse("climbs out of the target directory ('..')")
    return parts


def _check_member(member, archive):
    def refuse(why):
        raise ArchiveRefusedError(
            f"Refusing to extract {str(archive)!r}: member {member.name!r} {why}."
        )

    parts = _parts(member, refuse)
    if member.issym() or member.islnk():
        kind = "symbolic" if member.issym() else "hard"
        refuse(
            f"is a {kind} link (to {member.linkname!r}); links are refused "
            "because the published ALBERT tarballs hold none, only "
            "directories and regular files"
        )
    if not (member.isfile() or member.isdir()):
        refuse("is neither a file nor a directory (device or FIFO)")
    return parts


def _open_directory(root_fd, parts, create):
    """A descriptor of `root/parts...`, never following a link on the way."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            if create:
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            child = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_file(root_fd, parts, source):
    parent = _open_directory(root_fd, parts[:-1], create=True)
    try:
        # Mode 0o666 is narrowed by the umask, as any new file's is; setuid
        # and other bits from the archive are never applied.
        out = os.open(parts[-1], _FILE_FLAGS, 0o666, dir_fd=parent)
    finally:
        os.close(parent)
    with os.fdopen(out, "wb") as handle:
        shutil.copyfileobj(source, handle, _CHUNK)


def _check_written(target, parts, member, archive):
    root = os.path.realpath(target)
    path = os.path.join(root, *parts)
    real = os.path.realpath(path)
    kind = os.lstat(path).st_mode
    if not (real == root or real.startswith(root + os.sep)) or stat.S_ISLNK(kind):
        raise ArchiveRefusedError(
            f"Refusing to extract {str(archive)!r}: member {member.name!r} "
            f"was written to {real!r}, outside {root!r}."
        )


def extract_tarball(archive, target):
    """Extracts `archive` (.tar, .tar.gz, ...) into the new directory `target`.

    Args:
        archive: path of a tar archive, compressed or not.
        target: a directory that does not exist yet; it is created (its
            parent too) and holds the archive's files when this returns.

    Returns:
        `target` as a `pathlib.Path`.

    Raises:
        ValueError: the archive is unreadable, or holds a link, a device, a
            FIFO, an absolute name, a name with `..`, or the same file twice.
            Nothing of it is left on disk then.
    """
    archive = pathlib.Path(archive)
    target = pathlib.Path(target)
    try:
        tar = tarfile.open(archive)
    except _READ_ERRORS as error:
        raise ValueError(
            f"{str(archive)!r} is not a readable tar archive: {error}"
        ) from None
    with tar:
        try:
            members = tar.getmembers()
        except _READ_ERRORS as error:
            raise ValueError(
                f"{str(archive)!r} is not a readable tar archive: {error}"
            ) from None
        # Judge the whole archive first: a refusal writes nothing.
        planned = [(member, _check_member(member, archive)) for member in members]
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(target)
        except FileExistsError:
            raise ValueError(
                f"`target` must be a directory that does not exist yet, so "
                f"that nothing already in it can redirect the extraction. "
                f"Received: target={str(target)!r}"
            ) from None
        try:
            _extract(tar, planned, target, archive)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
    return target


def _extract(tar, planned, target, archive):
    root_fd = os.open(target, _DIRECTORY_FLAGS)
    try:
        for member, parts in planned:
            if not parts:
                continue
            try:
                if member.isdir():
                    os.close(_open_directory(root_fd, parts, create=True))
                else:
                    _write_file(root_fd, parts, tar.extractfile(member))
            except FileExistsError:
                raise ArchiveRefusedError(
                    f"Refusing to extract {str(archive)!r}: member "
                    f"{member.name!r} names a path the archive already wrote."
                ) from None
            except NotADirectoryError:
                raise ArchiveRefusedError(
                    f"Refusing to extract {str(archive)!r}: member "
                    f"{member.name!r} needs a directory where the archive "
                    "wrote a file."
                ) from None
            except _READ_ERRORS as error:
                if isinstance(error, OSError) and error.errno is not None:
                    raise
                raise ValueError(
                    f"{str(archive)!r} is not a readable tar archive: {error}"
                ) from None
        for member, parts in planned:
            if parts:
                _check_written(target, parts, member, archive)
    finally:
        os.close(root_fd)
