"""The bot lifecycle: upload -> unpack -> build -> self-test -> validation match -> ladders.

Each stage writes what it saw into the version's logs, so an owner whose upload was refused can
read why. A version joins its ladders only after all stages pass; it then keeps the bot's mu and
starts again with a wider sigma.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from werkzeug.exceptions import HTTPException

from web import engine
from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    BotVersion,
    Match,
    MatchKind,
    MatchStatus,
    User,
    VersionStatus,
    utcnow,
)
from web.services import attempts, ladders, preparing, ratings
from web.services.queue import after_commit, send_task
from web.services.uploads import UnpackLimits, UploadError, unpack, write_single
from web.storage import get_storage

log = logging.getLogger(__name__)

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
NOT_SAMPLES = frozenset({"kit", "broken", "hostile"})
"""Folders of ``sample_bots`` that hold helper kits or deliberately misbehaving test bots."""


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
    cannot hold the upload, nothing is kept (no row, no file) and ``StorageFull`` is raised.

    No transaction is open while the files are written: the caller's is committed first (on
    SQLite every transaction holds the write lock), the archive is stored and unpacked into a
    scratch folder, and only then a short transaction creates the rows, numbers the version
    under the bot's row lock and moves the unpacked tree into the version's folder (a rename).
    """
    owner_id = owner.id
    db.session.commit()
    stored = _Stored(get_storage().archive_path(hashlib.sha256(upload.data).hexdigest()))
    try:
        digest = stored.archive(upload.data)
        refusal = _unpack(upload, stored)
        version = _record(owner_id, name, digest, trusted, stored, refusal)
        db.session.commit()
    except BaseException as exc:
        attempts.forget_transaction()
        stored.remove()
        if _storage_failure(exc):
            log.error("upload of %s by %s not stored: %s", name, owner_id, exc)
            raise StorageFull() from exc
        raise
    finally:
        stored.drop_scratch()
    return version


class StorageFull(HTTPException):
    """The upload could not be stored (the disk is full or failing); nothing was kept."""

    code = 507
    description = "the server's storage is full; nothing was saved; try again later"


class _Stored:
    """The files one upload added to the storage, removed again if the upload is not kept."""

    def __init__(self, archive_path: Path) -> None:
        self.archive_path = archive_path
        self.created_archive = False
        self.scratch: Path | None = None
        self.unpacked: Path | None = None
        self.folder: Path | None = None
        self.files = 0

    def archive(self, data: bytes) -> str:
        existed = self.archive_path.exists()  # the same bytes uploaded before: shared, kept
        digest = get_storage().put_archive(data)
        self.created_archive = not existed
        return digest

    def install(self, version_id: int) -> None:
        """Move the unpacked tree to the version's folder (a rename inside the storage)."""
        assert self.unpacked is not None
        self.folder = get_storage().bot_dir(version_id)
        get_storage().install_dir(self.unpacked, version_id)

    def drop_scratch(self) -> None:
        """Remove the scratch folder and whatever of it was not moved into place."""
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def remove(self) -> None:
        """Remove what this upload added (after the rollback); an archive in use stays."""
        in_use = select(BotVersion.id).where(BotVersion.sha256 == self.archive_path.name)
        if self.created_archive and not self._quietly(lambda: db.session.scalar(in_use)):
            self.archive_path.unlink(missing_ok=True)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
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


def _storage_failure(exc: BaseException) -> bool:
    """True if ``exc`` (or an error it was raised from) is a full or failing storage disk."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in attempts.STORAGE_ERRNOS:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


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
        if _storage_failure(exc):
            raise
        return f"upload refused: {exc}"
    stored.unpacked = _bot_root(scratch)
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
        _reject(version, refusal)
        return version
    stored.install(version.id)
    version.build_log = f"unpacked {stored.files} files\n"
    after_commit(_sender("web.tasks.prepare_version", version.id))
    return version


def _sender(task: str, *args: Any) -> Any:
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def send() -> None:
        with app.app_context():
            send_task(task, *args)

    return send


def _bot_root(scratch: Path) -> Path:
    """The folder holding ``bot.toml``: the archive root, or its single top-level folder."""
    entries = list(scratch.iterdir())
    if not (scratch / "bot.toml").exists() and len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return scratch


def _reject(version: BotVersion, reason: str) -> None:
    version.status = VersionStatus.REJECTED
    version.error = reason
    log.info("bot version %s rejected: %s", version.id, reason)


# --- build and self-test (run by a worker) -------------------------------------------------


def prepare(version_id: int) -> VersionStatus:
    """Read the manifest, build, self-test; then validate by a match or activate. Commits.

    Runs under a claim (``web.services.preparing``): a platform fault gives the claim back to
    be tried again later; only the bot's own faults reject the version.
    """
    attempt = preparing.claim(version_id)
    if attempt is None:
        version = db.session.get(BotVersion, version_id)
        status = version.status if version else VersionStatus.REJECTED
        db.session.rollback()
        return status
    work = _detached_copy(version_id)  # no transaction stays open during the build
    try:
        with preparing.leased(version_id, attempt):
            _stages(work)
    except Exception as exc:
        fault = _fault_of(exc)
        if fault.platform:
            log.warning("version %s: preparing it met a platform fault: %s", version_id, exc)
            attempts.forget_transaction()
            attempts.patiently(
                lambda: preparing.give_back(version_id, attempt, fault.message),
                f"version {version_id}: giving the claim back",
            )
            return VersionStatus.UPLOADED
        _reject(work, fault.message)
    return attempts.patiently(
        lambda: _conclude(version_id, attempt, work), f"version {version_id}: concluding"
    )


def _detached_copy(version_id: int) -> BotVersion:
    """The version's columns in an object of no session, for the stages to record on."""
    row = db.session.get(BotVersion, version_id)
    assert row is not None
    copy = BotVersion(**{c.key: getattr(row, c.key) for c in BotVersion.__table__.columns})
    db.session.rollback()
    return copy


def _stages(version: BotVersion) -> None:
    """The stages, recorded on the (detached) version; ``_StageFailed`` rejects it."""
    try:
        manifest = engine.load_manifest(get_storage().bot_dir(version.id))
        record_manifest(version, manifest)
        db.session.commit()  # no transaction stays open while the bot builds or is tested
        _build(version, manifest)
        _selftest(version, manifest)
    except _StageFailed as exc:
        _reject(version, str(exc))


def _fault_of(exc: Exception) -> attempts.Fault:
    """Whose fault stopped the stages: the platform's (tried again) or the bot's (rejected)."""
    from sandbox import SandboxError

    if isinstance(exc, SandboxError):
        return attempts.Fault(True, f"sandbox failure: {exc}")
    code = _storage_errno(exc)
    if code is not None:
        why = attempts.describe_os_error(OSError(code, ""))
        return attempts.Fault(
            True, f"could not write to the storage folder {get_storage().root}: {why}"
        )
    return attempts.classify(exc)


def _storage_errno(exc: BaseException) -> int | None:
    """The errno of a full or failing disk behind ``exc`` (a copy's ``shutil.Error`` too)."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list):
        for entry in exc.args[0]:
            found = re.search(r"\[Errno (\d+)\]", str(entry[-1]) if entry else "")
            if found and int(found.group(1)) in attempts.STORAGE_ERRNOS:
                return int(found.group(1))
    if isinstance(exc, OSError) and exc.errno in attempts.STORAGE_ERRNOS:
        return exc.errno
    return None


FIELDS = ("manifest", "games", "language", "build_log", "validation_log", "status", "error")
"""What the stages record on a version."""


def _conclude(version_id: int, attempt: int, work: BotVersion) -> VersionStatus:
    """Write what the stages found, while the claim holds; validate or activate. Commits."""
    version = preparing.held(version_id, attempt)
    if version is None:
        return VersionStatus.BUILDING
    for name in FIELDS:
        setattr(version, name, getattr(work, name))
    if version.status == VersionStatus.REJECTED:
        db.session.commit()
        return version.status
    version.error = None
    return _start_validation(version)


class _StageFailed(Exception):
    """A lifecycle stage refused the version; the message is for its owner."""


def record_manifest(version: BotVersion, manifest: Any) -> None:
    version.manifest = {
        "name": manifest.name,
        "games": list(manifest.games),
        "language": manifest.language,
        "run": list(manifest.run),
        "build": list(manifest.build) if manifest.build else None,
    }
    version.games = list(manifest.games)
    version.language = manifest.language


def _build(version: BotVersion, manifest: Any) -> None:
    """Run the build step on a private copy; on success the built tree becomes the version's.

    The stored archive (the version's SHA-256) stays the upload as sent; the version's folder
    is replaced by the built tree in two renames, so it is always either the upload or the
    whole build. A failed or stopped build leaves the upload's folder as it was.
    """
    from sandbox.build import build_copy

    if not manifest.build:
        version.build_log += "no build step\n"
        return
    limit = float(current_app.config["BUILD_TIMEOUT"])
    storage = get_storage()
    scratch = storage.scratch_dir()
    sandbox, folder = engine.sandbox_for(version.trusted), storage.bot_dir(version.id)
    db.session.commit()
    try:
        built = scratch / "built"
        sandbox = engine.sandbox_for(version.trusted)
        result = build_copy(
            sandbox,
            manifest.path,
            built,
            list(manifest.build),
            timeout_s=limit,
            slot=engine.build_slot(),
        )
        version.build_log += result.log
        if result.timed_out:
            raise _StageFailed(f"the build step took longer than {limit:g} s and was stopped")
        if not result.ok:
            raise _StageFailed(
                f"the build step failed (exit status {result.returncode}); see the build log"
            )
        _replace_folder(folder, built, scratch / "upload")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _replace_folder(folder: Path, built: Path, aside: Path) -> None:
    """Put ``built`` in the place of ``folder``, whose old tree goes to ``aside``."""
    os.replace(folder, aside)
    os.replace(built, folder)
    # The sandbox runs bots as unprivileged users: they must be able to read their folder.
    folder.chmod(0o755)


def _selftest(version: BotVersion, manifest: Any) -> None:
    from web.services.selftest import run_selftest

    sandbox = engine.sandbox_for(version.trusted)
    timeout = float(current_app.config["SELFTEST_TIMEOUT"])
    logs = []
    db.session.commit()
    for game in manifest.games:
        report = run_selftest(sandbox, manifest, game, timeout=timeout)
        logs.append(f"== protocol self-test: {game}\n{report.log}")
        if not report.passed:
            version.validation_log = "\n".join(logs)
            hint = f" (hint: {report.hint})" if report.hint else ""
            raise _StageFailed(
                f"the protocol self-test failed for {game}; see the validation log{hint}"
            )
    version.status = VersionStatus.VALIDATING
    version.validation_log = "\n".join(logs) + "\n"


# --- validation match ----------------------------------------------------------------------


def _start_validation(version: BotVersion) -> VersionStatus:
    """Queue a validation match against sample bots, or activate at once if none can be set up."""
    match = None
    if current_app.config["VALIDATION_MATCH"] and not version.trusted:
        match = _create_validation_match(version)
    if match is None:
        version.validation_log += "no validation match (none configured or no opponents)\n"
        activate(version)
    db.session.commit()
    return version.status


def _create_validation_match(version: BotVersion) -> Match | None:
    from web.services.matches import create_match

    game = version.games[0]
    ladder = ladders.default_ladder(game)
    opponents = _sample_opponents(game, ladder.players - 1, exclude=version.bot_id)
    if len(opponents) < ladder.players - 1:
        return None
    match = create_match(
        ladder.game_config(),
        [version, *opponents],
        kind=MatchKind.VALIDATION,
        rated=False,
    )
    version.validation_log += f"validation match {match.id} queued against sample bots\n"
    return match


def _sample_opponents(game: str, count: int, exclude: int) -> list[BotVersion]:
    """Active versions of house (sample) bots playing ``game``, repeated if there are too few."""
    rows = db.session.scalars(
        select(BotVersion)
        .join(Bot)
        .join(User)
        .where(
            User.is_house.is_(True),
            BotVersion.status == VersionStatus.ACTIVE,
            Bot.id != exclude,
        )
        .order_by(BotVersion.id)
    ).all()
    pool = [v for v in rows if game in (v.games or [])]
    return [pool[i % len(pool)] for i in range(count)] if pool else []


def validation_match_finished(match: Match) -> None:
    """Activate or reject the version that played validation match ``match``. Commits."""
    seat = match.seats[0]
    version = db.session.get(BotVersion, seat.bot_version_id)
    if version is None or version.status != VersionStatus.VALIDATING:
        return
    outcome = match.outcome or {}
    status = (outcome.get("status") or ["?"])[0]
    forfeited = (outcome.get("forfeited") or [True])[0]
    version.validation_log += (
        f"validation match {match.id}: status {status}, place {seat.place}"
        f"{', forfeited' if forfeited else ''}\n"
    )
    if match.status == MatchStatus.FINISHED and status == "ok" and not forfeited:
        activate(version)
    elif match.status == MatchStatus.FAILED:
        _reject(version, f"the validation match could not be played: {match.error}")
    else:
        message = (outcome.get("messages") or [None])[0] or ""
        hint = _silence_hint(version, status, message)
        _reject(version, f"the validation match ended with status {status!r}: {message}{hint}")
    db.session.commit()


def _silence_hint(version: BotVersion, status: str, message: str) -> str:
    """`` (hint: ...)`` when the bot said nothing in time (its output may sit in a buffer)."""
    from arena.bots import BotManifest, flush_hint

    if status != "timeout" and "(timeout)" not in message:
        return ""
    recorded = version.manifest or {}
    manifest = BotManifest(
        path=Path("."),
        name=str(recorded.get("name", "")),
        games=tuple(version.games or ()),
        language=str(version.language or recorded.get("language", "")),
        run=tuple(str(word) for word in recorded.get("run") or ()),
    )
    return f" (hint: {flush_hint(manifest)})"


def activate(version: BotVersion) -> None:
    """Make ``version`` the bot's playing version on every ladder of its games."""
    bot = db.session.get(Bot, version.bot_id)
    assert bot is not None
    for older in bot.versions:
        if older.id != version.id and older.status == VersionStatus.ACTIVE:
            older.status = VersionStatus.RETIRED
    first = all(v.status != VersionStatus.RETIRED for v in bot.versions if v.id != version.id)
    version.status = VersionStatus.ACTIVE
    version.activated_at = utcnow()
    version.error = None
    if bot.status == BotStatus.PAUSED:
        bot.status, bot.paused_reason, bot.consecutive_failures = BotStatus.ACTIVE, None, 0
    for ladder in ladders.ladders_for(version.games or []):
        if first:
            ratings.ensure_rating(bot.id, ladder.id)
        else:
            ratings.new_version_rating(bot.id, ladder.id)


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
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                continue
            if path.is_file() and not path.is_symlink():
                info = zipfile.ZipInfo(str(rel), date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = (0o100755 if os.access(path, os.X_OK) else 0o100644) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def sample_bot_folders(games: Sequence[str] | None = None) -> list[Path]:
    """The project's own sample bots (folders with ``bot.toml``), optionally for some games."""
    folders = sorted(
        p.parent
        for p in SAMPLE_BOTS.glob("*/*/bot.toml")
        if p.parent.parent.name not in NOT_SAMPLES
    )
    if games is None:
        return folders
    from arena.bots import load_bot

    return [f for f in folders if any(load_bot(f).plays(g) for g in games)]
