"""Placement: the first ladder matches of a newly active version, counted from the matches table.

A version that becomes active owes ``PLACEMENT_MATCHES`` finished ladder matches; while it does,
its matches go to the ``urgent`` queue and the scheduler seats it first (``ladders``). Nothing
here writes: it only counts, so both the match service and the scheduler can ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from flask import current_app
from sqlalchemy import func, select

from web.extensions import db
from web.models import BotVersion, Match, MatchKind, MatchSeat, MatchStatus, VersionStatus


def placement_played(version_ids: Sequence[int]) -> dict[int, int]:
    """Finished ladder matches played by each of ``version_ids``."""
    if not version_ids:
        return {}
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


def placement_left(version: BotVersion) -> int:
    """Placement matches ``version`` still has to play (0 unless it is active)."""
    if version.status != VersionStatus.ACTIVE:
        return 0
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    return max(0, wanted - placement_played([version.id]).get(version.id, 0))


def placing_bots(bot_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Of ``bot_ids``, the bots whose active version still owes placement matches: (played,
    owed in all) by bot. Such a bot has no rank until its placement is over. One query."""
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    if not bot_ids or wanted <= 0:
        return {}
    # Each version's matches are counted only up to ``wanted``: a page of a ladder with long
    # settled bots reads at most that many seat rows per bot, not all of their matches.
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
    rows = db.session.execute(
        select(BotVersion.bot_id, played)
        .where(BotVersion.bot_id.in_(list(bot_ids)), BotVersion.status == VersionStatus.ACTIVE)
        .order_by(BotVersion.number)
    ).all()
    newest = {int(bot_id): int(n) for bot_id, n in rows}  # the newest active version wins
    return {bot_id: (n, wanted) for bot_id, n in newest.items() if n < wanted}
