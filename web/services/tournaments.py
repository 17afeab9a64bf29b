"""Tournaments on the server: a round robin of bot versions, played by the worker pool.

Tables come from ``arena.matchmaking.round_robin_tables``; each table is played in every seat
rotation on one seed (mirrored deals), and its rotations form one deal group, sealed until all
are played (``web.services.sealing``). Tournament matches are not rated on the ladders.

Deal seeds are drawn from the operating system's CSPRNG, one per table, unless the tournament
is given a seed: then they are derived from it, so the deals are reproducible, and known in
advance to anyone who knows the seed (the tournament's page says so).
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from typing import Any

from sqlalchemy import select, update

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
from web.services.matches import Ended, create_match, when_ended
from web.services.seeds import new_seed


def create_tournament(
    name: str,
    game_config: dict[str, Any],
    version_ids: list[int],
    *,
    tables: int,
    seed: int | None = None,
    owner_id: int | None = None,
) -> Tournament:
    """Create a tournament and queue all its matches. Commits.

    Without ``seed`` every table's deal is secret until played; with one, every deal follows
    from it (reproducible, and known in advance to whoever knows the seed).
    """
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
    for index, table in enumerate(matchmaking.round_robin_tables(len(versions), players, tables)):
        deal_seed = new_seed() if seed is None else derived_seed(seed, index)
        group = uuid.uuid4().hex
        for seating in matchmaking.mirrored_seatings(list(table)):
            create_match(
                game_config,
                [versions[i] for i in seating],  # type: ignore[misc]
                seed=deal_seed,
                kind=MatchKind.TOURNAMENT,
                tournament_id=tournament.id,
                mirror_group=group,
                rated=False,
            )
    db.session.commit()
    return tournament


def derived_seed(seed: int, table: int) -> int:
    """Table ``table``'s deal seed in a reproducible tournament of seed ``seed`` (64 bits)."""
    digest = hashlib.sha256(f"kozyri-arena-tournament:{seed}:{table}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def reproducible(tournament: Tournament) -> bool:
    """Whether ``tournament``'s deals follow from a seed it was given (so are known in advance)."""
    return tournament.seed is not None


def progress(tournament: Tournament) -> dict[str, int]:
    """How many of the tournament's matches are in each status."""
    counts: dict[str, int] = defaultdict(int)
    for status in db.session.scalars(
        select(Match.status).where(Match.tournament_id == tournament.id)
    ):
        counts[str(status)] += 1
    return dict(counts)


def standings(tournament: Tournament) -> list[dict[str, Any]]:
    """Points per entry (``arena.matchmaking.place_points``), best first. Only reads: pages and
    the API call it; ``conclude`` stores the final table."""
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
    return table


def conclude(tournament_id: int) -> bool:
    """Mark the tournament finished, with its final standings, once none of its matches is
    queued or running; True if this call did. Commits.

    Called by the worker that finished one of its matches and by the reaper (a match that
    failed for good finishes nothing), never by a page: reading writes nothing.
    """
    tournament = db.session.get(Tournament, tournament_id)
    counts = progress(tournament) if tournament is not None else {}
    if tournament is None or tournament.status != TournamentStatus.RUNNING or not _done(counts):
        db.session.rollback()
        return False
    stmt = (
        update(Tournament)
        .where(Tournament.id == tournament_id, Tournament.status == TournamentStatus.RUNNING)
        .values(
            status=TournamentStatus.FINISHED, standings=standings(tournament), finished_at=utcnow()
        )
        .execution_options(synchronize_session=False)
    )
    won = bool(db.session.execute(stmt).rowcount == 1)  # type: ignore[attr-defined]
    db.session.commit()
    return won


@when_ended(MatchKind.TOURNAMENT)
def tournament_match_ended(ended: Ended) -> None:
    """A tournament match that finished or failed for good may have been its last."""
    found = db.session.scalar(select(Match.tournament_id).where(Match.id == ended.match_id))
    db.session.rollback()
    if found is not None:
        conclude(int(found))


def conclude_all() -> list[int]:
    """Conclude every running tournament that is done; their ids."""
    running = db.session.scalars(
        select(Tournament.id).where(Tournament.status == TournamentStatus.RUNNING)
    ).all()
    db.session.rollback()
    return [tid for tid in running if conclude(tid)]


def _done(counts: dict[str, int]) -> bool:
    return bool(counts) and not counts.get("queued") and not counts.get("running")
