"""A match whose worker is lost on one host is taken over by a worker on another host as soon as
the lost claim's short lease lapses; a live worker's lease, renewed by its heartbeat thread,
is never lapsed, however slow the match's steps."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from flask import Flask, current_app

from tests.web.conftest import Worker, require_bwrap, sample_version, wait_for
from tests.web.test_worker import finished, match_row, rating_changes, unvalidated_version
from web.celery_app import forget_expired_periodic
from web.extensions import db
from web.models import MatchStatus, utcnow
from web.services import ladders, matches, play
from web.services.queue import LAPSED_TASK, MATCH_QUEUES, app_redis, claim_periodic_send

LEASE = 3


def _holder(match_id: int, attempt: int) -> str | None:
    row = match_row(match_id)
    if row.status == MatchStatus.RUNNING and row.attempts == attempt:
        return row.worker
    return None


def _held_past(match_id: int, seconds: float) -> bool:
    """Attempt 1 still holds the match ``seconds`` after it started (the reaper running)."""
    matches.reap()
    row = match_row(match_id)
    assert (row.status, row.attempts) == (MatchStatus.RUNNING, 1), row.error
    return utcnow() - row.started_at > timedelta(seconds=seconds)


def test_a_match_lost_with_its_host_is_played_once_by_a_worker_of_another_host(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    require_bwrap()
    pg_app.config.update(MOVE_TIMEOUT=1.0, TIME_BANK=10.0, MATCH_LEASE=LEASE)
    greedy = sample_version("python/challenge-greedy")
    sleeper = unvalidated_version("hostile/sleeper")  # its first turn never ends
    ladder = ladders.default_ladder("challenge")
    match = matches.create_match(ladder.game_config(), [greedy, sleeper], ladder_id=ladder.id)
    db.session.commit()
    queues = ",".join(MATCH_QUEUES)
    first = start_worker(pg_app, name="a", queues=queues, ARENA_WORKER_HOST="host-a")
    holder = wait_for(lambda: _holder(match.id, 1), 120, "attempt 1", first)
    assert holder.startswith("host-a:")
    second = start_worker(pg_app, name="b", queues=queues, ARENA_WORKER_HOST="host-b")
    # The sleeper's turn waits out its whole time bank, one step of 10 s: the heartbeat
    # thread keeps the claim through it, with the reaper looking.
    wait_for(lambda: _held_past(match.id, 2 * LEASE), 120, "two leases of play", first)
    first.stop()  # the whole host gone: its Celery parent too, no redelivery

    def taken_over() -> str | None:
        matches.take_back_lapsed()  # as beat has it done every LEASE_CHECK_INTERVAL s
        return _holder(match.id, 2) or (finished(match.id) and match_row(match.id).worker)

    assert str(wait_for(taken_over, 120, "attempt 2", second)).startswith("host-b:")
    wait_for(lambda: finished(match.id), 180, "the match to finish", second)
    row = match_row(match.id)
    assert (row.attempts, row.lost_workers, row.faults) == (2, 1, 0)
    assert row.worker.startswith("host-b:")
    assert rating_changes(match.id) == 2


def test_a_redelivered_match_held_on_another_host_is_looked_at_again_when_its_lease_lapses(
    pg_app: Flask,
) -> None:
    """The message a dead worker process's parent gives back is not dropped while the claim's
    lease runs: it is sent again for the moment the lease lapses."""
    greedy = sample_version("python/challenge-greedy")
    other = sample_version("python/challenge-random")
    ladder = ladders.default_ladder("challenge")
    match = matches.create_match(ladder.game_config(), [greedy, other], ladder_id=ladder.id)
    db.session.commit()
    assert _etas(match.id) == [None]  # the first message, sent when it was queued
    assert matches.claim(match.id, "elsewhere:4242", 30) == 1
    assert play.play_match(match.id).startswith("not claimed")
    assert _etas(match.id) == [None]  # a first delivery of a held match: dropped
    said = play.play_match(match.id, redelivered=True)
    assert said.startswith("held by another worker"), said
    lease_until = match_row(match.id).lease_until.replace(tzinfo=UTC)
    etas = _etas(match.id)
    assert len(etas) == 2 and None in etas
    eta = max(e for e in etas if e is not None)
    assert lease_until < eta < lease_until + timedelta(seconds=5)
    row = match_row(match.id)
    assert (row.status, row.attempts, row.worker) == (MatchStatus.RUNNING, 1, "elsewhere:4242")


def _etas(match_id: int) -> list[datetime | None]:
    """When each message of ``match_id`` waiting in a match queue is due (None: at once)."""
    prefix = str(current_app.config["BROKER_PREFIX"] or "")
    with app_redis() as client:
        assert client is not None
        raw = [json.loads(m) for q in MATCH_QUEUES for m in client.lrange(prefix + q, 0, -1)]
    found: list[datetime | None] = []
    for message in raw:
        headers = message["headers"]
        if str(headers["id"]).startswith(f"match-{match_id}-"):
            eta = headers.get("eta")
            found.append(datetime.fromisoformat(eta) if eta else None)
    return found


def test_an_expired_periodic_message_lets_beat_send_the_next_at_once(pg_app: Flask) -> None:
    """A lapsed-lease check whose message expired unrun (every process busy) clears its waiting
    mark, so beat sends the next one on its next tick instead of a minute later."""
    import web.tasks  # noqa: F401  registers the tasks with the app's Celery

    task = pg_app.extensions["celery"].tasks[LAPSED_TASK]
    prefix = str(current_app.config["BROKER_PREFIX"] or "")
    with app_redis() as client:
        assert client is not None
        assert claim_periodic_send(client, prefix, LAPSED_TASK, 60)
        forget_expired_periodic(sender=task, expired=False)  # revoked for another reason
        assert not claim_periodic_send(client, prefix, LAPSED_TASK, 60)
        forget_expired_periodic(sender=task, expired=True)
        assert claim_periodic_send(client, prefix, LAPSED_TASK, 60)
