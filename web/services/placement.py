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
