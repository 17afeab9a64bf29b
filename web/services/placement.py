"""Placement: the first ladder matches of a newly active version.

A version that becomes active owes ``PLACEMENT_MATCHES`` finished ladder matches; while it does,
its matches go to the ``urgent`` queue and the scheduler seats it first (``ladders``). Each
version counts the finished ladder matches it sat in (``BotVersion.ladder_matches``): the match
service adds one to every version seated in a ladder match in the transaction that finishes it
(``count_finished``), so placement is read from the versions' rows, never from the matches.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from flask import current_app
from sqlalchemy import exists, select, update
from sqlalchemy.orm import aliased

from web.extensions import db
from web.models import BotVersion, Match, MatchKind, MatchSeat, Rating, VersionStatus


def count_finished(match_ids: Iterable[int]) -> None:
    """The ladder matches ``match_ids`` just finished (in this transaction): every version seated
    in one of them has played one more. Other kinds (validation, challenge, tournament) count
    nothing. Call it once per match, after the seats' and bots' changes and before the
    ratings: the versions' rows (flushed changes first, then each version in id order) are
    locked after the bots and before the ratings, the order activation and the owner's choice
    lock them in, so a finish and an activation never wait for each other in a circle. Does
    not commit."""
    ids = list(match_ids)
    if not ids:
        return
    db.session.flush()
    seated = Counter(
        int(version_id)
        for version_id in db.session.scalars(
            select(MatchSeat.bot_version_id)
            .join(Match, Match.id == MatchSeat.match_id)
            .where(Match.id.in_(ids), Match.kind == MatchKind.LADDER)
        )
    )
    for version_id in sorted(seated):
        db.session.execute(
            update(BotVersion)
            .where(BotVersion.id == version_id)
            .values(ladder_matches=BotVersion.ladder_matches + seated[version_id])
            .execution_options(synchronize_session=False)
        )


def placement_played(version_ids: Sequence[int], cap: int | None = None) -> dict[int, int]:
    """Finished ladder matches played by each of ``version_ids`` (read afresh from their rows);
    with ``cap``, at most ``cap``. Versions that played none are absent."""
    if not version_ids:
        return {}
    rows = db.session.execute(
        select(BotVersion.id, BotVersion.ladder_matches).where(
            BotVersion.id.in_(list(version_ids)), BotVersion.ladder_matches > 0
        )
    ).all()
    return {int(v): int(n) if cap is None else min(int(n), cap) for v, n in rows}


def placement_left(version: BotVersion) -> int:
    """Placement matches ``version`` still has to play (0 unless it is active)."""
    if version.status != VersionStatus.ACTIVE:
        return 0
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    return max(0, wanted - placement_played([version.id], cap=wanted).get(version.id, 0))


def placing_bots(bot_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Of ``bot_ids``, the bots whose active version (the newest active one) still owes
    placement matches: (played, owed in all) by bot. Such a bot has no rank until its
    placement is over. One query."""
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    if not bot_ids or wanted <= 0:
        return {}
    active: dict[int, int] = {}
    for bot_id, played in db.session.execute(
        select(BotVersion.bot_id, BotVersion.ladder_matches)
        .where(BotVersion.bot_id.in_(list(bot_ids)), BotVersion.status == VersionStatus.ACTIVE)
        .order_by(BotVersion.number)
    ):
        active[int(bot_id)] = int(played)  # the newest active version wins
    return {bot_id: (n, wanted) for bot_id, n in active.items() if n < wanted}


def placing_on_ladder(ladder_id: int) -> dict[int, tuple[int, int]]:
    """``placing_bots`` of every bot rated on the ladder, in one query that returns only the
    bots still placing (however many the ladder has)."""
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    if wanted <= 0:
        return {}
    newer = aliased(BotVersion)
    newest = ~exists().where(
        newer.bot_id == BotVersion.bot_id,
        newer.status == VersionStatus.ACTIVE,
        newer.number > BotVersion.number,
    )
    rows = db.session.execute(
        select(BotVersion.bot_id, BotVersion.ladder_matches)
        .join(Rating, Rating.bot_id == BotVersion.bot_id)
        .where(
            Rating.ladder_id == ladder_id,
            BotVersion.status == VersionStatus.ACTIVE,
            BotVersion.ladder_matches < wanted,
            newest,
        )
    ).all()
    return {int(bot_id): (int(n), wanted) for bot_id, n in rows}


def placement_owed(versions: Sequence[BotVersion]) -> dict[int, int]:
    """Placement matches left for each of ``versions`` (by id; 0 unless active), read in one
    query for a whole list."""
    active = [v.id for v in versions if v.status == VersionStatus.ACTIVE]
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    played = placement_played(active, cap=wanted) if wanted > 0 else {}
    return {v: max(0, wanted - played.get(v, 0)) for v in active}
