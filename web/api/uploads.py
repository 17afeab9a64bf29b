"""Checking an upload's manifest before it is stored, so the uploader sees mistakes at once."""

from __future__ import annotations

import io
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from arena.bots import MANIFEST, BotManifest, ManifestError, load_bot
from web.models import BotVersion, User
from web.services import bots
from web.services.uploads import UploadError, detect_kind

MAX_MANIFEST_BYTES = 64 * 1024


def manifest_part(text: str | None, part: IO[bytes] | None) -> str | None:
    """The manifest sent beside a single file, as a text field (``-F manifest='...'``) or a
    file part (``-F manifest=@bot.toml``); None if neither. ``UploadError`` if both are given,
    or the file is not UTF-8 text of at most ``MAX_MANIFEST_BYTES``."""
    if part is None:
        return text
    if text is not None:
        raise UploadError("give the manifest once: as a text field or as a file, not both")
    data = part.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise UploadError(f"the manifest is over {MAX_MANIFEST_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UploadError("the manifest file is not UTF-8 text (a bot.toml is)") from None


def manifest_text(data: bytes, manifest: str | None) -> str:
    """The ``bot.toml`` of an upload: the text given with a single file, or the archive's own."""
    if manifest is not None:
        return manifest
    kind = detect_kind(data)
    try:
        if kind == "zip":
            return _from_zip(data)
        if kind == "tar":
            return _from_tar(data)
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
        raise UploadError(f"the archive cannot be read: {exc}") from exc
    raise UploadError(
        "not a zip or tar.gz archive; to upload a single source file, give its manifest too"
    )


def _is_manifest(name: str) -> bool:
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("", ".")]
    return len(parts) in (1, 2) and parts[-1] == MANIFEST


def _from_zip(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in sorted(archive.infolist(), key=lambda i: i.filename.count("/")):
            if _is_manifest(info.filename) and info.file_size <= MAX_MANIFEST_BYTES:
                return archive.read(info).decode("utf-8", errors="replace")
    raise UploadError(f"the archive has no {MANIFEST} at its top level")


def _from_tar(data: bytes) -> str:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for info in archive:
            if info.isfile() and _is_manifest(info.name) and info.size <= MAX_MANIFEST_BYTES:
                stream = archive.extractfile(info)
                if stream is not None:
                    return stream.read().decode("utf-8", errors="replace")
    raise UploadError(f"the archive has no {MANIFEST} at its top level")


def check_manifest(text: str) -> BotManifest:
    """Parse and check manifest text the way the engine will; ``UploadError`` if it is wrong."""
    with tempfile.TemporaryDirectory(prefix="manifest-") as folder:
        (Path(folder) / MANIFEST).write_text(text, encoding="utf-8")
        try:
            return load_bot(folder)
        except ManifestError as exc:
            raise UploadError(str(exc).replace(str(Path(folder).resolve()) + "/", "")) from exc


def accept(owner: User, data: bytes, filename: str, manifest: str | None) -> BotVersion:
    """Check the manifest, then store a new version of the bot it names. Commits."""
    if not data:
        raise UploadError("the upload is empty")
    parsed = check_manifest(manifest_text(data, manifest))
    upload = bots.Upload(data=data, filename=filename, manifest=manifest)
    return bots.submit(owner, parsed.name, upload)
