"""The match lifecycle against real PostgreSQL and real bot processes (no worker needed)."""

from __future__ import annotations

import itertools
import multiprocessing
import socket
import subprocess
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, current_app
from sqlalchemy import func, select

from tests.web.conftest import base_config, require_bwrap, sample_version, wait_for
from web.extensions import db
from web.models import (
    BotStatus,
    BotVersion,
    Match,
    MatchKind,
    MatchStatus,
    Rating,
    RatingChange,
    utcnow,
)
from web.services import ladders, matches, play

pytestmark = pytest.mark.services


@pytest.fixture
def challenge(pg_app: Flask) -> tuple[Any, list[Any]]:
    """The challenge ladder with two active sample bots."""
    require_bwrap()
    versions = [
        sample_version("python/challenge-greedy"),
        sample_version("python/challenge-random"),
    ]
    ladder = ladders.default_ladder("challenge")
    db.session.commit()
    return ladder, versions


def queue_match(ladder: Any, versions: list[Any], seed: int = 1) -> int:
    match = matches.create_match(ladder.game_config(), versions, seed=seed, ladder_id=ladder.id)
    db.session.commit()
    return match.id


def rating_changes(match_id: int) -> int:
    return db.session.scalar(
        select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
    )


def test_a_match_is_claimed_once(challenge: tuple[Any, list[Any]]) -> None:
    match_id = queue_match(*challenge)
    assert matches.claim(match_id, "a", 60) == 1
    assert matches.claim(match_id, "b", 60) is None


def test_played_match_is_rated_once_and_a_duplicate_is_a_no_op(
    challenge: tuple[Any, list[Any]],
) -> None:
    match_id = queue_match(*challenge)
    assert play.play_match(match_id) == "finished"
    assert play.play_match(match_id).startswith("not claimed")
    db.session.expire_all()
    match = db.session.get(Match, match_id)
    assert match.status == MatchStatus.FINISHED and match.attempts == 1
    assert rating_changes(match_id) == 2
    ratings = db.session.scalars(select(Rating)).all()
    assert sorted(r.games for r in ratings) == [1, 1]
    assert match.replay_path and match.final_hash
    # Each seat's think time per move is summarised from the moves it made.
    for seat in match.seats:
        assert seat.moves and seat.moves > 0
        assert 0 <= seat.think_ms_p50 <= seat.think_ms_p90 <= seat.think_ms_max


def test_stale_result_of_a_lost_claim_is_discarded(challenge: tuple[Any, list[Any]]) -> None:
    ladder, versions = challenge
    match_id = queue_match(ladder, versions)
    first = matches.claim(match_id, "slow", -1)  # a lease that has already run out
    second = matches.claim(match_id, "fast", 60)  # the first lease ran out
    assert (first, second) == (1, 2)
    outcome = _outcome(2)
    assert play.finish(match_id, 1, outcome, "replays/x.json") is False
    assert play.finish(match_id, 2, outcome, "replays/x.json") is True
    assert play.finish(match_id, 2, outcome, "replays/x.json") is False
    assert rating_changes(match_id) == 2


def test_lost_workers_spend_no_attempt_up_to_their_own_bound(
    challenge: tuple[Any, list[Any]], pg_app: Flask
) -> None:
    limit = pg_app.config["MAX_LOST_WORKERS"] = 5
    match_id = queue_match(*challenge)
    for attempt in range(1, limit + 1):
        assert matches.claim(match_id, "dies", 0.01) == attempt
        report = matches.reap(utcnow() + timedelta(seconds=1))
        expected = MatchStatus.QUEUED if attempt < limit else MatchStatus.FAILED
        db.session.expire_all()
        match = db.session.get(Match, match_id)
        assert (match.status, match.faults, match.lost_workers) == (expected, 0, attempt)
    assert report.failed == [match_id]
    assert "stopped answering 5 times" in match.error
    assert matches.claim(match_id, "late", 60) is None


def test_reaper_resends_matches_whose_message_was_lost(challenge: tuple[Any, list[Any]]) -> None:
    from web.services.queue import MATCHES, app_redis, match_ids_in_broker

    match_id = queue_match(*challenge)
    assert match_ids_in_broker() == {match_id}
    # Still in the broker: waiting is not being lost.
    assert matches.reap(utcnow() + timedelta(seconds=30)).resent == []
    with app_redis() as client:
        assert client is not None
        assert client.delete(str(current_app.config["BROKER_PREFIX"]) + MATCHES) == 1
    report = matches.reap(utcnow() + timedelta(seconds=30))
    assert report.resent == [match_id]
    assert match_ids_in_broker() == {match_id}


def test_a_bot_that_keeps_crashing_is_paused_with_a_reason(pg_app: Flask) -> None:
    require_bwrap()
    good = sample_version("python/challenge-greedy")
    bad = sample_version("broken/crash-mid-match", owner_name="tester", house=False)
    ladder = ladders.default_ladder("challenge")
    db.session.commit()
    limit = pg_app.config["PAUSE_AFTER_FAILURES"] = 2
    for seed in range(limit):
        play.play_match(queue_match(ladder, [bad, good], seed=seed))
    db.session.expire_all()
    bot = bad.bot
    assert bot.status == BotStatus.PAUSED
    assert f"{limit} failed matches in a row" in bot.paused_reason
    assert "crash" in bot.paused_reason
    assert good.bot.status == BotStatus.ACTIVE


def _outcome(players: int) -> Any:
    from web.engine import Outcome

    return Outcome(
        result={"ranking": [1, 2], "scores": [1.0, 0.0], "detail": {}},
        ranking=[1, 2],
        scores=[1.0, 0.0],
        statuses=["ok"] * players,
        forfeited=[False] * players,
        strikes=[0] * players,
        cpu_seconds=[0.1] * players,
        messages=[None] * players,
        stderr=[""] * players,
        replay={},
    )


def _finish_in_process(args: tuple[str, str, int, int, Any]) -> bool:
    """Child process: claim and finish one match at the same moment as its sibling."""
    url, storage, match_id, attempt, barrier = args
    from web import create_app

    app = create_app(base_config(Path(storage), DATABASE_URL=url, REDIS_URL="redis://none:1/0"))
    with app.app_context():
        outcome = _outcome(2)
        barrier.wait()
        done = play.finish(match_id, attempt, outcome, "replays/x.json")
        db.engine.dispose()
        return done


def test_two_workers_finishing_matches_of_one_bot_lose_no_update(
    challenge: tuple[Any, list[Any]], pg_url: str, tmp_path: Path
) -> None:
    ladder, (greedy, random_bot) = challenge
    rounds = 3
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(2) as pool:
        for round_ in range(rounds):
            ids = [queue_match(ladder, [greedy, random_bot], seed=round_ * 2 + k) for k in (0, 1)]
            attempts = [matches.claim(i, "w", 60) for i in ids]
            barrier = manager.Barrier(2)
            jobs = [
                (pg_url, str(tmp_path), i, a, barrier) for i, a in zip(ids, attempts, strict=True)
            ]
            assert pool.map(_finish_in_process, jobs) == [True, True]
    db.session.expire_all()
    rating = db.session.scalar(select(Rating).where(Rating.bot_id == greedy.bot_id))
    assert rating.games == 2 * rounds
    changes = db.session.scalars(
        select(RatingChange).where(RatingChange.bot_id == greedy.bot_id).order_by(RatingChange.id)
    ).all()
    assert len(changes) == 2 * rounds
    for before, after in itertools.pairwise(changes):
        assert after.mu_before == pytest.approx(before.mu_after)
    assert rating.mu == pytest.approx(changes[-1].mu_after)
    # Each version's count of finished ladder matches loses none either.
    assert db.session.get(BotVersion, greedy.id).ladder_matches == 2 * rounds


def test_replaying_a_rated_match_rates_nothing_twice(challenge: tuple[Any, list[Any]]) -> None:
    match_id = queue_match(*challenge)
    assert play.play_match(match_id) == "finished"
    match = db.session.get(Match, match_id)
    match.status, match.attempts = MatchStatus.QUEUED, 0  # as if replayed by hand
    db.session.commit()
    before = sorted((r.bot_id, r.mu, r.games) for r in db.session.scalars(select(Rating)))
    assert play.play_match(match_id) == "result discarded"
    db.session.expire_all()
    assert db.session.get(Match, match_id).status == MatchStatus.FINISHED
    assert rating_changes(match_id) == 2
    assert sorted((r.bot_id, r.mu, r.games) for r in db.session.scalars(select(Rating))) == before


def _zombie() -> subprocess.Popen[bytes]:
    """A child that has exited but is not reaped yet (a worker process just killed)."""
    child = subprocess.Popen(["true"])
    stat = Path(f"/proc/{child.pid}/stat")

    def dead() -> bool:
        return stat.read_text().rpartition(")")[2].split()[0] == "Z"

    wait_for(dead, 120, "the child to exit")
    return child


@pytest.mark.parametrize("how", ["reaped", "not yet reaped"])
def test_a_claim_whose_holder_process_is_gone_is_taken_over_before_its_lease_ends(
    how: str, challenge: tuple[Any, list[Any]]
) -> None:
    match_id = queue_match(*challenge)
    child = _zombie()
    if how == "reaped":
        child.wait()
    gone = f"{socket.gethostname()}:{child.pid}"
    assert matches.claim(match_id, gone, 600) == 1
    assert matches.claim(match_id, "next", 600) == 2  # its lease had ten minutes to run
    child.wait()
    row = db.session.get(Match, match_id)
    db.session.refresh(row)
    assert (row.worker, row.lost_workers, row.faults) == ("next", 1, 0)


def test_a_claim_whose_holder_runs_or_is_on_another_host_keeps_its_lease(
    challenge: tuple[Any, list[Any]],
) -> None:
    ladder, versions = challenge
    live = subprocess.Popen(["sleep", "600"])
    try:
        here = queue_match(ladder, versions)
        assert matches.claim(here, f"{socket.gethostname()}:{live.pid}", 600) == 1
        assert matches.claim(here, "next", 600) is None
    finally:
        live.kill()
        live.wait()
    elsewhere = queue_match(ladder, versions, seed=2)
    assert matches.claim(elsewhere, f"another-host.invalid:{live.pid}", 600) == 1
    assert matches.claim(elsewhere, "next", 600) is None
    assert matches.claim(elsewhere, matches.worker_name(), 600) is None  # not known gone here


def test_a_persons_table_whose_worker_is_lost_fails_and_is_never_dealt_again(
    challenge: tuple[Any, list[Any]],
) -> None:
    """A person has seen the cards of their table: a lost worker fails it with the reason,
    no other worker takes it over, and the reaper does not queue it again."""
    match_id = queue_match(*challenge)
    db.session.get(Match, match_id).kind = MatchKind.HUMAN
    db.session.commit()
    assert matches.claim(match_id, "dies", 0.01) == 1
    later = utcnow() + timedelta(seconds=1)
    assert matches.claim(match_id, "thief", 60) is None, "a lapsed table is not taken over"
    report = matches.take_back_lapsed(later)
    assert report.failed == [match_id] and report.requeued == []
    db.session.expire_all()
    match = db.session.get(Match, match_id)
    assert match.status == MatchStatus.FAILED and match.attempts == 1
    assert "a table is never dealt again" in match.error
    assert matches.claim(match_id, "late", 60) is None
