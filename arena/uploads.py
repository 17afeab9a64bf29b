"""Unpacking uploaded bots safely: zip, tar (plain, gz, bz2, xz), or one file plus a manifest.

An archive is refused, with a message its owner can act on, if it holds a link, a device, an
absolute or ``..`` path, a path too deep or too long, too many files, too many bytes, or members
that expand far beyond their packed size (a zip bomb), or if reading it takes too long. Sizes are
checked while streaming, never trusted from the headers alone; the member count and declared
sizes are checked before the first byte is written; every file is written inside the destination
folder through a path checked against it. Messages name the member, never a server path.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import stat
import struct
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

CHUNK = 64 * 1024
MANIFEST = "bot.toml"
MAX_MANIFEST_BYTES = 64 * 1024
MAX_UPLOAD_BYTES = 32 * 1024 * 1024
"""Largest upload (the packed archive) the server takes by default (``MAX_CONTENT_LENGTH``)."""
READ_ERRORS = (
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    RuntimeError,
    OSError,
    EOFError,
    ValueError,
)
"""What reading a damaged archive may raise (zlib, lzma and unsupported methods included)."""


class UploadError(ValueError):
    """The upload cannot be accepted; the message says why, for the bot's owner.

    ``problems`` lists each problem on its own (a manifest may have several)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems: list[str] = problems if problems else [message]


@dataclass(frozen=True)
class UnpackLimits:
    """How big an upload may be once unpacked, and how long reading it may take."""

    max_bytes: int = 64 * 1024 * 1024
    max_files: int = 2000
    max_ratio: int = 100
    """Largest allowed unpacked/packed size ratio of a member (or of the whole archive)."""
    max_seconds: float = 10.0
    max_depth: int = 24
    """Most folders a member's path may go down."""
    max_path: int = 512
    """Longest member path, in bytes (each part at most 255, as file systems allow)."""


@dataclass(frozen=True)
class Member:
    """One regular file or folder of an archive, already checked."""

    path: PurePosixPath
    is_dir: bool
    declared_size: int
    packed_size: int
    executable: bool


class Readable(Protocol):
    """A stream of bytes read in chunks (an archive member, an in-memory buffer)."""

    def read(self, size: int = -1, /) -> bytes: ...


Visit = Callable[[Member, Readable | None], None]
"""Called for each member in archive order, with a stream of its bytes (None for a folder)."""


class Deadline:
    """Refuses the upload once reading it has taken longer than allowed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.end:
            raise UploadError(f"reading the archive took longer than {self.seconds:g} s")


class Budget:
    """Bytes left for the whole archive, consumed while streaming."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise UploadError("the archive unpacks to more than the allowed size")


def detect_kind(data: bytes) -> str:
    """``"zip"``, ``"tar"`` or ``"file"`` from the content (never from the file name)."""
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return "zip"
    if data[:2] == b"\x1f\x8b" or data[:3] == b"BZh" or data[:6] == b"\xfd7zXZ\x00":
        return "tar"
    if len(data) > 262 and data[257:262] == b"ustar":
        return "tar"
    return "file"


def safe_member_path(name: str, limits: UnpackLimits | None = None) -> PurePosixPath:
    """The relative path of an archive member; ``UploadError`` for absolute, escaping, too deep
    or too long paths."""
    limits = limits or UnpackLimits()
    shown = repr(name[:200] + "..." if len(name) > 200 else name)
    cleaned = name.replace("\\", "/")
    path = PurePosixPath(cleaned)
    if cleaned.startswith("/") or (len(cleaned) > 1 and cleaned[1] == ":"):
        raise UploadError(f"{shown}: absolute paths are not allowed in a bot archive")
    if any(part == ".." for part in path.parts):
        raise UploadError(f"{shown}: '..' in a path would write outside the bot folder")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts:
        raise UploadError(f"{shown}: empty member name")
    if any(ord(ch) < 0x20 for ch in cleaned):
        raise UploadError(f"{shown}: control characters are not allowed in file names")
    size = len("/".join(parts).encode("utf-8", "surrogateescape"))
    longest = max(len(p.encode("utf-8", "surrogateescape")) for p in parts)
    if size > limits.max_path or longest > 255:
        raise UploadError(f"{shown}: the path is longer than {limits.max_path} bytes")
    if len(parts) > limits.max_depth:
        raise UploadError(f"{shown}: folders nest deeper than {limits.max_depth} levels")
    return PurePosixPath(*parts)


def walk(data: bytes, limits: UnpackLimits, visit: Visit) -> None:
    """Check an archive whole (entries, sizes, paths), then stream each member to ``visit``."""
    deadline = Deadline(limits.max_seconds)
    kind = detect_kind(data)
    if kind == "zip":
        _walk_zip(data, limits, deadline, _Tree(visit, deadline))
    elif kind == "tar":
        _walk_tar(data, limits, deadline, _Tree(visit, deadline))
    else:
        raise UploadError(
            "not a zip or tar.gz archive (upload a single file with a manifest instead)"
        )


def unpack(data: bytes, dest: Path, limits: UnpackLimits) -> list[PurePosixPath]:
    """Unpack an archive's bytes into the empty folder ``dest``; the files written."""
    written: list[PurePosixPath] = []
    budget = Budget(limits.max_bytes)

    def visit(member: Member, stream: Readable | None) -> None:
        if stream is None:
            _mkdir(dest, member.path)
            return
        _write(dest, member.path, stream, _member_cap(member, limits), budget)
        _chmod(dest, member)
        written.append(member.path)

    try:
        walk(data, limits, visit)
    except UploadError as exc:
        raise UploadError(_without_paths(str(exc), dest)) from None
    return written


def read_manifest(data: bytes, limits: UnpackLimits) -> str:
    """The ``bot.toml`` of an archive, after reading the whole archive under ``limits``.

    Nothing is written: this is the check an upload passes before it is stored. The manifest
    is the top-level one, else the one inside the archive's single top-level folder.
    """
    found: dict[PurePosixPath, bytes] = {}
    deeper: list[PurePosixPath] = []
    budget = Budget(limits.max_bytes)

    def visit(member: Member, stream: Readable | None) -> None:
        if stream is None:
            return
        if member.path.name == MANIFEST:
            deeper.append(member.path)
        keep = member.path.name == MANIFEST and len(member.path.parts) <= 2
        sink = bytearray() if keep and member.declared_size <= MAX_MANIFEST_BYTES else None
        _drain(member.path, stream, _member_cap(member, limits), budget, sink)
        if sink is not None:
            found[member.path] = bytes(sink)

    walk(data, limits, visit)
    text = found.get(PurePosixPath(MANIFEST))
    if text is None:
        nested = [path for path in found if len(path.parts) == 2]
        text = found[nested[0]] if len(nested) == 1 else None
    if text is None:
        raise UploadError(f"the archive has no {MANIFEST} at its top level{_found_at(deeper)}")
    return text.decode("utf-8", errors="replace")


def write_single(
    filename: str, content: bytes, manifest: str, dest: Path, limits: UnpackLimits
) -> list[PurePosixPath]:
    """A one-file bot: ``filename`` plus the manifest text as ``bot.toml``."""
    path = safe_member_path(filename, limits)
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


def _found_at(paths: list[PurePosixPath]) -> str:
    """``" (found at mybot/bot.toml: zip the folder's contents)"``, naming the shallowest
    manifest deeper in the archive; empty if there is none."""
    if not paths:
        return ""
    where = min(paths, key=lambda p: (len(p.parts), str(p)))
    shown = str(where) if len(str(where)) <= 200 else str(where)[:200] + "..."
    folder = str(where.parent) if len(str(where.parent)) <= 200 else "its folder"
    more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
    return f" (found at {shown}{more}: zip the contents of {folder}, not the folder itself)"


class _Tree:
    """Passes members on to a visitor, refusing one path twice or a file used as a folder."""

    def __init__(self, visit: Visit, deadline: Deadline) -> None:
        self.visit, self.deadline = visit, deadline
        self.files: set[PurePosixPath] = set()
        self.dirs: set[PurePosixPath] = set()

    def __call__(self, member: Member, stream: Readable | None) -> None:
        self.deadline.check()
        path = member.path
        if path in self.files:
            raise UploadError(f"{path}: appears twice in the archive")
        if not member.is_dir and path in self.dirs:
            raise UploadError(f"{path}: is both a file and a folder in the archive")
        for parent in path.parents:
            if parent in self.files:
                raise UploadError(f"{path}: {parent} is a file, not a folder")
            self.dirs.add(parent)
        (self.dirs if member.is_dir else self.files).add(path)
        self.visit(member, stream)


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


def _reason(exc: BaseException) -> str:
    """What went wrong, without the file name an ``OSError`` may carry."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _without_paths(message: str, dest: Path) -> str:
    """A last guard: no server path in a message meant for the uploader."""
    for folder in {str(dest.resolve()), str(dest)}:
        message = message.replace(folder + "/", "").replace(folder, "the bot folder")
    return message


# --- zip ------------------------------------------------------------------------------------


def _zip_member(info: zipfile.ZipInfo, limits: UnpackLimits) -> Member:
    path = safe_member_path(info.filename, limits)
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


def _central_directory_size(data: bytes) -> int:
    """The size the zip's end record gives its central directory (0 if there is no record)."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65_535))
    if end < 0 or len(data) < end + 22:
        return 0
    (size,) = struct.unpack("<I", data[end + 12 : end + 16])
    locator = end - 20
    if size == 0xFFFFFFFF and locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":
        (record,) = struct.unpack("<Q", data[locator + 8 : locator + 16])
        if data[record : record + 4] == b"PK\x06\x06":
            (size,) = struct.unpack("<Q", data[record + 40 : record + 48])
    return int(size)


def _walk_zip(data: bytes, limits: UnpackLimits, deadline: Deadline, visit: Visit) -> None:
    # Each entry of the central directory costs memory once parsed: refuse a directory far
    # larger than max_files entries with names of max_path bytes could need, before parsing.
    if _central_directory_size(data) > limits.max_files * (limits.max_path + 512):
        raise UploadError(f"the archive holds more than {limits.max_files} entries")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except READ_ERRORS as exc:
        raise UploadError(f"not a readable zip archive: {_reason(exc)}") from None
    if len(infos) > limits.max_files:
        raise UploadError(
            f"the archive holds {len(infos)} entries; the limit is {limits.max_files}"
        )
    members = [_zip_member(info, limits) for info in infos]
    _check_counts(members, len(data), limits)
    for info, member in zip(infos, members, strict=True):
        deadline.check()
        if member.is_dir:
            visit(member, None)
            continue
        try:
            with archive.open(info) as stream:
                visit(member, _Timed(stream, deadline))
        except UploadError:
            raise
        except READ_ERRORS as exc:
            raise UploadError(f"{member.path}: corrupt member: {_reason(exc)}") from None


# --- tar ------------------------------------------------------------------------------------


def _tar_member(info: tarfile.TarInfo, limits: UnpackLimits) -> Member:
    path = safe_member_path(info.name, limits)
    if info.issym():
        raise UploadError(f"{path}: symbolic links are not allowed in a bot archive")
    if info.islnk():
        raise UploadError(f"{path}: hard links are not allowed in a bot archive")
    if info.ischr() or info.isblk() or info.isfifo() or info.isdev():
        raise UploadError(f"{path}: device files and pipes are not allowed")
    if not (info.isfile() or info.isdir()):
        raise UploadError(f"{path}: only regular files and folders are allowed")
    return Member(
        path=path,
        is_dir=info.isdir(),
        declared_size=info.size,
        packed_size=info.size,
        executable=bool(info.mode & 0o111),
    )


def _tar_infos(
    archive: tarfile.TarFile, limits: UnpackLimits, deadline: Deadline
) -> list[tarfile.TarInfo]:
    infos = []
    for info in archive:
        deadline.check()
        infos.append(info)
        if len(infos) > limits.max_files:
            raise UploadError(f"the archive holds more than {limits.max_files} entries")
    return infos


def _walk_tar(data: bytes, limits: UnpackLimits, deadline: Deadline, visit: Visit) -> None:
    plain = _decompressed(data, limits, deadline)
    try:
        archive = tarfile.open(fileobj=io.BytesIO(plain), mode="r:")  # noqa: SIM115 (in memory)
        infos = _tar_infos(archive, limits, deadline)
    except UploadError:
        raise
    except READ_ERRORS as exc:
        raise UploadError(f"not a readable tar archive: {_reason(exc)}") from None
    members = [_tar_member(info, limits) for info in infos]
    _check_counts(members, 0, limits)
    for info, member in zip(infos, members, strict=True):
        try:
            stream = None if member.is_dir else archive.extractfile(info)
            if stream is None and not member.is_dir:
                raise UploadError(f"{member.path}: cannot be read")
            visit(member, _Timed(stream, deadline) if stream is not None else None)
        except UploadError:
            raise
        except READ_ERRORS as exc:
            raise UploadError(f"{member.path}: corrupt member: {_reason(exc)}") from None


def _opener(data: bytes) -> Callable[[io.BytesIO], io.BufferedIOBase] | None:
    """How to decompress ``data`` (gzip, bzip2 or xz), or None for a plain tar."""
    if data[:2] == b"\x1f\x8b":
        return lambda raw: gzip.GzipFile(fileobj=raw)
    if data[:3] == b"BZh":
        return bz2.BZ2File
    if data[:6] == b"\xfd7zXZ\x00":
        return lzma.LZMAFile
    return None


def _decompressed(data: bytes, limits: UnpackLimits, deadline: Deadline) -> bytes:
    """The tar bytes, decompressed in chunks and refused once past the size limit, past the
    allowed ratio or past the deadline (compression bombs)."""
    opener = _opener(data)
    if opener is None:
        return data
    cap = limits.max_bytes + 1024 * 1024 + limits.max_files * 1024
    out = bytearray()
    try:
        with opener(io.BytesIO(data)) as stream:
            while chunk := stream.read(CHUNK):
                out += chunk
                deadline.check()
                if len(out) > cap:
                    raise UploadError(
                        f"{_last_member(out)}the archive decompresses to more than the allowed "
                        f"size ({limits.max_bytes} bytes)"
                    )
    except UploadError:
        raise
    except READ_ERRORS as exc:
        raise UploadError(f"not a readable compressed stream: {_reason(exc)}") from None
    ratio = len(out) / max(len(data), 1)
    if len(out) > 1024 * 1024 and ratio > limits.max_ratio:
        raise UploadError(
            f"{_last_member(out)}the archive expands {int(ratio)}x (limit {limits.max_ratio}x): "
            "it looks like a zip bomb"
        )
    return bytes(out)


def _last_member(partial: bytes | bytearray) -> str:
    """``"name: "`` of the member a cut-off tar stream ends in (to name it in a message)."""
    last = None
    try:
        with tarfile.open(fileobj=io.BytesIO(partial), mode="r:") as archive:
            for info in archive:
                last = info.name
    except READ_ERRORS:
        pass
    if last is None:
        return ""
    return (repr(last[:200] + "...") if len(last) > 200 else repr(last)) + ": "


# --- reading and writing inside the destination only ---------------------------------------


class _Timed:
    """A member's stream that checks the deadline on every read."""

    def __init__(self, stream: Readable, deadline: Deadline) -> None:
        self.stream, self.deadline = stream, deadline

    def read(self, size: int = -1, /) -> bytes:
        self.deadline.check()
        return self.stream.read(size)


def _drain(
    rel: PurePosixPath, stream: Readable, cap: int, budget: Budget, sink: bytearray | None
) -> None:
    """Read ``stream`` through, refusing more than ``cap`` bytes; keep them in ``sink`` if any."""
    copied = 0
    while chunk := stream.read(CHUNK):
        copied += len(chunk)
        budget.take(len(chunk))
        if copied > cap:
            raise UploadError(f"{rel}: expands beyond its declared size (a zip bomb?)")
        if sink is not None:
            sink += chunk


def _target(dest: Path, rel: PurePosixPath) -> Path:
    root = dest.resolve()
    target = (root / Path(*rel.parts)).resolve()
    if not target.is_relative_to(root) or target == root:
        raise UploadError(f"{rel}: resolves outside the bot folder")
    return target


def _mkdir(dest: Path, rel: PurePosixPath) -> None:
    try:
        _target(dest, rel).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UploadError(f"{rel}: the folder cannot be made: {_reason(exc)}") from None


def _write(dest: Path, rel: PurePosixPath, stream: Readable, cap: int, budget: Budget) -> None:
    """Copy ``stream`` to ``dest/rel`` in chunks, refusing more than ``cap`` bytes."""
    target = _target(dest, rel)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() or target.is_symlink():
            raise UploadError(f"{rel}: appears twice in the archive")
        with open(target, "xb") as out:
            copied = 0
            while chunk := stream.read(CHUNK):
                copied += len(chunk)
                budget.take(len(chunk))
                if copied > cap:
                    raise UploadError(f"{rel}: expands beyond its declared size (a zip bomb?)")
                out.write(chunk)
    except OSError as exc:
        raise UploadError(f"{rel}: cannot be written: {_reason(exc)}") from None


def _chmod(dest: Path, member: Member) -> None:
    _target(dest, member.path).chmod(0o755 if member.executable else 0o644)
