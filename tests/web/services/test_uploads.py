"""Every kind of bad archive is refused with a clear message, writing nothing outside its folder."""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.uploads import UnpackLimits, UploadError, unpack, write_single

LIMITS = UnpackLimits(max_bytes=2 * 1024 * 1024, max_files=20, max_ratio=50)


def make_zip(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue()


def make_tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def tar_entry(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


def symlink_zip() -> bytes:
    info = zipfile.ZipInfo("evil")
    info.external_attr = (0o120777) << 16
    return make_zip([(info, b"/etc/passwd")])


def lying_zip() -> bytes:
    """A member whose header declares 10 bytes but that inflates to a megabyte."""
    data = bytearray(make_zip([("bot.py", b"\0" * (1024 * 1024))]))
    real = (1024 * 1024).to_bytes(4, "little")
    fake = (10).to_bytes(4, "little")
    return bytes(data.replace(real, fake))


BAD_ARCHIVES: dict[str, tuple[Callable[[], bytes], str]] = {
    "zip with ..": (lambda: make_zip([("../escape.py", b"x")]), "'..'"),
    "zip absolute": (lambda: make_zip([("/tmp/abs.py", b"x")]), "absolute"),
    "zip symlink": (symlink_zip, "symbolic links"),
    "zip bomb": (lambda: make_zip([("zeros", b"\0" * (1900 * 1024))]), "zip bomb"),
    "zip lying sizes": (lying_zip, "bot.py"),
    "zip too many files": (lambda: make_zip([(f"f{i}", b"x") for i in range(25)]), "entries"),
    "zip too large": (
        lambda: make_zip([(f"r{i}", bytes(range(256)) * 4096) for i in range(3)]),
        "limit",
    ),
    "tar with ..": (lambda: make_tar([(tar_entry("a/../../x"), b"x")]), "'..'"),
    "tar absolute": (lambda: make_tar([(tar_entry("/etc/cron.d/x"), b"x")]), "absolute"),
    "tar symlink": (
        lambda: make_tar([(tar_entry("link", tarfile.SYMTYPE, "/etc/passwd"), None)]),
        "symbolic links",
    ),
    "tar link chain": (  # each link innocent-looking on its own: d/y is refused by name
        lambda: make_tar(
            [
                (tar_entry("d/x", tarfile.SYMTYPE, ".."), None),
                (tar_entry("d/y", tarfile.SYMTYPE, "x/../../../../etc/shadow"), None),
            ]
        ),
        "d/x: symbolic links",
    ),
    "tar link inside": (  # even a link that stays inside: the archive is refused
        lambda: make_tar(
            [(tar_entry("bot.py"), b"x"), (tar_entry("a", tarfile.SYMTYPE, "bot.py"), None)]
        ),
        "a: symbolic links",
    ),
    "tar hardlink": (
        lambda: make_tar([(tar_entry("hard", tarfile.LNKTYPE, "/etc/passwd"), None)]),
        "hard links",
    ),
    "tar device": (lambda: make_tar([(tar_entry("dev", tarfile.CHRTYPE), None)]), "device"),
    "tar fifo": (lambda: make_tar([(tar_entry("pipe", tarfile.FIFOTYPE), None)]), "device"),
    "gzip bomb": (lambda: make_tar([(tar_entry("zeros"), b"\0" * (3 * 1024 * 1024))]), "bomb"),
    "not an archive": (lambda: b"just some text", "not a zip or tar.gz"),
    "truncated zip": (lambda: make_zip([("bot.py", b"x" * 5000)])[:-30], "zip"),
}


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


@pytest.mark.parametrize("kind", sorted(BAD_ARCHIVES))
def test_bad_archive_is_refused_and_writes_nothing_outside(kind: str, tmp_path: Path) -> None:
    build, expected = BAD_ARCHIVES[kind]
    dest = tmp_path / "storage" / "dest"
    dest.mkdir(parents=True)
    before = tree(tmp_path)
    with pytest.raises(UploadError) as caught:
        unpack(build(), dest, LIMITS)
    assert expected in str(caught.value)
    outside = {p for p in tree(tmp_path) - before if not p.startswith("storage/dest")}
    assert outside == set()


def test_good_zip_unpacks_with_modes(tmp_path: Path) -> None:
    script = zipfile.ZipInfo("run.sh")
    script.external_attr = 0o100755 << 16
    data = make_zip([("bot.toml", b"name='x'"), ("lib/util.py", b"pass"), (script, b"#!/bin/sh")])
    files = unpack(data, tmp_path, LIMITS)
    assert sorted(map(str, files)) == ["bot.toml", "lib/util.py", "run.sh"]
    assert (tmp_path / "lib/util.py").read_text() == "pass"
    assert (tmp_path / "run.sh").stat().st_mode & 0o111


def test_good_tar_gz_unpacks(tmp_path: Path) -> None:
    data = make_tar([(tar_entry("bot/bot.toml"), b"a"), (tar_entry("bot/bot.py"), b"b")])
    unpack(data, tmp_path, LIMITS)
    assert (tmp_path / "bot" / "bot.py").read_bytes() == b"b"


def test_single_file_with_manifest(tmp_path: Path) -> None:
    write_single("bot.py", b"print(1)", 'name = "x"', tmp_path, LIMITS)
    assert tree(tmp_path) == {"bot.py", "bot.toml"}
    with pytest.raises(UploadError, match=r"'\.\.'"):
        write_single("../bot.py", b"x", "", tmp_path / "other", LIMITS)


def test_gzip_stream_is_capped_even_when_the_ratio_is_allowed(tmp_path: Path) -> None:
    lenient = UnpackLimits(max_bytes=1024 * 1024, max_files=20, max_ratio=100_000)
    data = make_tar([(tar_entry("zeros"), b"\0" * (4 * 1024 * 1024))])
    with pytest.raises(UploadError, match="decompresses to more than the allowed size"):
        unpack(data, tmp_path, lenient)
    assert tree(tmp_path) == set()


@pytest.mark.parametrize("compression", ["bz2", "xz"])
def test_bzip2_and_xz_tars_unpack_and_their_bombs_are_capped(
    compression: str, tmp_path: Path
) -> None:
    def packed(members: list[tuple[str, bytes]]) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as archive:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return buffer.getvalue()

    unpack(packed([("bot.toml", b"a"), ("bot.py", b"b")]), tmp_path / "good", LIMITS)
    assert (tmp_path / "good" / "bot.py").read_bytes() == b"b"
    lenient = UnpackLimits(max_bytes=1024 * 1024, max_files=20, max_ratio=100_000)
    with pytest.raises(UploadError, match="'zeros': the archive decompresses to more"):
        unpack(packed([("zeros", b"\0" * (4 * 1024 * 1024))]), tmp_path / "bomb", lenient)


def test_reading_is_bounded_in_time(tmp_path: Path) -> None:
    data = make_tar([(tar_entry("bot.toml"), b"a")])
    with pytest.raises(UploadError, match="took longer than"):
        unpack(data, tmp_path, UnpackLimits(max_seconds=-1.0))
    assert tree(tmp_path) == set()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a/" * 30 + "x", "nest deeper"),
        ("n" * 300, "longer than"),
        ("ok/" + "n" * 200 + "/" + "m" * 200 + "/" + "o" * 200, "longer than"),
        ("tab\there", "control characters"),
    ],
)
def test_paths_too_deep_long_or_odd_are_refused(name: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(UploadError, match=message):
        unpack(make_zip([(name, b"x")]), tmp_path, LIMITS)
    assert tree(tmp_path) == set()
