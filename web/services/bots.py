"""Bots and their uploads: an upload stored, unpacked and numbered as a new version.

What becomes of a version after its upload (build, self-test, validation, activation) is the
bot lifecycle's (``web.services.lifecycle``); this module reports each upload to it, accepted
or refused. Also: the project's sample bots, and packing a bot folder into an upload.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import HTTPException

from arena import checking
from arena.uploads import UnpackLimits, UploadError, unpack, write_single
from web.extensions import db
from web.models import Bot, BotStatus, BotVersion, User
from web.services import attempts, lifecycle
from web.storage import StorageUnavailable, get_storage

log = logging.getLogger(__name__)

SAMPLE_BOTS = checking.SAMPLE_BOTS
NOT_SAMPLES = checking.NOT_SAMPLES


@dataclass(frozen=True)
class Upload:
    """What an owner sent: an archive, or one source file and its manifest text."""

    data: bytes
    filename: str = "bot.zip"
    manifest: str | None = None


def unpack_limits() -> UnpackLimits:
    cfg = current_app.config
    return UnpackLimits(
        max_bytes=int(cfg["UPLOAD_MAX_BYTES"]),
        max_files=int(cfg["UPLOAD_MAX_FILES"]),
        max_ratio=int(cfg["UPLOAD_MAX_RATIO"]),
    )


def get_or_create_bot(owner_id: int, name: str) -> Bot:
    """The bot ``name`` of user ``owner_id``, created if missing (a racing upload may create it
    first)."""
    query = select(Bot).where(Bot.owner_id == owner_id, Bot.name == name)
    bot: Bot | None = db.session.scalar(query)
    if bot is not None:
        return bot
    try:
        with db.session.begin_nested():
            bot = Bot(owner_id=owner_id, name=name)
            db.session.add(bot)
    except IntegrityError:  # created by a concurrent upload since our read: use theirs
        bot = db.session.scalar(query)
        assert bot is not None
    return bot


def next_version_number(bot: Bot) -> int:
    """The number of the bot's next version, with the bot's row locked until the commit.

    Concurrent uploads of one bot queue on that lock (on SQLite, on the database's write lock
    taken by ``BEGIN IMMEDIATE``), so each sees the numbers the others committed.
    """
    db.session.execute(select(Bot.id).where(Bot.id == bot.id).with_for_update())
    numbers = select(func.max(BotVersion.number)).where(BotVersion.bot_id == bot.id)
    latest = db.session.scalar(numbers)
    return (latest or 0) + 1


def submit(owner: User, name: str, upload: Upload, *, trusted: bool = False) -> BotVersion:
    """Store and unpack a new version of ``owner``'s bot ``name``. Commits.

    A refused upload still becomes a version (``rejected``, with the reason) so its owner sees
    it; an accepted one is sent on to build and validation after the commit. If the storage
    cannot hold the upload, nothing is kept (no row, no file) and ``StorageFull`` is raised
    (``StorageUnreachable`` if the object store did not answer).

    No transaction is open while the files are written: the caller's is committed first (on
    SQLite every transaction holds the write lock), the archive is stored and unpacked into a
    scratch folder, and only then a short transaction creates the rows, numbers the version
    under the bot's row lock and moves the unpacked tree into the version's folder (a rename).
    """
    owner_id = owner.id
    deleted = select(Bot.id).where(
        Bot.owner_id == owner_id, Bot.name == name, Bot.status == BotStatus.DELETED
    )
    if db.session.scalar(deleted) is not None:
        raise UploadError(
            f"you deleted your bot {name!r}; its name stays with its matches: "
            "name the bot differently in bot.toml"
        )
    db.session.commit()
    stored = _Stored(hashlib.sha256(upload.data).hexdigest())
    try:
        digest = stored.archive(upload.data)
        refusal = _unpack(upload, stored)
        version = _record(owner_id, name, digest, trusted, stored, refusal)
        db.session.commit()
    except BaseException as exc:
        attempts.forget_transaction()
        stored.remove()
        failure = _storage_failure(exc)
        if failure is not None:
            log.error("upload of %s by %s not stored: %s", name, owner_id, exc)
            if isinstance(failure, StorageUnavailable):
                raise StorageUnreachable() from exc
            raise StorageFull() from exc
        raise
    finally:
        stored.drop_scratch()
    return version


class StorageFull(HTTPException):
    """The upload could not be stored (the disk is full or failing); nothing was kept."""

    code = 507
    description = "the server's storage is full; nothing was saved; try again later"


class StorageUnreachable(HTTPException):
    """The upload could not be stored (the object store did not answer); nothing was kept."""

    code = 503
    description = "the server's storage cannot be reached; nothing was saved; try again later"


class _Stored:
    """The files one upload added to the storage, removed again if the upload is not kept."""

    def __init__(self, sha256: str) -> None:
        self.sha256 = sha256
        self.created_archive = False
        self.scratch: Path | None = None
        self.unpacked: Path | None = None
        self.installed: int | None = None
        self.files = 0

    def archive(self, data: bytes) -> str:
        storage = get_storage()
        # The same bytes uploaded before: shared, kept.
        existed = storage.exists(storage.archive_key(self.sha256))
        digest = storage.put_archive(data)
        self.created_archive = not existed
        return digest

    def install(self, version_id: int) -> None:
        """Make the unpacked tree the version's files (a rename inside a storage folder)."""
        assert self.unpacked is not None
        self.installed = version_id
        get_storage().install_bot(self.unpacked, version_id)

    def drop_scratch(self) -> None:
        """Remove the scratch folder and whatever of it was not moved into place."""
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def remove(self) -> None:
        """Remove what this upload added (after the rollback); an archive in use stays."""
        storage = get_storage()
        in_use = select(BotVersion.id).where(BotVersion.sha256 == self.sha256)
        try:
            if self.created_archive and not self._quietly(lambda: db.session.scalar(in_use)):
                storage.delete(storage.archive_key(self.sha256))
            if self.installed is not None:
                storage.remove_bot(self.installed)
        except OSError as exc:  # the storage failed: what stays is unreferenced, never used
            log.warning("upload not kept; its files could not all be removed: %s", exc)
        self.drop_scratch()

    @staticmethod
    def _quietly(query: Any) -> Any:
        """The query's answer; True (keep the file) if the database cannot say."""
        try:
            return query()
        except attempts.DATABASE_ERRORS:
            attempts.forget_transaction()
            return True
        finally:
            db.session.rollback()


def _storage_failure(exc: BaseException) -> OSError | None:
    """The full or failing storage (disk or object store) behind ``exc``, if that is why."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in attempts.STORAGE_ERRNOS:
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _unpack(upload: Upload, stored: _Stored) -> str | None:
    """Unpack into a scratch folder of the storage; the reason if the archive is refused.

    Runs outside any transaction. A storage failure while unpacking is not the archive's
    fault: it propagates.
    """
    storage = get_storage()
    stored.scratch = scratch = storage.scratch_dir()
    try:
        if upload.manifest is not None:
            files = write_single(
                upload.filename, upload.data, upload.manifest, scratch, unpack_limits()
            )
        else:
            files = unpack(upload.data, scratch, unpack_limits())
    except UploadError as exc:
        if _storage_failure(exc) is not None:
            raise
        return f"upload refused: {exc}"
    stored.unpacked = checking.bot_root(scratch)
    stored.files = len(files)
    return None


def _record(
    owner_id: int, name: str, digest: str, trusted: bool, stored: _Stored, refusal: str | None
) -> BotVersion:
    """The version's rows, numbered under the bot's row lock; its unpacked tree moved in place."""
    bot = get_or_create_bot(owner_id, name)
    version = BotVersion(
        bot_id=bot.id, number=next_version_number(bot), sha256=digest, trusted=trusted
    )
    db.session.add(version)
    db.session.flush()
    if refusal is not None:
        lifecycle.reject(version, refusal)
        return version
    stored.install(version.id)
    lifecycle.accept(version, stored.files)
    return version


def resume(bot: Bot) -> None:
    """Let a paused bot play again (its owner fixed it elsewhere). Commits."""
    bot.status, bot.paused_reason, bot.consecutive_failures = BotStatus.ACTIVE, None, 0
    db.session.commit()


def register_folder(owner: User, folder: Path, *, trusted: bool = False) -> BotVersion:
    """Register a bot from a folder on the server (admin, embedded demo): pack and submit it."""
    from arena.bots import load_bot

    manifest = load_bot(folder)
    return submit(owner, manifest.name, Upload(data=pack_folder(folder)), trusted=trusted)


def pack_folder(folder: Path) -> bytes:
    """A deterministic zip of a bot folder (caches and hidden files left out)."""
    return checking.pack(folder)


def sample_bot_folders(
    games: Sequence[str] | None = None, languages: Sequence[str] | None = None
) -> list[Path]:
    """The project's own sample bots (folders with ``bot.toml``), optionally only those for
    some games, or in some languages."""
    return checking.sample_bot_folders(games, languages)
