"""Placement: the first ladder matches of a newly active version, counted from the matches table.

A version that becomes active owes ``PLACEMENT_MATCHES`` finished ladder matches; while it does,
its matches go to the ``urgent`` queue and the scheduler seats it first (``ladders``). Nothing
here writes: it only counts, so both the match service and the scheduler can ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from flask import current_app
from sqlalchemy import func, or_, select, true

from web.extensions import db
from web.models import (
    BotVersion,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Rating,
    VersionStatus,
)


def placement_played(version_ids: Sequence[int], cap: int | None = None) -> dict[int, int]:
    """Finished ladder matches played by each of ``version_ids``; with ``cap``, counted up to
    ``cap`` only (all placement needs), which on PostgreSQL reads at most ``cap`` seats of each
    version however many matches it has played."""
    if not version_ids:
        return {}
    if cap is not None and db.session.get_bind().dialect.name == "postgresql":
        return _played_capped(version_ids, cap)
    rows = db.session.execute(
        select(MatchSeat.bot_version_id, func.count())
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            MatchSeat.bot_version_id.in_(list(version_ids)),
            Match.kind == MatchKind.LADDER,
            Match.status == MatchStatus.FINISHED,
        )
        .group_by(MatchSeat.bot_version_id)
    ).all()
    return {int(version_id): int(n) for version_id, n in rows}


def _played_capped(version_ids: Sequence[int], cap: int) -> dict[int, int]:
    """One short index scan per version (``match_seats.bot_version_id``), stopped at ``cap``."""
    versions = select(func.unnest(list(version_ids)).label("version_id")).subquery()
    first = (
        select(MatchSeat.id)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            MatchSeat.bot_version_id == versions.c.version_id,
            Match.kind == MatchKind.LADDER,
            Match.status == MatchStatus.FINISHED,
        )
        .limit(cap)
        .lateral()
    )
    rows = db.session.execute(
        select(versions.c.version_id, func.count())
        .select_from(versions)
        .join(first, true())
        .group_by(versions.c.version_id)
    ).all()
    return {int(version_id): int(n) for version_id, n in rows}


def placement_left(version: BotVersion) -> int:
    """Placement matches ``version`` still has to play (0 unless it is active)."""
    if version.status != VersionStatus.ACTIVE:
        return 0
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    return max(0, wanted - placement_played([version.id], cap=wanted).get(version.id, 0))


def placing_bots(bot_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Of ``bot_ids``, the bots whose active version still owes placement matches: (played,
    owed in all) by bot. Such a bot has no rank until its placement is over. Three queries.

    Counting every version's matches would read each settled bot's seats, so a bot is known
    placed without counting when its active version is the only one of the bot ever activated
    and its ratings count at least the placement's rated matches (every rated ladder match of
    such a bot is that version's). The others (new, or with several versions) are counted, and
    only up to the placement's size.
    """
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    if not bot_ids or wanted <= 0:
        return {}
    ids = list(bot_ids)
    active: dict[int, int] = {}
    activated: dict[int, set[int]] = {}
    for bot_id, version_id, status, activated_at in db.session.execute(
        select(BotVersion.bot_id, BotVersion.id, BotVersion.status, BotVersion.activated_at)
        .where(
            BotVersion.bot_id.in_(ids),
            or_(BotVersion.status == VersionStatus.ACTIVE, BotVersion.activated_at.is_not(None)),
        )
        .order_by(BotVersion.number)
    ):
        if status == VersionStatus.ACTIVE:
            active[int(bot_id)] = int(version_id)  # the newest active version wins
        if activated_at is not None:
            activated.setdefault(int(bot_id), set()).add(int(version_id))
    if not active:
        return {}
    placed = {
        int(bot_id)
        for bot_id, games in db.session.execute(
            select(Rating.bot_id, func.sum(Rating.games))
            .where(Rating.bot_id.in_(list(active)))
            .group_by(Rating.bot_id)
        )
        if int(games or 0) >= wanted and activated.get(int(bot_id), set()) <= {active[bot_id]}
    }
    counted = {bot_id: v for bot_id, v in active.items() if bot_id not in placed}
    if not counted:
        return {}
    first = (
        select(MatchSeat.id)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            MatchSeat.bot_version_id == BotVersion.id,
            Match.kind == MatchKind.LADDER,
            Match.status == MatchStatus.FINISHED,
        )
        .limit(wanted)
        .correlate(BotVersion)
        .subquery()
    )
    played = select(func.count()).select_from(first).scalar_subquery()
    found = {
        int(bot_id): int(n)
        for bot_id, n in db.session.execute(
            select(BotVersion.bot_id, played).where(BotVersion.id.in_(list(counted.values())))
        )
    }
    return {bot_id: (n, wanted) for bot_id, n in found.items() if n < wanted}


def placement_owed(versions: Sequence[BotVersion]) -> dict[int, int]:
    """Placement matches left for each of ``versions`` (by id; 0 unless active), counted in
    one query for a whole list."""
    active = [v.id for v in versions if v.status == VersionStatus.ACTIVE]
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    played = placement_played(active, cap=wanted) if wanted > 0 else {}
    return {v: max(0, wanted - played.get(v, 0)) for v in active}
