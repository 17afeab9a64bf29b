"""Unpacking uploaded bots safely: zip, tar.gz, or one source file plus a manifest.

An archive is refused, with a message its owner can act on, if it holds a link, a device, an
absolute or ``..`` path, too many files, too many bytes, or members that expand far beyond their
packed size (a zip bomb). Sizes are checked while streaming, never trusted from the headers alone,
and every file is written inside the destination folder through a path checked against it.
"""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

CHUNK = 64 * 1024
MANIFEST = "bot.toml"


class UploadError(ValueError):
    """The upload cannot be accepted; the message says why, for the bot's owner."""


@dataclass(frozen=True)
class UnpackLimits:
    """How big an upload may be once unpacked."""

    max_bytes: int = 64 * 1024 * 1024
    max_files: int = 2000
    max_ratio: int = 100
    """Largest allowed unpacked/packed size ratio of a member (or of the whole archive)."""


@dataclass(frozen=True)
class Member:
    """One regular file or folder of an archive, already checked."""

    path: PurePosixPath
    is_dir: bool
    declared_size: int
    packed_size: int
    executable: bool


def detect_kind(data: bytes) -> str:
    """``"zip"``, ``"tar"`` or ``"file"`` from the content (never from the file name)."""
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return "zip"
    if data[:2] == b"\x1f\x8b":
        return "tar"
    if len(data) > 262 and data[257:262] == b"ustar":
        return "tar"
    return "file"


def safe_member_path(name: str) -> PurePosixPath:
    """The relative path of an archive member; ``UploadError`` for absolute or escaping paths."""
    cleaned = name.replace("\\", "/")
    path = PurePosixPath(cleaned)
    if cleaned.startswith("/") or (len(cleaned) > 1 and cleaned[1] == ":"):
        raise UploadError(f"{name!r}: absolute paths are not allowed in a bot archive")
    if any(part == ".." for part in path.parts):
        raise UploadError(f"{name!r}: '..' in a path would write outside the bot folder")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts:
        raise UploadError(f"{name!r}: empty member name")
    return PurePosixPath(*parts)


def unpack(data: bytes, dest: Path, limits: UnpackLimits) -> list[PurePosixPath]:
    """Unpack an archive's bytes into the empty folder ``dest``; the files written."""
    kind = detect_kind(data)
    if kind == "zip":
        return _unpack_zip(data, dest, limits)
    if kind == "tar":
        return _unpack_tar(data, dest, limits)
    raise UploadError("not a zip or tar.gz archive (upload a single file with a manifest instead)")


def write_single(
    filename: str, content: bytes, manifest: str, dest: Path, limits: UnpackLimits
) -> list[PurePosixPath]:
    """A one-file bot: ``filename`` plus the manifest text as ``bot.toml``."""
    path = safe_member_path(filename)
    if len(path.parts) != 1 or path.name == MANIFEST:
        raise UploadError(f"{filename!r}: a single-file bot needs a plain file name")
    if len(content) + len(manifest) > limits.max_bytes:
        raise UploadError(f"the bot is larger than {limits.max_bytes} bytes")
    _write(dest, path, io.BytesIO(content), limits.max_bytes, Budget(limits.max_bytes))
    _write(
        dest,
        PurePosixPath(MANIFEST),
        io.BytesIO(manifest.encode()),
        limits.max_bytes,
        Budget(limits.max_bytes),
    )
    return [path, PurePosixPath(MANIFEST)]


class Budget:
    """Bytes left for the whole archive, consumed while streaming."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise UploadError("the archive unpacks to more than the allowed size")


def _check_counts(members: list[Member], packed: int, limits: UnpackLimits) -> None:
    if len(members) > limits.max_files:
        raise UploadError(
            f"the archive holds {len(members)} entries; the limit is {limits.max_files}"
        )
    declared = sum(m.declared_size for m in members)
    if declared > limits.max_bytes:
        raise UploadError(
            f"the archive unpacks to {declared} bytes; the limit is {limits.max_bytes}"
        )
    if packed > 0 and declared > 1024 * 1024 and declared / packed > limits.max_ratio:
        raise UploadError(
            f"the archive expands {declared // packed}x (limit {limits.max_ratio}x): "
            "it looks like a zip bomb"
        )


def _member_cap(member: Member, limits: UnpackLimits) -> int:
    """Most bytes a member may yield: its declared size, and never far beyond its packed size."""
    by_ratio = max(member.packed_size, 1) * limits.max_ratio + 1024 * 1024
    return min(member.declared_size, by_ratio, limits.max_bytes)


# --- zip ------------------------------------------------------------------------------------


def _zip_member(info: zipfile.ZipInfo) -> Member:
    path = safe_member_path(info.filename)
    mode = (info.external_attr >> 16) & 0xFFFF
    kind = stat.S_IFMT(mode)  # 0 when the archiver recorded permissions only
    if kind == stat.S_IFLNK:
        raise UploadError(f"{info.filename!r}: symbolic links are not allowed in a bot archive")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UploadError(f"{info.filename!r}: only regular files and folders are allowed")
    if info.flag_bits & 0x1:
        raise UploadError(f"{info.filename!r}: encrypted archive members are not supported")
    return Member(
        path=path,
        is_dir=info.is_dir(),
        declared_size=info.file_size,
        packed_size=info.compress_size,
        executable=bool(mode & 0o111),
    )


def _unpack_zip(data: bytes, dest: Path, limits: UnpackLimits) -> list[PurePosixPath]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise UploadError(f"not a readable zip archive: {exc}") from exc
    members = [_zip_member(info) for info in infos]
    _check_counts(members, len(data), limits)
    budget = Budget(limits.max_bytes)
    written: list[PurePosixPath] = []
    for info, member in zip(infos, members, strict=True):
        if member.is_dir:
            _mkdir(dest, member.path)
            continue
        try:
            with archive.open(info) as stream:
                _write(dest, member.path, stream, _member_cap(member, limits), budget)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise UploadError(f"{info.filename!r}: corrupt member: {exc}") from exc
        _chmod(dest, member)
        written.append(member.path)
    return written


# --- tar ------------------------------------------------------------------------------------


def _tar_member(info: tarfile.TarInfo) -> Member:
    path = safe_member_path(info.name)
    if info.issym():
        raise UploadError(f"{info.name!r}: symbolic links are not allowed in a bot archive")
    if info.islnk():
        raise UploadError(f"{info.name!r}: hard links are not allowed in a bot archive")
    if info.ischr() or info.isblk() or info.isfifo() or info.isdev():
        raise UploadError(f"{info.name!r}: device files and pipes are not allowed")
    if not (info.isfile() or info.isdir()):
        raise UploadError(f"{info.name!r}: only regular files and folders are allowed")
    return Member(
        path=path,
        is_dir=info.isdir(),
        declared_size=info.size,
        packed_size=info.size,
        executable=bool(info.mode & 0o111),
    )


def _unpack_tar(data: bytes, dest: Path, limits: UnpackLimits) -> list[PurePosixPath]:
    try:
        archive = tarfile.open(  # noqa: SIM115 (closed with the BytesIO it reads)
            fileobj=io.BytesIO(_decompressed(data, limits)), mode="r:"
        )
        infos = []
        for info in archive:
            infos.append(info)
            if len(infos) > limits.max_files:
                raise UploadError(f"the archive holds more than {limits.max_files} entries")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise UploadError(f"not a readable tar archive: {exc}") from exc
    members = [_tar_member(info) for info in infos]
    _check_counts(members, 0, limits)
    budget = Budget(limits.max_bytes)
    written: list[PurePosixPath] = []
    for info, member in zip(infos, members, strict=True):
        if member.is_dir:
            _mkdir(dest, member.path)
            continue
        stream = archive.extractfile(info)
        if stream is None:
            raise UploadError(f"{info.name!r}: cannot be read")
        _write(dest, member.path, stream, _member_cap(member, limits), budget)
        _chmod(dest, member)
        written.append(member.path)
    return written


def _decompressed(data: bytes, limits: UnpackLimits) -> bytes:
    """The tar bytes, gunzipped in chunks and refused once past the size limit (gzip bombs)."""
    if data[:2] != b"\x1f\x8b":
        return data
    cap = limits.max_bytes + 1024 * 1024 + limits.max_files * 1024
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            while chunk := stream.read(CHUNK):
                out += chunk
                if len(out) > cap:
                    raise UploadError("the archive decompresses to more than the allowed size")
    except (OSError, EOFError) as exc:
        raise UploadError(f"not a readable gzip stream: {exc}") from exc
    ratio = len(out) / max(len(data), 1)
    if len(out) > 1024 * 1024 and ratio > limits.max_ratio:
        raise UploadError(
            f"the archive expands {int(ratio)}x (limit {limits.max_ratio}x): "
            "it looks like a zip bomb"
        )
    return bytes(out)


# --- writing inside the destination only ---------------------------------------------------


def _target(dest: Path, rel: PurePosixPath) -> Path:
    root = dest.resolve()
    target = (root / Path(*rel.parts)).resolve()
    if not target.is_relative_to(root) or target == root:
        raise UploadError(f"{rel}: resolves outside the bot folder")
    return target


def _mkdir(dest: Path, rel: PurePosixPath) -> None:
    _target(dest, rel).mkdir(parents=True, exist_ok=True)


def _write(dest: Path, rel: PurePosixPath, stream: IO[bytes], cap: int, budget: Budget) -> None:
    """Copy ``stream`` to ``dest/rel`` in chunks, refusing more than ``cap`` bytes."""
    target = _target(dest, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or target.is_symlink():
        raise UploadError(f"{rel}: appears twice in the archive")
    copied = 0
    with open(target, "xb") as out:
        while chunk := stream.read(CHUNK):
            copied += len(chunk)
            budget.take(len(chunk))
            if copied > cap:
                raise UploadError(f"{rel}: expands beyond its declared size (a zip bomb?)")
            out.write(chunk)


def _chmod(dest: Path, member: Member) -> None:
    _target(dest, member.path).chmod(0o755 if member.executable else 0o644)
