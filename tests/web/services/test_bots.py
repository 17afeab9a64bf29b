"""The bot lifecycle on real PostgreSQL: refused uploads, failed self-tests, new versions."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from tests.web.conftest import SAMPLES, require_bwrap, sample_version
from web.extensions import db
from web.models import Bot, BotVersion, Rating, VersionStatus
from web.services import bots, ladders, lifecycle, users

pytestmark = pytest.mark.services


def test_a_refused_archive_becomes_a_rejected_version_with_the_reason(
    pg_app: Flask, shared_tmp: Path
) -> None:
    owner = users.create_user("mallory")
    db.session.commit()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.toml", "x")
        archive.writestr("../../escaped.py", "x")
    version = bots.submit(owner, "sneaky", bots.Upload(data=buffer.getvalue()))
    assert version.status == VersionStatus.REJECTED
    assert "'..'" in version.error and "outside" in version.error
    assert not list(shared_tmp.rglob("escaped.py"))
    assert not (Path(pg_app.config["STORAGE_DIR"]) / "bots" / str(version.id)).exists()


def test_a_bot_that_never_answers_fails_the_self_test_with_a_log(pg_app: Flask) -> None:
    require_bwrap()
    owner = users.create_user("bob")
    db.session.commit()
    pg_app.config["SELFTEST_TIMEOUT"] = 1.0
    folder = SAMPLES / "broken" / "never-answers"
    version = bots.submit(owner, "silent", bots.Upload(data=bots.pack_folder(folder)))
    assert str(lifecycle.prepare(version.id)) == "rejected"
    assert "self-test failed" in version.error
    assert "no answer (timeout)" in version.validation_log


def test_a_new_version_keeps_mu_and_widens_sigma(pg_app: Flask) -> None:
    require_bwrap()
    first = sample_version("python/challenge-greedy")
    ladder = ladders.default_ladder("challenge")
    rating = db.session.scalar(select(Rating).where(Rating.bot_id == first.bot_id))
    rating.mu, rating.sigma = 31.0, 1.5  # as if after many games
    db.session.commit()
    second = sample_version("python/challenge-greedy")
    db.session.expire_all()
    rating = db.session.scalar(
        select(Rating).where(Rating.bot_id == first.bot_id, Rating.ladder_id == ladder.id)
    )
    assert second.number == 2
    assert (rating.mu, rating.sigma) == (31.0, pytest.approx(25 / 6))
    statuses = db.session.scalars(select(BotVersion.status).order_by(BotVersion.number)).all()
    assert statuses == [VersionStatus.RETIRED, VersionStatus.ACTIVE]


def test_single_file_upload_runs_its_build_step_in_the_sandbox(pg_app: Flask) -> None:
    require_bwrap()
    owner = users.create_user("dora")
    db.session.commit()
    manifest = (
        'name = "builder"\ngames = ["challenge"]\nlanguage = "python"\n'
        'run = ["python3", "bot.py"]\n'
        'build = ["python3", "-c", "print(\'compiling\'); raise SystemExit(3)"]\n'
    )
    source = (SAMPLES / "python" / "challenge-random" / "bot.py").read_bytes()
    upload = bots.Upload(data=source, filename="bot.py", manifest=manifest)
    version = bots.submit(owner, "builder", upload)
    assert str(lifecycle.prepare(version.id)) == "rejected"
    assert "build step failed (exit status 3)" in version.error
    assert "compiling" in version.build_log


def test_a_validation_match_that_cannot_be_played_rejects_the_version(pg_app: Flask) -> None:
    from datetime import timedelta

    from web.models import Match, MatchKind, utcnow
    from web.services import matches

    require_bwrap()
    sample_version("python/challenge-random")
    owner = users.create_user("erin")
    db.session.commit()
    folder = SAMPLES / "python" / "challenge-greedy"
    version = bots.submit(owner, "mine", bots.Upload(data=bots.pack_folder(folder)))
    assert str(lifecycle.prepare(version.id)) == "validating"
    match = db.session.scalar(select(Match).where(Match.kind == MatchKind.VALIDATION))
    for _ in range(pg_app.config["MAX_LOST_WORKERS"]):  # every worker that takes it dies
        assert matches.claim(match.id, "dies", -1)
        matches.reap(utcnow() + timedelta(seconds=1))
    db.session.expire_all()
    assert version.status == VersionStatus.REJECTED
    assert "could not be played" in version.error


def test_a_database_error_while_recording_an_upload_keeps_no_row_and_no_file(
    pg_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unpacked tree is already in the version's folder when the transaction fails there."""
    owner = users.create_user("unlucky")
    db.session.commit()

    def lost(_send: Any) -> None:
        raise OperationalError("COMMIT", {}, ConnectionError("the server closed the connection"))

    monkeypatch.setattr(lifecycle, "after_commit", lost)
    archive = bots.pack_folder(SAMPLES / "python" / "challenge-random")
    with pytest.raises(OperationalError):
        bots.submit(owner, "unlucky-bot", bots.Upload(data=archive))
    assert db.session.scalar(select(func.count()).select_from(BotVersion)) == 0
    assert db.session.scalar(select(func.count()).select_from(Bot)) == 0
    db.session.rollback()
    storage = Path(pg_app.config["STORAGE_DIR"])
    assert [p for p in storage.rglob("*") if p.is_file()] == []

    monkeypatch.undo()  # the same upload is kept once the database answers
    version = bots.submit(owner, "unlucky-bot", bots.Upload(data=archive))
    assert (version.number, version.status) == (1, VersionStatus.UPLOADED)
    assert (storage / "bots" / str(version.id) / "bot.toml").is_file()
