"""Checking an upload's manifest before it is stored, so the uploader sees mistakes at once."""

from __future__ import annotations

from typing import IO

from flask import current_app

from arena.checking import check_manifest, mib, size_refusal
from arena.uploads import MAX_MANIFEST_BYTES, UploadError, detect_kind, read_manifest
from web.extensions import db
from web.models import BotVersion, User
from web.services import bots


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


def too_large(size: int | None) -> str:
    """The refusal of an upload over ``MAX_CONTENT_LENGTH``, naming the limit (and the size,
    when the request said it)."""
    limit = int(current_app.config["MAX_CONTENT_LENGTH"])
    if size is not None and size > limit:
        return size_refusal(size, limit)
    return f"the upload is larger than the limit of {mib(limit)}"


def accept(owner: User, data: bytes, filename: str, manifest: str | None) -> BotVersion:
    """Check the manifest, then store a new version of the bot it names. Commits.

    The caller's transaction ends first: on SQLite it would hold the write lock while the
    archive is read, written and unpacked."""
    if not data:
        raise UploadError("the upload is empty")
    db.session.commit()
    parsed = check_manifest(manifest_text(data, manifest))
    upload = bots.Upload(data=data, filename=filename, manifest=manifest)
    return bots.submit(owner, parsed.name, upload)
