"""What counts as an attempt: the match's own faults spend one, the platform's do not."""

from __future__ import annotations

import errno
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, current_app
from sqlalchemy.exc import InterfaceError, OperationalError

from tests.web.services.test_matches import _outcome, challenge, queue_match, rating_changes
from web import engine
from web.extensions import db
from web.models import Match, MatchStatus, utcnow
from web.services import attempts, matches, play

pytestmark = pytest.mark.services
__all__ = ["challenge"]  # a fixture, used by name


@pytest.mark.parametrize(
    ("error", "platform", "words"),
    [
        (OperationalError("SELECT 1", {}, Exception("connection refused")), True, "database"),
        (InterfaceError("SELECT 1", {}, Exception("connection closed")), True, "database"),
        (OSError(errno.ENOSPC, "No space left on device"), True, "no space left on device"),
        (OSError(errno.EIO, "Input/output error"), True, "input/output error"),
        (attempts.StorageError("storage /srv full"), True, "storage /srv full"),
        (engine.InfrastructureError("sandbox failure: no bwrap"), True, "sandbox failure"),
        (ConnectionRefusedError("redis"), True, "platform failure"),
        (RuntimeError("the referee crashed"), False, "RuntimeError: the referee crashed"),
        (KeyError("trump"), False, "KeyError"),
    ],
)
def test_faults_are_told_apart(pg_app: Flask, error: Exception, platform: bool, words: str) -> None:
    fault = attempts.classify(error)
    assert fault.platform is platform
    assert words in fault.message


def test_backoff_doubles_up_to_its_ceiling(pg_app: Flask) -> None:
    pg_app.config.update(RETRY_BACKOFF=5.0, RETRY_BACKOFF_MAX=60.0)
    assert [attempts.backoff(n) for n in range(1, 7)] == [5, 10, 20, 40, 60, 60]


def _crash(message: str) -> Any:
    def run(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError(message)

    return run


def row(match_id: int) -> Match:
    db.session.expire_all()
    match = db.session.get(Match, match_id)
    db.session.rollback()
    return match


def test_a_referee_crash_spends_the_attempts_and_fails_the_match(
    challenge: tuple[Any, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "run", _crash("the referee crashed on this deal"))
    match_id = queue_match(*challenge)
    for spent in (1, 2, 3):
        assert "the referee crashed" in play.play_match(match_id)
        match = row(match_id)
        assert (match.faults, match.lost_workers) == (spent, 0)
        assert f"attempt {spent} of 3 spent" in match.error
    assert match.status == MatchStatus.FAILED
    assert play.play_match(match_id).startswith("not claimed")


def test_platform_failures_spend_nothing_and_back_off(
    challenge: tuple[Any, list[Any]], monkeypatch: pytest.MonkeyPatch, pg_app: Flask
) -> None:
    pg_app.config.update(RETRY_BACKOFF=10.0, RETRY_BACKOFF_MAX=1000.0)
    monkeypatch.setattr(engine, "run", _raise(engine.InfrastructureError("sandbox failure")))
    match_id = queue_match(*challenge)
    for failures in range(1, 6):  # more than MAX_ATTEMPTS
        before = utcnow()
        play.play_match(match_id)
        match = row(match_id)
        assert (match.status, match.faults, match.lease_until) == (MatchStatus.QUEUED, 0, None)
        delay = 10.0 * 2 ** (failures - 1)
        assert match.queued_at >= before + timedelta(seconds=delay)  # due after the backoff
        assert "sandbox failure" in match.error and "not the match's fault" in match.error
    monkeypatch.undo()
    assert play.play_match(match_id) == "finished"
    assert rating_changes(match_id) == 2


def _raise(error: Exception) -> Any:
    def run(*_args: Any, **_kwargs: Any) -> Any:
        raise error

    return run


def test_a_replay_that_cannot_be_stored_gives_the_claim_back_at_once(
    challenge: tuple[Any, list[Any]], pg_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web.storage import Storage

    def full(_self: Storage, _data: bytes) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    match_id = queue_match(*challenge)
    monkeypatch.setattr(Storage, "put_replay", full)
    assert "no space left on device" in play.play_match(match_id)
    match = row(match_id)
    assert (match.status, match.lease_until, match.faults) == (MatchStatus.QUEUED, None, 0)
    assert f"storage folder {pg_app.config['STORAGE_DIR']}" in match.error
    monkeypatch.undo()
    assert play.play_match(match_id) == "finished"
    assert rating_changes(match_id) == 2


def test_a_result_stands_when_the_lease_ran_out_but_no_one_claimed_since(
    challenge: tuple[Any, list[Any]],
) -> None:
    match_id = queue_match(*challenge)
    attempt = matches.claim(match_id, "cut off from the database", 0.01)
    assert attempt is not None
    matches.reap(utcnow() + timedelta(seconds=1))  # its lease ran out during the outage
    assert row(match_id).status == MatchStatus.QUEUED
    assert play.finish(match_id, attempt, _outcome(2), "replays/x.json") is True
    assert row(match_id).status == MatchStatus.FINISHED
    assert rating_changes(match_id) == 2
    assert matches.claim(match_id, "late", 60) is None


def test_waiting_out_a_database_outage_then_giving_up(pg_app: Flask) -> None:
    pg_app.config["DB_PATIENCE"] = 2.0
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("SELECT 1", {}, Exception("server closed the connection"))
        return "done"

    assert attempts.patiently(flaky, "test") == "done"

    def down() -> str:
        raise OperationalError("SELECT 1", {}, Exception("connection refused"))

    with pytest.raises(OperationalError):
        attempts.patiently(down, "test")


def _message_eta(match_id: int) -> datetime:
    """When the match's message given a countdown is due (its Celery ETA)."""
    from web.services.queue import MATCH_QUEUES, app_redis

    prefix = str(current_app.config["BROKER_PREFIX"])
    with app_redis() as client:
        assert client is not None
        raw = [json.loads(m) for q in MATCH_QUEUES for m in client.lrange(prefix + q, 0, -1)]
    etas = [
        m["headers"]["eta"]
        for m in raw
        if str(m["headers"]["id"]).startswith(f"match-{match_id}-") and m["headers"].get("eta")
    ]
    assert len(etas) == 1, raw
    return datetime.fromisoformat(etas[0]).astimezone(UTC).replace(tzinfo=None)


def test_a_match_given_back_for_the_storage_looks_again_in_seconds_not_after_its_backoff(
    challenge: tuple[Any, list[Any]], pg_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web.storage import Storage

    def full(_self: Storage, _data: bytes) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    pg_app.config.update(RETRY_BACKOFF=600.0, RETRY_BACKOFF_MAX=600.0)
    match_id = queue_match(*challenge)
    monkeypatch.setattr(Storage, "put_replay", full)
    assert "no space left on device" in play.play_match(match_id)
    match = row(match_id)
    assert attempts.STORAGE_WAIT in match.error and "600 s at most" in match.error
    assert match.queued_at > utcnow() + timedelta(seconds=500)  # due after its backoff ...
    eta = _message_eta(match_id)  # ... but its message comes in seconds to look
    assert eta <= utcnow() + timedelta(seconds=attempts.STORAGE_PROBE_EVERY)
    monkeypatch.undo()
    assert play.play_match(match_id) == "finished"
    assert rating_changes(match_id) == 2


def test_the_storage_probe_writes_and_removes_a_file(pg_app: Flask, tmp_path: Path) -> None:
    from web.storage.folder import FolderStorage

    assert FolderStorage(tmp_path).answers()
    assert list(tmp_path.iterdir()) == []
    assert not FolderStorage(tmp_path / "gone").answers()
