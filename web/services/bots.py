"""The bot lifecycle: upload -> unpack -> build -> self-test -> validation match -> ladders.

Each stage writes what it saw into the version's logs, so an owner whose upload was refused can
read why. A version joins its ladders only after all stages pass; it then keeps the bot's mu and
starts again with a wider sigma.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app
from sqlalchemy import func, select

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
from web.services import ladders, ratings
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


def get_or_create_bot(owner: User, name: str) -> Bot:
    bot = db.session.scalar(select(Bot).where(Bot.owner_id == owner.id, Bot.name == name))
    if bot is None:
        bot = Bot(owner_id=owner.id, name=name)
        db.session.add(bot)
        db.session.flush()
    return bot


def submit(owner: User, name: str, upload: Upload, *, trusted: bool = False) -> BotVersion:
    """Store and unpack a new version of ``owner``'s bot ``name``. Commits.

    A refused upload still becomes a version (``rejected``, with the reason) so its owner sees
    it; an accepted one is sent on to build and validation after the commit.
    """
    bot = get_or_create_bot(owner, name)
    storage = get_storage()
    number = (
        db.session.scalar(select(func.max(BotVersion.number)).where(BotVersion.bot_id == bot.id))
        or 0
    ) + 1
    version = BotVersion(
        bot_id=bot.id, number=number, sha256=storage.put_archive(upload.data), trusted=trusted
    )
    db.session.add(version)
    db.session.flush()
    try:
        files = _unpack_into(version, upload)
    except UploadError as exc:
        _reject(version, f"upload refused: {exc}")
    else:
        version.build_log = f"unpacked {len(files)} files\n"
        after_commit(_sender("web.tasks.prepare_version", version.id))
    db.session.commit()
    return version


def _sender(task: str, *args: Any) -> Any:
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def send() -> None:
        with app.app_context():
            send_task(task, *args)

    return send


def _unpack_into(version: BotVersion, upload: Upload) -> list[Any]:
    storage = get_storage()
    scratch = storage.scratch_dir()
    try:
        if upload.manifest is not None:
            files = write_single(
                upload.filename, upload.data, upload.manifest, scratch, unpack_limits()
            )
        else:
            files = unpack(upload.data, scratch, unpack_limits())
        storage.install_dir(_bot_root(scratch), version.id)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return files


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
    """Read the manifest, build, self-test; then validate by a match or activate. Commits."""
    version = db.session.get(BotVersion, version_id)
    if version is None or version.status not in (VersionStatus.UPLOADED, VersionStatus.BUILDING):
        return version.status if version else VersionStatus.REJECTED
    version.status = VersionStatus.BUILDING
    db.session.commit()
    try:
        manifest = engine.load_manifest(get_storage().bot_dir(version.id))
        record_manifest(version, manifest)
        db.session.commit()  # no transaction stays open while the bot builds or is tested
        _build(version, manifest)
        _selftest(version, manifest)
    except _StageFailed as exc:
        _reject(version, str(exc))
        db.session.commit()
        return version.status
    except Exception as exc:  # a malformed manifest and the like: the owner must see it
        _reject(version, f"{type(exc).__name__}: {exc}")
        db.session.commit()
        return version.status
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

    version.status = VersionStatus.VALIDATING
    sandbox = engine.sandbox_for(version.trusted)
    timeout = float(current_app.config["SELFTEST_TIMEOUT"])
    logs = []
    db.session.commit()
    for game in manifest.games:
        report = run_selftest(sandbox, manifest, game, timeout=timeout)
        logs.append(f"== protocol self-test: {game}\n{report.log}")
        if not report.passed:
            version.validation_log = "\n".join(logs)
            raise _StageFailed(f"the protocol self-test failed for {game}; see the validation log")
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
        message = (outcome.get("messages") or [None])[0]
        _reject(version, f"the validation match ended with status {status!r}: {message or ''}")
    db.session.commit()


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
