"""Real Celery workers against real PostgreSQL and Redis: no match lost, none rated twice."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import (
    SAMPLES,
    Worker,
    base_config,
    require_bwrap,
    sample_version,
    wait_for,
)
from web import engine
from web.extensions import db
from web.models import BotVersion, Match, MatchStatus, Rating, RatingChange, VersionStatus
from web.services import bots, building, ladders, lifecycle, matches, users
from web.services.queue import send_match
from web.storage import get_storage

pytestmark = [pytest.mark.services, pytest.mark.slow]


def match_row(match_id: int) -> Match:
    db.session.expire_all()
    row = db.session.get(Match, match_id)
    db.session.rollback()  # end the read so workers' updates are seen next time
    return row


def finished(match_id: int) -> bool:
    return match_row(match_id).status == MatchStatus.FINISHED


def rating_changes(match_id: int) -> int:
    count = db.session.scalar(
        select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
    )
    db.session.rollback()
    return int(count or 0)


def queue(ladder: Any, versions: list[Any], seed: int = 3) -> int:
    match = matches.create_match(ladder.game_config(), versions, seed=seed, ladder_id=ladder.id)
    db.session.commit()
    return match.id


def unvalidated_version(folder: str) -> BotVersion:
    """A bot put straight on the ladders (it would fail the self-test): slow matches on demand."""
    owner = users.get_or_create_user("house", house=True)
    version = bots.register_folder(owner, SAMPLES / folder, trusted=True)
    building.record_manifest(version, engine.load_manifest(get_storage().bot_dir(version.id)))
    version.status = VersionStatus.VALIDATING  # straight to activation
    lifecycle.activate(version)
    db.session.commit()
    return version


def test_upload_to_rated_result(pg_app: Flask, start_worker: Callable[..., Worker]) -> None:
    require_bwrap()
    sample_version("python/challenge-greedy")
    sample_version("python/challenge-random")
    alice = users.create_user("alice")
    db.session.commit()
    upload = bots.Upload(data=bots.pack_folder(SAMPLES / "python" / "challenge-heuristic"))
    version = bots.submit(alice, "my-heuristic", upload)
    worker = start_worker(pg_app, concurrency=2)

    def active() -> bool:
        db.session.expire_all()
        status = db.session.get(BotVersion, version.id).status
        db.session.rollback()
        assert status != VersionStatus.REJECTED, version.validation_log
        return status == VersionStatus.ACTIVE

    wait_for(active, 90, "the upload to be built, self-tested and validated", worker)
    log = db.session.get(BotVersion, version.id).validation_log
    assert "request 2 (1 legal action)" in log and "validation match" in log

    def rated() -> bool:
        ladders.schedule_all()
        rating = db.session.scalar(select(Rating).where(Rating.bot_id == version.bot_id))
        db.session.rollback()
        return rating is not None and rating.games > 0

    wait_for(rated, 90, "a rated ladder match of the uploaded bot", worker)
    change = db.session.scalar(select(RatingChange).where(RatingChange.bot_id == version.bot_id))
    assert change.sigma_after < change.sigma_before  # it counted, whatever the result


def test_killed_worker_match_is_played_again_and_rated_once(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=1.0, MATCH_LEASE=4)
    greedy = sample_version("python/challenge-greedy")
    sleeper = unvalidated_version("hostile/sleeper")  # every turn runs into the time limit
    ladder = ladders.default_ladder("challenge")
    match_id = queue(ladder, [greedy, sleeper])
    worker = start_worker(pg_app)
    running = wait_for(lambda: match_row(match_id).worker, 30, "the match to start", worker)
    pid = int(running.rsplit(":", 1)[1])
    os.kill(pid, signal.SIGKILL)

    def done() -> bool:
        matches.reap()  # what beat does every REAP_INTERVAL
        return finished(match_id)

    wait_for(done, 90, "the match to be played again", worker)
    row = match_row(match_id)
    assert row.attempts == 2
    assert rating_changes(match_id) == 2
    games = db.session.scalars(select(Rating.games).where(Rating.ladder_id == ladder.id)).all()
    assert sorted(games) == [1, 1]


def test_duplicate_deliveries_are_no_ops(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    versions = [
        sample_version("python/challenge-greedy"),
        sample_version("python/challenge-random"),
    ]
    ladder = ladders.default_ladder("challenge")
    match_id = queue(ladder, versions)
    send_match(match_id)
    send_match(match_id)
    worker = start_worker(pg_app, concurrency=2)
    wait_for(lambda: finished(match_id), 60, "the match to finish", worker)
    wait_for(lambda: worker.output().count(f"match {match_id}: ") >= 3, 30, "all three deliveries")
    assert worker.output().count(f"match {match_id}: finished") == 1
    assert match_row(match_id).attempts == 1
    assert rating_changes(match_id) == 2


@pytest.fixture
def private_redis(shared_tmp: Path) -> Iterator[Callable[[], None]]:
    """A throwaway redis-server without persistence; the fixture value restarts it."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [binary, "--port", str(port), "--save", "", "--appendonly", "no",
            "--dir", str(shared_tmp)]  # fmt: skip
    proc: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        proc.append(subprocess.Popen(args, stdout=subprocess.DEVNULL))
        import redis

        client = redis.Redis(port=port)
        wait_for(lambda: _pings(client), 10, "the private redis")

    def restart() -> None:
        proc[-1].kill()
        proc[-1].wait()
        start()

    start()
    restart.port = port  # type: ignore[attr-defined]
    yield restart
    proc[-1].kill()
    proc[-1].wait()


def _pings(client: Any) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False


def test_redis_restart_loses_no_queued_match(
    pg_url: str,
    shared_tmp: Path,
    private_redis: Any,
    start_worker: Callable[..., Worker],
) -> None:
    require_bwrap()
    from web import create_app

    url = f"redis://127.0.0.1:{private_redis.port}/0"
    app = create_app(base_config(shared_tmp, DATABASE_URL=pg_url, REDIS_URL=url))
    with app.app_context():
        from tests.web.conftest import _truncate_all

        _truncate_all(pg_url)
        versions = [sample_version(f"python/challenge-{k}") for k in ("greedy", "random")]
        ladder = ladders.default_ladder("challenge")
        ids = [queue(ladder, versions, seed=s) for s in range(4)]
        private_redis()  # the queued messages are gone with it
        worker = start_worker(app)

        def all_done() -> bool:
            matches.reap()
            return all(finished(i) for i in ids)

        time.sleep(1)
        wait_for(all_done, 90, "every queued match after the broker restart", worker)
        assert [rating_changes(i) for i in ids] == [2, 2, 2, 2]
        db.session.remove()
        db.engine.dispose()  # this app's pool, or its connections are left to the collector
