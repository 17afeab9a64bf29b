"""Tournaments on the server: a round robin of bot versions, played by the worker pool.

Tables come from ``arena.matchmaking.round_robin_tables``; each table is played in every seat
rotation on one seed (mirrored deals). Tournament matches are not rated on the ladders.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from sqlalchemy import select

from arena import matchmaking
from web.extensions import db
from web.models import (
    BotVersion,
    Match,
    MatchKind,
    MatchStatus,
    Tournament,
    TournamentStatus,
    utcnow,
)
from web.services.matches import create_match


def create_tournament(
    name: str,
    game_config: dict[str, Any],
    version_ids: list[int],
    *,
    tables: int,
    seed: int = 0,
    owner_id: int | None = None,
) -> Tournament:
    """Create a tournament and queue all its matches. Commits."""
    versions = [db.session.get(BotVersion, vid) for vid in version_ids]
    missing = [vid for vid, v in zip(version_ids, versions, strict=True) if v is None]
    if missing:
        raise LookupError(f"no bot version(s) {missing}")
    players = int(game_config["players"])
    tournament = Tournament(
        name=name,
        owner_id=owner_id,
        game_config=game_config,
        rounds=tables,
        seed=seed,
        entries=version_ids,
        status=TournamentStatus.RUNNING,
    )
    db.session.add(tournament)
    db.session.flush()
    rng = random.Random(seed)
    for table in matchmaking.round_robin_tables(len(versions), players, tables):
        deal_seed = rng.randrange(2**31)
        for seating in matchmaking.mirrored_seatings(list(table)):
            create_match(
                game_config,
                [versions[i] for i in seating],  # type: ignore[misc]
                seed=deal_seed,
                kind=MatchKind.TOURNAMENT,
                tournament_id=tournament.id,
                rated=False,
            )
    db.session.commit()
    return tournament


def progress(tournament: Tournament) -> dict[str, int]:
    """How many of the tournament's matches are in each status."""
    counts: dict[str, int] = defaultdict(int)
    for status in db.session.scalars(
        select(Match.status).where(Match.tournament_id == tournament.id)
    ):
        counts[str(status)] += 1
    return dict(counts)


def standings(tournament: Tournament) -> list[dict[str, Any]]:
    """Points per entry (``arena.matchmaking.place_points``), best first; stored when complete."""
    points: dict[int, float] = defaultdict(float)
    played: dict[int, int] = defaultdict(int)
    finished = db.session.scalars(
        select(Match).where(
            Match.tournament_id == tournament.id, Match.status == MatchStatus.FINISHED
        )
    ).all()
    for match in finished:
        earned = matchmaking.place_points(match.result["ranking"] if match.result else [])
        for seat, pts in zip(match.seats, earned, strict=True):
            points[seat.bot_version_id] += pts
            played[seat.bot_version_id] += 1
    table = [
        {"version_id": vid, "points": points[vid], "matches": played[vid]}
        for vid in tournament.entries
    ]
    table.sort(key=lambda row: -row["points"])
    counts = progress(tournament)
    if counts and not counts.get("queued") and not counts.get("running"):
        tournament.status = TournamentStatus.FINISHED
        tournament.standings = table
        tournament.finished_at = utcnow()
        db.session.commit()
    return table
