"""Placement: the first ladder matches of a newly active version, counted from the matches table.

A version that becomes active owes ``PLACEMENT_MATCHES`` finished ladder matches; while it does,
its matches go to the ``urgent`` queue and the scheduler seats it first (``ladders``). Nothing
here writes: it only counts, so both the match service and the scheduler can ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from flask import current_app
from sqlalchemy import func, select, true

from web.extensions import db
from web.models import BotVersion, Match, MatchKind, MatchSeat, MatchStatus, VersionStatus


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


def placement_owed(versions: Sequence[BotVersion]) -> dict[int, int]:
    """Placement matches left for each of ``versions`` (by id; 0 unless active), counted in
    one query for a whole list."""
    active = [v.id for v in versions if v.status == VersionStatus.ACTIVE]
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    played = placement_played(active, cap=wanted) if wanted > 0 else {}
    return {v: max(0, wanted - played.get(v, 0)) for v in active}
