"""Crafted tarballs never write outside the extraction directory."""

import io
import os
import stat
import tarfile

import pytest

from keras_albert.convert.safe_tarball import ArchiveRefusedError
from keras_albert.convert.safe_tarball import extract_tarball


def _add(tar, name, kind=tarfile.REGTYPE, linkname="", data=b"x", mode=0o644):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = mode
    payload = data if kind == tarfile.REGTYPE else b""
    info.size = len(payload)
    tar.addfile(info, io.BytesIO(payload))


def _archive(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            _add(tar, *member) if isinstance(member, tuple) else _add(tar, member)
    return path


def _path_max_chain():
    """The CVE-2025-4517 layout: symlinks through directories with long
    names, so the resolved path of a later link exceeds PATH_MAX and a
    check made before extraction (`os.path.realpath`) stops resolving it,
    then a link that climbs out and a file written through it."""
    long_name = "d" * 247
    steps = "abcdefghijklmnop"
    members = []
    path = ""
    for step in steps:
        members.append((os.path.join(path, long_name), tarfile.DIRTYPE))
        members.append((os.path.join(path, step), tarfile.SYMTYPE, long_name))
        path = os.path.join(path, long_name)
    link = os.path.join(*steps, "l" * 254)
    members.append((link, tarfile.SYMTYPE, "../" * len(steps)))
    members.append(("escape", tarfile.SYMTYPE, link + "/../../../outside"))
    members.append(("escape/owned.txt", tarfile.REGTYPE, "", b"owned"))
    return members


HOSTILE = [
    ("path_max_symlink_chain", _path_max_chain(), "symbolic link"),
    (
        "short_symlink_chain",
        [("y", tarfile.SYMTYPE, "."), ("x", tarfile.SYMTYPE, "y/.."), "x/f"],
        "symbolic link",
    ),
    ("hardlink", ["a", ("b", tarfile.LNKTYPE, "/etc/passwd")], "hard link"),
    ("absolute_name", ["/tmp/absolute.txt"], "absolute path"),
    ("parent_name", ["../escaped.txt"], "climbs out"),
    ("parent_inside_name", ["albert/../../escaped.txt"], "climbs out"),
    ("char_device", [("dev", tarfile.CHRTYPE)], "device or FIFO"),
    ("block_device", [("disk", tarfile.BLKTYPE)], "device or FIFO"),
    ("fifo", [("pipe", tarfile.FIFOTYPE)], "device or FIFO"),
    ("same_file_twice", ["albert/a", "albert/a"], "already wrote"),
    ("file_then_directory", ["albert", "albert/a"], "wrote a file"),
]


@pytest.mark.parametrize(
    "members, why", [case[1:] for case in HOSTILE], ids=[case[0] for case in HOSTILE]
)
def test_hostile_tarball_is_refused_and_leaves_nothing(tmp_path, members, why):
    work = tmp_path / "work"
    work.mkdir()
    victim = tmp_path / "outside"
    victim.write_text("keep")
    archive = _archive(tmp_path / "evil.tar.gz", members)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with pytest.raises(ValueError, match=why) as error:
        extract_tarball(archive, work / "release")
    assert isinstance(error.value, ArchiveRefusedError)
    assert str(error.value).startswith("Refusing to extract")
    assert "evil.tar.gz" in str(error.value)
    assert victim.read_text() == "keep"
    assert not (work / "release").exists()
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_link_refusal_says_why(tmp_path):
    archive = _archive(tmp_path / "a.tar", [("y", tarfile.SYMTYPE, ".")])
    with pytest.raises(ValueError, match="published ALBERT tarballs hold none"):
        extract_tarball(archive, tmp_path / "out")


def test_regular_release_extracts_with_umask_permissions(tmp_path):
    archive = _archive(
        tmp_path / "release.tar.gz",
        [
            ("albert_base", tarfile.DIRTYPE),
            ("./albert_base/albert_config.json", tarfile.REGTYPE, "", b"{}", 0o4777),
            ("albert_base/sub/deep.bin", tarfile.REGTYPE, "", b"\x00" * 3, 0o600),
        ],
    )
    old = os.umask(0o022)
    try:
        target = extract_tarball(archive, tmp_path / "x" / "release")
    finally:
        os.umask(old)
    config = target / "albert_base" / "albert_config.json"
    assert config.read_bytes() == b"{}"
    assert (target / "albert_base" / "sub" / "deep.bin").read_bytes() == b"\x00" * 3
    # No setuid from the archive; the mode is what the umask gives any file.
    assert stat.S_IMODE(config.stat().st_mode) == 0o644
    assert stat.S_IMODE((target / "albert_base" / "sub").stat().st_mode) == 0o755


def test_existing_target_is_refused(tmp_path):
    archive = _archive(tmp_path / "release.tar", ["albert/a"])
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path, tmp_path / "out" / "albert")
    with pytest.raises(ValueError, match="`target` must be a directory that does not exist"):
        extract_tarball(archive, tmp_path / "out")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("content", [b"", b"not a tar", b"\x1f\x8b\x08\x00truncated"])
def test_unreadable_archive_is_named(tmp_path, content):
    path = tmp_path / "bad.tar.gz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="bad.tar.gz.*not a readable tar archive"):
        extract_tarball(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_truncated_member_data_is_named(tmp_path):
    path = _archive(tmp_path / "big.tar", [("albert/a", tarfile.REGTYPE, "", os.urandom(50000))])
    path.write_bytes(path.read_bytes()[:20000])
    with pytest.raises(ValueError, match="not a readable tar archive"):
        extract_tarball(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_reports_archive_refusal_in_one_line(tmp_path, capsys):
    from keras_albert.cli.main import main

    archive = _archive(tmp_path / "evil.tar.gz", _path_max_chain())
    code = main(["convert", "--from=tf1", f"--src={archive}", f"--dst={tmp_path / 'preset'}"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "Refusing to extract" in err
    assert not (tmp_path / "outside").exists()
