"""The scheduler seats a placing version one whole table at a time: the next table is chosen
only when every match of the previous one has finished and been rated, so that it brackets the
rating those results gave (``arena.matchmaking.placement_table``)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import require_bwrap, sample_version
from web.extensions import db
from web.models import Match, MatchSeat, MatchStatus, Rating
from web.services import ladders, matches, play

pytestmark = pytest.mark.services


def _outcome(newcomer_seat: int) -> Any:
    """A two-seat result the newcomer wins."""
    from web.engine import Outcome

    ranking = [1, 2] if newcomer_seat == 0 else [2, 1]
    return Outcome(
        result={"ranking": ranking, "scores": [0.0, 0.0], "detail": {}},
        ranking=ranking,
        scores=[0.0, 0.0],
        statuses=["ok"] * 2,
        forfeited=[False] * 2,
        strikes=[0] * 2,
        cpu_seconds=[0.1] * 2,
        messages=[None] * 2,
        stderr=[""] * 2,
        replay={},
    )


def _queued_of(version_id: int) -> list[Match]:
    db.session.expire_all()
    return list(
        db.session.scalars(
            select(Match)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(MatchSeat.bot_version_id == version_id, Match.status == MatchStatus.QUEUED)
            .order_by(Match.id)
        )
    )


def _won(match: Match, version_id: int) -> None:
    """Claimed and finished with the newcomer first (no bot runs)."""
    seat = next(s.seat for s in match.seats if s.bot_version_id == version_id)
    attempt = matches.claim(match.id, "test", 60)
    assert attempt is not None
    assert play.finish(match.id, attempt, _outcome(seat), "replays/x.json")


def test_placement_waits_for_each_whole_table_and_climbs_with_the_results(
    pg_app: Flask,
) -> None:
    require_bwrap()
    pg_app.config.update(QUEUE_TARGET=0, PLACEMENT_MATCHES=6)
    house = [
        sample_version("python/challenge-greedy"),
        sample_version("python/challenge-random"),
        sample_version("python/challenge-random", "other-house"),
    ]
    for version in house:
        version.ladder_matches = 50  # placed long ago
    db.session.commit()
    newcomer = sample_version("python/challenge-heuristic", "bob", house=False)
    ladder = ladders.default_ladder("challenge")
    per_table = ladder.players if ladder.mirrored else 1
    assert per_table == 2  # a mirrored two-seat ladder: a table is two matches
    mus = []
    for table in range(6 // per_table):
        ladders.schedule_all(random.Random(table))
        queued = _queued_of(newcomer.id)
        assert len(queued) == per_table, f"table {table}: one whole table in flight"
        assert len({m.mirror_group for m in queued}) == 1
        _won(queued[0], newcomer.id)
        ladders.schedule_all(random.Random(100 + table))
        # Half the table is played: the next one waits for the other half's result.
        assert [m.id for m in _queued_of(newcomer.id)] == [queued[1].id]
        _won(queued[1], newcomer.id)
        db.session.expire_all()
        rating = db.session.scalars(
            select(Rating).where(Rating.bot_id == newcomer.bot_id, Rating.ladder_id == ladder.id)
        ).one()
        mus.append(rating.mu)
    ladders.schedule_all(random.Random(7))
    assert not _queued_of(newcomer.id), "placement over: six matches, no more urgent tables"
    assert ladders.placement_left(newcomer) == 0
    assert all(a < b for a, b in itertools.pairwise(mus))  # every table won: the estimate climbs
