"""The collusion report of the site: finished matches and their replays, handed to
``arena.collusion`` with each seat's author (the owner of its bot).

Only finished matches count, and of those only the ones whose deal group is no longer sealed
(``web.services.sealing``): the report must say nothing about a table still being played.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from arena.collusion import ALPHA, MatchData, Report, analyse
from arena.replay import ReplayError, check_replay
from web.extensions import db
from web.models import Bot, Match, MatchSeat, MatchStatus
from web.services import sealing
from web.storage import get_storage

DEFAULT_MATCHES = 100
MAX_MATCHES = 1000
"""The report reads and re-plays every replay it covers (a long match, such as a 4-seat Svoi
Kozyri match of the default length, takes about 80 ms): the newest this many at most."""


@dataclass(frozen=True)
class Scope:
    """Which matches a report covers and at which significance level it flags."""

    game: str | None = None
    matches: int = DEFAULT_MATCHES
    alpha: float = ALPHA


@dataclass(frozen=True)
class Gathered:
    """The matches of a report, and how many finished matches had no readable replay."""

    data: list[MatchData]
    unreadable: int


def report(scope: Scope) -> tuple[Report, int]:
    """The report over ``scope``, and the number of matches left out for want of a replay."""
    gathered = gather(scope)
    return analyse(gathered.data, alpha=scope.alpha), gathered.unreadable


def gather(scope: Scope) -> Gathered:
    """The newest ``scope.matches`` finished, unsealed matches (of ``scope.game``) as data."""
    query = (
        select(Match)
        .where(Match.status == MatchStatus.FINISHED, Match.replay_path.is_not(None))
        .options(selectinload(Match.seats).selectinload(MatchSeat.bot).selectinload(Bot.owner))
        .order_by(Match.finished_at.desc(), Match.id.desc())
    )
    if scope.game is not None:
        query = query.where(Match.game_config["game"].as_string() == scope.game)
    found = list(db.session.scalars(query.limit(scope.matches)))
    hidden = sealing.hidden_ids(found)
    data, unreadable = [], 0
    for match in found:
        if match.id in hidden:
            continue
        replay = _replay(match)
        if replay is None or len(replay.authors) != len(replay.replay["seats"]):
            unreadable += 1
            continue
        data.append(replay)
    return Gathered(data, unreadable)


def _replay(match: Match) -> MatchData | None:
    try:
        raw = get_storage().read(match.replay_path or "")
        replay = check_replay(orjson.loads(raw))
    except (OSError, ValueError, ReplayError):
        return None
    seats = sorted(match.seats, key=lambda s: s.seat)
    return MatchData(tuple(s.bot.owner.username for s in seats), replay)
