"""Checking an upload's manifest before it is stored, so the uploader sees mistakes at once."""

from __future__ import annotations

import tempfile
from pathlib import Path

from arena.bots import MANIFEST, BotManifest, ManifestError, load_bot
from web.models import BotVersion, User
from web.services import bots
from web.services.uploads import UploadError, detect_kind, read_manifest


def manifest_text(data: bytes, manifest: str | None) -> str:
    """The ``bot.toml`` of an upload: the text given with a single file, or the archive's own.

    An archive is read whole under the unpacking limits (bytes, entries, paths, time) before
    anything of it is stored, so a bomb is refused here with a clear message.
    """
    if manifest is not None:
        return manifest
    if detect_kind(data) == "file":
        raise UploadError(
            "not a zip or tar.gz archive; to upload a single source file, give its manifest too"
        )
    return read_manifest(data, bots.unpack_limits())


def check_manifest(text: str) -> BotManifest:
    """Parse and check manifest text the way the engine will; ``UploadError`` if it is wrong."""
    with tempfile.TemporaryDirectory(prefix="manifest-") as folder:
        (Path(folder) / MANIFEST).write_text(text, encoding="utf-8")
        try:
            return load_bot(folder)
        except ManifestError as exc:
            message = str(exc)
            for path in (str(Path(folder).resolve()), folder):
                message = message.replace(path + "/", "").replace(path, "the bot folder")
            raise UploadError(message) from None


def accept(owner: User, data: bytes, filename: str, manifest: str | None) -> BotVersion:
    """Check the manifest, then store a new version of the bot it names. Commits."""
    if not data:
        raise UploadError("the upload is empty")
    parsed = check_manifest(manifest_text(data, manifest))
    upload = bots.Upload(data=data, filename=filename, manifest=manifest)
    return bots.submit(owner, parsed.name, upload)
