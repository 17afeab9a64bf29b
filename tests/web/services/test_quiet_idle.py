"""A quiet idle: a ladder whose bots are settled (every sigma below ``SETTLED_SIGMA``, no
placement owed) gets one table per ``SETTLED_INTERVAL``; a newly active version wakes it at the
next scheduler pass."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from flask import Flask
from sqlalchemy import select, update

from tests.web.conftest import require_bwrap, sample_version
from web.extensions import db
from web.models import Ladder, Match, MatchStatus, Rating, utcnow
from web.services import ladders

pytestmark = pytest.mark.services


def _settle(ladder: Ladder, sigma: float = 1.0) -> None:
    db.session.execute(update(Rating).where(Rating.ladder_id == ladder.id).values(sigma=sigma))
    db.session.commit()


def _play_out(ladder: Ladder, age: timedelta = timedelta(0)) -> None:
    """Every queued match of ``ladder`` finished, queued ``age`` ago (no result is needed for
    the scheduler: it counts matches, not what they said)."""
    db.session.execute(
        update(Match)
        .where(Match.ladder_id == ladder.id)
        .values(status=MatchStatus.FINISHED, created_at=utcnow() - age)
    )
    db.session.commit()


def _queued(ladder: Ladder) -> list[Match]:
    query = select(Match).where(Match.ladder_id == ladder.id, Match.status == MatchStatus.QUEUED)
    return list(db.session.scalars(query))


@pytest.fixture
def ladder(pg_app: Flask) -> Ladder:
    """The challenge ladder with two house bots, placement off (so only sigma decides)."""
    require_bwrap()
    pg_app.config.update(QUEUE_TARGET=4, PLACEMENT_MATCHES=0, SETTLED_INTERVAL=600.0)
    sample_version("python/challenge-greedy")
    sample_version("python/challenge-random")
    return ladders.default_ladder("challenge")


def test_a_settled_ladder_plays_one_table_per_interval(ladder: Ladder) -> None:
    rng = random.Random(3)
    assert not ladders.settled(ladder), "fresh bots are not settled"
    assert ladders.schedule_all(rng) >= 4, "an unsettled ladder is topped up to its target"
    _settle(ladder)
    _play_out(ladder)
    assert ladders.settled(ladder)
    assert ladders.resting(ladder), "its last table was queued just now"
    assert ladders.schedule_all(rng) == 0

    _play_out(ladder, age=timedelta(seconds=601))
    one_table = ladders.schedule_all(rng)
    assert one_table == (ladder.players if ladder.mirrored else 1), "one table, not the target"
    assert ladders.schedule_all(rng) == 0, "a table pending: nothing more"
    _play_out(ladder)
    assert ladders.schedule_all(rng) == 0, "finished, but within the interval"


def test_a_new_version_wakes_a_settled_ladder_at_the_next_pass(
    pg_app: Flask, ladder: Ladder
) -> None:
    rng = random.Random(4)
    ladders.schedule_all(rng)
    _settle(ladder)
    _play_out(ladder)
    assert ladders.schedule_all(rng) == 0
    pg_app.config["PLACEMENT_MATCHES"] = 10
    newcomer = sample_version("python/challenge-random", "someone", house=False)
    assert not ladders.settled(ladder)
    assert ladders.schedule_all(rng) >= 4
    seated = [seat.bot_version_id for m in _queued(ladder) for seat in m.seats]
    assert newcomer.id in seated, "its placement matches are queued"


def test_sigma_above_the_threshold_or_the_setting_off_keeps_the_ladder_busy(
    pg_app: Flask, ladder: Ladder
) -> None:
    rng = random.Random(5)
    ladders.schedule_all(rng)
    _play_out(ladder)
    _settle(ladder, sigma=3.0)  # above the default 2.5: not settled yet
    assert not ladders.settled(ladder)
    assert ladders.schedule_all(rng) >= 4
    _play_out(ladder)
    _settle(ladder, sigma=0.5)
    pg_app.config["SETTLED_SIGMA"] = 0  # off
    assert not ladders.settled(ladder)
    assert ladders.schedule_all(rng) >= 4
