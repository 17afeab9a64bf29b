"""Each version's count of finished ladder matches (``BotVersion.ladder_matches``, which
placement and the scheduler read instead of the matches) stays exactly what counting the matches
gives: after ladder matches finish (rated or not, once however often a result comes), and not
after validation matches, challenges, failures or cancellations; through retirement, the owner's
choice of an older version, and the bot's deletion."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import require_bwrap, sample_version
from web.extensions import db
from web.models import Bot, BotVersion, Match, MatchKind, MatchSeat, MatchStatus, VersionStatus
from web.services import ladders, lifecycle, matches, placement, play, versions

pytestmark = pytest.mark.services


def _outcome(players: int = 2) -> Any:
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


def _counted() -> dict[int, int]:
    """Every version's ``ladder_matches``, read afresh."""
    db.session.expire_all()
    return {v.id: v.ladder_matches for v in db.session.scalars(select(BotVersion))}


def _recounted() -> dict[int, int]:
    """What counting the finished ladder matches gives, for every version."""
    played = dict(
        db.session.execute(
            select(MatchSeat.bot_version_id, func.count())
            .join(Match, Match.id == MatchSeat.match_id)
            .where(Match.kind == MatchKind.LADDER, Match.status == MatchStatus.FINISHED)
            .group_by(MatchSeat.bot_version_id)
        ).all()
    )
    return {v: int(played.get(v, 0)) for v in db.session.scalars(select(BotVersion.id))}


def _queue(seated: list[Any], **kwargs: Any) -> int:
    ladder = ladders.default_ladder("challenge")
    kwargs.setdefault("ladder_id", ladder.id)
    match = matches.create_match(ladder.game_config(), seated, **kwargs)
    db.session.commit()
    return match.id


def _played(match_id: int) -> bool:
    """Claimed and finished with a stand-in result (no bot runs)."""
    attempt = matches.claim(match_id, "test", 60)
    assert attempt is not None
    return play.finish(match_id, attempt, _outcome(), "replays/x.json")


@pytest.fixture
def pair(pg_app: Flask) -> list[Any]:
    """Two active sample versions on the challenge ladder, placement of 3 matches."""
    require_bwrap()
    pg_app.config.update(PLACEMENT_MATCHES=3)
    found = [
        sample_version("python/challenge-greedy"),
        sample_version("python/challenge-random"),
    ]
    db.session.commit()
    return found


def test_a_finished_ladder_match_counts_once_for_each_version_seated(pair: list[Any]) -> None:
    greedy, rand = pair
    assert _counted() == _recounted() == {greedy.id: 0, rand.id: 0}, "validation counts nothing"
    first = _queue(pair)
    assert _counted()[greedy.id] == 0, "queued is not played"
    assert _played(first)
    assert _counted() == _recounted() == {greedy.id: 1, rand.id: 1}
    assert not play.finish(first, 1, _outcome(), "replays/x.json"), "a second result is a no-op"
    assert _counted() == {greedy.id: 1, rand.id: 1}
    unrated = _queue(pair, rated=False)
    assert _played(unrated)
    assert _counted() == _recounted() == {greedy.id: 2, rand.id: 2}, "rated or not, it counts"
    db.session.refresh(greedy)
    assert placement.placement_left(greedy) == 1
    assert placement.placing_bots([greedy.bot_id]) == {greedy.bot_id: (2, 3)}
    assert placement.placement_owed([greedy, rand]) == {greedy.id: 1, rand.id: 1}


def test_challenges_failures_and_cancellations_count_nothing(
    pg_app: Flask, pair: list[Any]
) -> None:
    greedy, rand = pair
    challenge = _queue(pair, kind=MatchKind.CHALLENGE, rated=False, ladder_id=None)
    assert _played(challenge), "an author's challenge (unrated, no ladder) is played"
    pg_app.config["MAX_ATTEMPTS"] = 1  # its one attempt fails: the match fails for good
    failing = _queue(pair)
    attempt = matches.claim(failing, "test", 60)
    assert attempt is not None
    assert matches.release(failing, attempt, "boom") == MatchStatus.FAILED
    cancelled = _queue(pair)
    lifecycle.retire(db.session.get(BotVersion, rand.id))
    db.session.commit()
    assert db.session.get(Match, cancelled).status == MatchStatus.CANCELLED
    assert _counted() == _recounted() == {greedy.id: 0, rand.id: 0}


def test_counts_stay_through_retirement_choice_and_deletion(pair: list[Any]) -> None:
    greedy, rand = pair
    for _ in range(2):
        assert _played(_queue(pair))
    newer = sample_version("python/challenge-greedy")  # version 2 of the same bot
    assert newer.bot_id == greedy.bot_id and newer.number == 2
    db.session.refresh(greedy)
    assert greedy.status == VersionStatus.RETIRED
    assert _counted() == _recounted() == {greedy.id: 2, rand.id: 2, newer.id: 0}
    assert placement.placing_bots([greedy.bot_id]) == {greedy.bot_id: (0, 3)}, "the new one"
    assert _played(_queue([newer, rand]))
    lifecycle.choose(db.session.get(Bot, greedy.bot_id), 1)  # the owner takes version 1 back
    db.session.commit()
    assert _counted() == _recounted() == {greedy.id: 2, rand.id: 3, newer.id: 1}
    assert placement.placing_bots([greedy.bot_id]) == {greedy.bot_id: (2, 3)}, "its own count"
    running = _queue([greedy, rand])
    attempt = matches.claim(running, "test", 60)
    assert attempt is not None
    bot = db.session.get(Bot, greedy.bot_id)
    versions.delete_bot(bot, bot.name)  # a match already running still ends and counts
    assert play.finish(running, attempt, _outcome(), "replays/x.json")
    assert _counted() == _recounted() == {greedy.id: 3, rand.id: 4, newer.id: 1}
    assert placement.placing_bots([rand.bot_id]) == {}, "placed: 4 of 3"
