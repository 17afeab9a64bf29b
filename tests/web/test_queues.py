"""Queues that cannot pile up, a reaper that resends only what is lost, uploads ahead of ladders,
and placement matches: real PostgreSQL, Redis, Celery workers and beat, bots under bwrap."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, current_app
from sqlalchemy import func, select

from tests.web.conftest import (
    ROOT,
    SAMPLES,
    Worker,
    app_env,
    require_bwrap,
    sample_version,
    wait_for,
)
from web.celery_app import MATCH_WORKER_QUEUES, RESERVED_WORKER_QUEUES
from web.extensions import db
from web.models import (
    BotVersion,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    VersionStatus,
    utcnow,
)
from web.services import bots, ladders, matches, play, users
from web.services.queue import (
    DEFAULT,
    MATCHES,
    URGENT,
    app_redis,
    periodic_run,
    request_schedule,
)

pytestmark = [pytest.mark.services, pytest.mark.slow]


def queue_length(name: str) -> int:
    with app_redis() as client:
        assert client is not None
        return int(client.llen(str(current_app.config["BROKER_PREFIX"]) + name))


def queued_ids(name: str) -> set[int]:
    """Match ids of the messages waiting in queue ``name``."""
    import json

    with app_redis() as client:
        assert client is not None
        raw = client.lrange(str(current_app.config["BROKER_PREFIX"]) + name, 0, -1)
    ids = set()
    for message in raw:
        task_id = json.loads(message)["headers"]["id"]
        ids.add(int(task_id.split("-")[1]))
    return ids


@pytest.fixture
def challenge(pg_app: Flask) -> tuple[Any, list[Any]]:
    """The challenge ladder with two active sample bots, their placement already played."""
    require_bwrap()
    versions = [
        sample_version("python/challenge-greedy"),
        sample_version("python/challenge-random"),
    ]
    ladder = ladders.default_ladder("challenge")
    db.session.commit()
    pg_app.config["PLACEMENT_MATCHES"] = 0
    return ladder, versions


# --- periodic tasks -------------------------------------------------------------------------


@pytest.fixture
def start_beat(tmp_path: Path) -> Iterator[Callable[[Flask], Worker]]:
    started: list[Worker] = []

    def start(app: Flask) -> Worker:
        log = tmp_path / "beat.log"
        log_file = log.open("wb")
        command = [
            sys.executable, "-m", "celery", "-A", "web.worker:celery", "beat", "-l", "info",
            "-s", str(tmp_path / "beat-schedule"),
        ]  # fmt: skip
        process = subprocess.Popen(
            command,
            env=app_env(app),
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=ROOT,
        )
        beat = Worker(process, log, log_file)
        started.append(beat)
        return beat

    yield start
    for beat in started:
        beat.stop()


def test_periodic_tasks_do_not_accumulate(
    pg_app: Flask,
    start_beat: Callable[[Flask], Worker],
    start_worker: Callable[..., Worker],
) -> None:
    pg_app.config.update(SCHEDULE_INTERVAL=0.3, REAP_INTERVAL=0.3, LEASE_CHECK_INTERVAL=0.3)
    beat = start_beat(pg_app)
    # No worker takes the periodic tasks: beat ticks many times, the queue keeps one of each.
    wait_for(
        lambda: beat.output().count("not sent again") >= 20,
        120,
        "beat to find its tasks still waiting twenty times",
        beat,
    )
    assert queue_length(DEFAULT) == 3, beat.output()[-2000:]
    worker = start_worker(pg_app, queues=DEFAULT)
    wait_for(
        lambda: (
            worker.output().count("reap_stale_matches") >= 6
            and worker.output().count("schedule_ladders") >= 6
            and worker.output().count("take_back_lapsed") >= 6
        ),
        120,
        "the worker to run each periodic task several times",
        worker,
    )
    assert queue_length(DEFAULT) <= 3


def test_a_periodic_task_never_runs_twice_at_once(pg_app: Flask) -> None:
    with (
        periodic_run("web.tasks.schedule_ladders", 60) as first,
        periodic_run("web.tasks.schedule_ladders", 60) as second,
    ):
        assert (first, second) == (True, False)
    with periodic_run("web.tasks.schedule_ladders", 60) as again:
        assert again


def test_finished_matches_ask_for_one_scheduler_run_at_a_time(pg_app: Flask) -> None:
    for _ in range(20):  # twenty ladder matches finishing before a worker gets to it
        request_schedule()
    assert queue_length(DEFAULT) == 1
    with periodic_run("web.tasks.schedule_ladders", 60) as alone:
        assert alone
        request_schedule()  # a run going on: the next one may wait already
        request_schedule()
    assert queue_length(DEFAULT) == 2


# --- the reaper -----------------------------------------------------------------------------


def test_the_reaper_leaves_matches_queued_behind_others(challenge: tuple[Any, list[Any]]) -> None:
    ladder, versions = challenge
    ids = []
    for seed in range(6):
        ids.append(
            matches.create_match(ladder.game_config(), versions, seed=seed, ladder_id=ladder.id).id
        )
        db.session.commit()
    assert queue_length(MATCHES) == 6
    # Long queued, but every message is still in the broker: nothing is sent again.
    report = matches.reap(utcnow() + timedelta(minutes=30))
    assert report.resent == []
    assert queue_length(MATCHES) == 6
    # One message is lost: only that match is sent again.
    with app_redis() as client:
        assert client is not None
        key = str(current_app.config["BROKER_PREFIX"]) + MATCHES
        lost = client.lindex(key, 0)
        assert client.lrem(key, 1, lost) == 1
    missing = set(ids) - queued_ids(MATCHES)
    assert len(missing) == 1
    report = matches.reap(utcnow() + timedelta(minutes=30))
    assert report.resent == sorted(missing)
    assert queued_ids(MATCHES) == set(ids)
    assert queue_length(MATCHES) == 6


def test_matches_held_by_a_worker_are_never_sent_again(
    pg_app: Flask, challenge: tuple[Any, list[Any]], start_worker: Callable[..., Worker]
) -> None:
    ladder, versions = challenge
    ids = [
        matches.create_match(ladder.game_config(), versions, seed=s, ladder_id=ladder.id).id
        for s in range(6)
    ]
    db.session.commit()
    worker = start_worker(pg_app, queues=MATCHES)
    looks = 0
    # While the worker plays them one by one (one message held, the others waiting), every
    # match stays stale in the database's eyes; the reaper must still send none again.
    while not _finished(ids):
        report = matches.reap(utcnow() + timedelta(seconds=3))
        assert (report.resent, report.requeued) == ([], []), worker.output()[-2000:]
        looks += 1
        wait_for(lambda: worker.process.poll() is None, 1, "the worker to stay up", worker)
    assert looks > 3
    assert "not claimed" not in worker.output()


def _finished(ids: list[int]) -> bool:
    done = db.session.scalar(
        select(func.count())
        .select_from(Match)
        .where(Match.id.in_(ids), Match.status == MatchStatus.FINISHED)
    )
    db.session.rollback()
    return done == len(ids)


# --- uploads ahead of busy ladders ----------------------------------------------------------


def test_an_upload_becomes_active_while_every_ladder_is_busy(
    pg_app: Flask, challenge: tuple[Any, list[Any]], start_worker: Callable[..., Worker]
) -> None:
    ladder, versions = challenge
    backlog = [
        matches.create_match(ladder.game_config(), versions, seed=s, ladder_id=ladder.id).id
        for s in range(40)
    ]
    db.session.commit()
    worker = start_worker(pg_app, queues=MATCH_WORKER_QUEUES, name="matches")
    reserved = start_worker(pg_app, queues=RESERVED_WORKER_QUEUES, name="reserved")
    wait_for(lambda: _any_running(backlog), 120, "the ladder to get busy", worker)
    alice = users.create_user("alice")
    db.session.commit()
    upload = bots.Upload(data=bots.pack_folder(SAMPLES / "python" / "challenge-heuristic"))
    version = bots.submit(alice, "fresh", upload)

    def active() -> bool:
        db.session.expire_all()
        status = db.session.get(BotVersion, version.id).status
        db.session.rollback()
        assert status != VersionStatus.REJECTED
        return status == VersionStatus.ACTIVE

    wait_for(active, 240, "the upload to become active", reserved)
    # It went ahead: most of the ladder's backlog is still waiting.
    assert not _finished(backlog)
    assert queue_length(MATCHES) > 0
    assert "prepare_version[" not in worker.output()  # builds never took a match slot


def _any_running(ids: list[int]) -> bool:
    running = db.session.scalar(
        select(func.count())
        .select_from(Match)
        .where(Match.id.in_(ids), Match.status != MatchStatus.QUEUED)
    )
    db.session.rollback()
    return bool(running)


# --- placement ------------------------------------------------------------------------------


def finish_without_playing(match_id: int) -> None:
    """Record a result for ``match_id`` as a worker would (the seats' play is not the point)."""
    from tests.web.services.test_matches import _outcome

    attempt = matches.claim(match_id, "test", 60)
    assert attempt is not None
    assert play.finish(match_id, attempt, _outcome(2), "replays/x.json")


def test_placement_matches_go_first_and_are_counted(
    pg_app: Flask, challenge: tuple[Any, list[Any]]
) -> None:
    client = pg_app.test_client()
    ladders.schedule_all()  # no placement yet: the sample bots play ordinary matches
    for match_id in queued_ids(MATCHES):
        finish_without_playing(match_id)
    pg_app.config["PLACEMENT_MATCHES"] = 4  # the sample bots have played 4 each
    ladders.schedule_all()
    ordinary = queued_ids(MATCHES)
    assert ordinary and queue_length(URGENT) == 0
    newcomer = sample_version("python/challenge-heuristic", owner_name="bob", house=False)
    assert ladders.placement_left(newcomer) == 4
    page = client.get(f"/bots/{newcomer.bot_id}").get_data(as_text=True)
    assert "placement matches left: <b>4</b>" in page
    ladders.schedule_all()
    urgent = queued_ids(URGENT)
    seated = set(
        db.session.scalars(
            select(MatchSeat.match_id).where(MatchSeat.bot_version_id == newcomer.id)
        )
    )
    assert urgent and urgent == seated and not ordinary & seated
    for played in range(1, 5):
        waiting = db.session.scalars(
            select(Match.id)
            .join(MatchSeat)
            .where(MatchSeat.bot_version_id == newcomer.id, Match.status == MatchStatus.QUEUED)
            .order_by(Match.id)
        ).all()
        assert waiting, "the placement matches ran out before the placement was played"
        finish_without_playing(waiting[0])
        assert ladders.placement_left(newcomer) == 4 - played
        ladders.schedule_all()
    api = client.get(f"/api/v1/versions/{newcomer.id}").get_json()
    assert api["data"]["placement_left"] == 0
    page = client.get(f"/bots/{newcomer.bot_id}").get_data(as_text=True)
    assert "placement matches left" not in page
    kinds = set(db.session.scalars(select(Match.kind).where(Match.id.in_(list(urgent)))))
    assert kinds == {MatchKind.LADDER}
    # Placement played: what is scheduled from now on is ordinary again.
    before_urgent, before_ordinary = queued_ids(URGENT), queued_ids(MATCHES)
    for match_id in list(
        db.session.scalars(select(Match.id).where(Match.status == MatchStatus.QUEUED))
    ):
        finish_without_playing(match_id)
    ladders.schedule_all()
    assert queued_ids(URGENT) == before_urgent
    assert queued_ids(MATCHES) > before_ordinary
