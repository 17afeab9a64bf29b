"""The work of the build and self-test stages, done on a copy of a version's row.

``web.services.lifecycle.prepare`` claims a version, then calls ``run`` here with a copy of its
row that belongs to no session: the manifest, the build and the self-test record what they
saw in that copy's logs, and ``run`` says whether the bot refused itself. Whose fault an error
is (the platform's or the bot's) is told by ``fault_of``. Nothing here changes a version's
status: the lifecycle does, from what this module reports.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from flask import current_app

from web import engine
from web.extensions import db
from web.models import BotVersion
from web.services import attempts
from web.storage import StorageUnavailable, get_storage

FIELDS = ("manifest", "games", "language", "build_log", "validation_log")
"""What the stages record on a version."""


class StageFailed(Exception):
    """A stage refused the version; the message is for its owner."""


def run(version: BotVersion) -> str | None:
    """Read the manifest, build, self-test, recording on ``version`` (a detached copy).

    Returns why the bot is refused, or None if every stage passed. Any other error propagates
    (``fault_of`` says whose it is).
    """
    storage = get_storage()
    db.session.commit()  # no transaction stays open while the files are fetched
    try:
        with storage.checkout(version.id) as folder:
            manifest = engine.load_manifest(folder)
            record_manifest(version, manifest)
            db.session.commit()  # no transaction stays open while the bot builds or is tested
            if not _build(version, manifest):
                _selftest(version, manifest)
                return None
        with storage.checkout(version.id) as folder:  # the built tree, as every match sees it
            _selftest(version, engine.load_manifest(folder))
    except StageFailed as exc:
        return str(exc)
    return None


def fault_of(exc: Exception) -> attempts.Fault:
    """Whose fault stopped the stages: the platform's (tried again) or the bot's (rejected)."""
    from sandbox import SandboxError

    if isinstance(exc, SandboxError):
        return attempts.Fault(True, f"sandbox failure: {exc}")
    if isinstance(exc, StorageUnavailable):
        return attempts.Fault(True, str(exc), True)
    code = _storage_errno(exc)
    if code is not None:
        why = attempts.describe_os_error(OSError(code, ""))
        return attempts.Fault(True, f"could not write to {get_storage().where()}: {why}", True)
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


def record_manifest(version: BotVersion, manifest: Any) -> None:
    """Write what the manifest says (name, games, language, commands) on ``version``."""
    version.manifest = {
        "name": manifest.name,
        "games": list(manifest.games),
        "language": manifest.language,
        "run": list(manifest.run),
        "build": list(manifest.build) if manifest.build else None,
    }
    version.games = list(manifest.games)
    version.language = manifest.language


def _build(version: BotVersion, manifest: Any) -> bool:
    """Run the build step on a private copy; on success the built tree becomes the version's.

    The stored archive (the version's SHA-256) stays the upload as sent; the version's files
    are replaced by the built tree whole (``Storage.install_bot``), so they are always either
    the upload or the whole build. A failed or stopped build leaves the upload's files as they
    were. Returns whether a built tree was installed (False: no build step).
    """
    from sandbox.build import build_copy

    if not manifest.build:
        version.build_log += "no build step\n"
        return False
    limit = float(current_app.config["BUILD_TIMEOUT"])
    storage = get_storage()
    scratch = storage.scratch_dir()
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
            raise StageFailed(f"the build step took longer than {limit:g} s and was stopped")
        if not result.ok:
            raise StageFailed(
                f"the build step failed (exit status {result.returncode}); see the build log"
            )
        storage.install_bot(built, version.id)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return True


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
            raise StageFailed(
                f"the protocol self-test failed for {game}; see the validation log{hint}"
            )
    version.validation_log = "\n".join(logs) + "\n"


def silence_hint(version: BotVersion, status: str, message: str) -> str:
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
