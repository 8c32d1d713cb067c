"""Extracts a release tarball without letting it write outside its target.

Google publishes ALBERT as `.tar.gz` files. A crafted archive can hold
members named `../x` or `/etc/x`, links pointing outside the target, or
device files; every member is checked before anything is extracted, and
the archive is refused as a whole, naming the first offending member.
"""

import os
import pathlib
import tarfile


def _inside(root, path):
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def _check_member(member, target, archive):
    def refuse(why):
        raise ValueError(
            f"Refusing to extract {str(archive)!r}: member {member.name!r} {why}."
        )

    name = member.name
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        refuse("has an absolute path")
    if ".." in pathlib.PurePosixPath(name).parts:
        refuse("climbs out of the target directory ('..')")
    if not _inside(target, os.path.join(target, name)):
        refuse("resolves outside the target directory")
    if member.issym() or member.islnk():
        link = member.linkname
        base = os.path.dirname(os.path.join(target, name))
        resolved = (
            os.path.join(base, link) if member.issym() else os.path.join(target, link)
        )
        if os.path.isabs(link) or not _inside(target, resolved):
            refuse(f"is a link to {link!r}, outside the target directory")
    elif not (member.isfile() or member.isdir()):
        refuse("is neither a file, a directory nor a link (device or FIFO)")


def extract_tarball(archive, target):
    """Extracts `archive` (.tar, .tar.gz, ...) into the directory `target`."""
    archive = pathlib.Path(archive)
    try:
        tar = tarfile.open(archive)
    except (tarfile.TarError, OSError) as error:
        raise ValueError(
            f"{str(archive)!r} is not a readable tar archive: {error}"
        ) from None
    with tar:
        members = tar.getmembers()
        for member in members:
            _check_member(member, str(target), archive)
        os.makedirs(target, exist_ok=True)
        # The "data" filter re-checks what we checked and drops permissions
        # bits such as setuid.
        tar.extractall(target, members=members, filter="data")
    return pathlib.Path(target)
