"""A retired version plays no more matches: its queued ladder and placement matches are
cancelled before they are played, and the scheduler counts them out."""

from __future__ import annotations

import random

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import require_bwrap, sample_version
from tests.web.services.test_newest_version import statuses
from web.extensions import db
from web.models import Match, MatchSeat, MatchStatus, VersionStatus
from web.services import ladders, matches, play

pytestmark = pytest.mark.services

S = VersionStatus


def _queued_of(version_id: int) -> list[Match]:
    return list(
        db.session.scalars(
            select(Match)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(MatchSeat.bot_version_id == version_id, Match.status == MatchStatus.QUEUED)
        )
    )


def _statuses_of(version_id: int) -> list[MatchStatus]:
    db.session.expire_all()
    rows = db.session.scalars(
        select(Match.status)
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .where(MatchSeat.bot_version_id == version_id)
    )
    return sorted(rows)


def test_a_retired_version_s_queued_ladder_and_placement_matches_are_cancelled(
    pg_app: Flask,
) -> None:
    require_bwrap()
    pg_app.config.update(QUEUE_TARGET=4, PLACEMENT_MATCHES=4)
    first = sample_version("python/challenge-greedy")
    sample_version("python/challenge-random")
    sample_version("python/challenge-random", "other-house")
    assert ladders.schedule_all(random.Random(1)) > 0
    queued = _queued_of(first.id)
    assert queued, "the scheduler seated the first version"
    running = queued[0]
    assert matches.claim(running.id, "busy", 60)  # one is being played already: it finishes

    second = sample_version("python/challenge-greedy")  # a newer version of the same bot
    assert statuses([first.id, second.id]) == [S.RETIRED, S.ACTIVE]
    left = _statuses_of(first.id)
    assert MatchStatus.QUEUED not in left
    assert left.count(MatchStatus.RUNNING) == 1
    assert left.count(MatchStatus.CANCELLED) == len(queued) - 1
    for match in db.session.scalars(select(Match).where(Match.status == MatchStatus.CANCELLED)):
        assert "retired" in (match.error or "")
        assert matches.claim(match.id, "late", 60) is None  # its message comes: nothing to play

    ladder = ladders.default_ladder("challenge")
    ladders.schedule_all(random.Random(2))
    assert ladders.pending(ladder) >= 4  # counted without the cancelled ones
    assert _queued_of(second.id), "the new version is seated in their place"
    assert not _queued_of(first.id)


def test_a_match_queued_for_a_version_retired_meanwhile_is_cancelled_not_played(
    pg_app: Flask,
) -> None:
    """The scheduler seated the version while its successor was being activated."""
    require_bwrap()
    first = sample_version("python/challenge-greedy")
    other = sample_version("python/challenge-random")
    second = sample_version("python/challenge-greedy")
    assert statuses([first.id, second.id]) == [S.RETIRED, S.ACTIVE]
    ladder = ladders.default_ladder("challenge")
    late = matches.create_match(ladder.game_config(), [first, other], ladder_id=ladder.id)
    db.session.commit()
    assert ladders.pending(ladder) == 1
    assert play.play_match(late.id).startswith("not claimed")
    db.session.expire_all()
    assert db.session.get(Match, late.id).status == MatchStatus.CANCELLED

    stray = matches.create_match(ladder.game_config(), [first, other], ladder_id=ladder.id)
    db.session.commit()
    pg_app.config.update(QUEUE_TARGET=0, PLACEMENT_MATCHES=0)
    ladders.schedule_all(random.Random(3))  # a scheduler pass counts it out
    db.session.expire_all()
    assert db.session.get(Match, stray.id).status == MatchStatus.CANCELLED
    assert ladders.pending(ladder) == 0
