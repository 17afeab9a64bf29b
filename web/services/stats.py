"""A bot's statistics, whole or of one version: win rate and average place by seat, by table
size, by opponent and by day; errors, timeouts and strikes by kind; think time per move.

Every figure is aggregated in SQL over a bounded window: the bot's (or version's) most recent
``WINDOW`` finished matches, found through ``ix_match_seats_bot_match`` or
``ix_match_seats_version_match``, so a request costs the same at a thousand matches as at a
million. Validation matches are not counted (as in ``web.services.versions.records``).

Hidden information: a finished match whose deal group is still sealed (``web.services.sealing``)
is left out until the whole group is done, so no figure tells anything about a deal whose other
rotations are still to be played.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, Subquery, case, exists, func, select
from sqlalchemy.orm import aliased, joinedload

from web.extensions import db
from web.models import Bot, Match, MatchKind, MatchSeat, MatchStatus
from web.services.sealing import PENDING

WINDOW = 2000
"""How many of the bot's most recent seats the statistics look at (those not counted among
them, such as validation or unfinished matches, are left out, not replaced by older ones)."""

OPPONENTS = 12
"""How many opponents (the most met) are listed."""

DAYS = 60
"""How many of the most recent days with a match the day-by-day figures cover."""

ERROR_STATUSES = (
    "timeout",
    "crash",
    "illegal_action",
    "invalid_output",
    "output_flood",
    "init_failure",
)
"""Seat statuses that say the bot erred: its last strike, or the failure it forfeited by."""


# --- each seat's think time, summarised when its match finishes --------------------------------


@dataclass(frozen=True)
class ThinkSummary:
    """One seat's think time over its moves in one match, in milliseconds."""

    moves: int
    p50: float | None
    p90: float | None
    most: float | None


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile of ``values`` (``fraction`` 0.5: the median); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(round(fraction * len(ordered), 9)))
    return ordered[min(rank, len(ordered)) - 1]


def think_summary(steps: Sequence[dict[str, Any]], seat: int) -> ThinkSummary:
    """Summarise the moves ``seat`` thought about in a replay's ``steps`` (moves played for it
    by default after it forfeited, and steps without a time, are not its thinking)."""
    times = [
        float(step["time_ms"])
        for step in steps
        if step.get("seat") == seat
        and step.get("time_ms") is not None
        and step.get("status") != "forfeited"
    ]
    return ThinkSummary(
        len(times), percentile(times, 0.5), percentile(times, 0.9), max(times, default=None)
    )


# --- the statistics ---------------------------------------------------------------------------


def _cutoff(bot_id: int, version_id: int | None) -> int:
    """The oldest match id among the bot's (or version's) ``WINDOW`` most recent seats (0 if it
    has none): one walk of ``ix_match_seats_bot_match`` (or ``_version_match``), newest first.

    The window is found apart from the figures so that every query over it is a plain index
    range, whose plan stays right when the database reuses a generic one for all bots."""
    # One version's seats are its bot's: naming only the version walks its own index.
    mine = (
        MatchSeat.bot_id == bot_id if version_id is None else MatchSeat.bot_version_id == version_id
    )
    recent = (
        select(MatchSeat.match_id)
        .where(mine)
        .order_by(MatchSeat.match_id.desc())
        .limit(WINDOW)
        .subquery()
    )
    return int(db.session.scalar(select(func.min(recent.c.match_id))) or 0)


def _window(bot_id: int, version_id: int | None) -> Subquery:
    """The counted seats among the bot's (or version's, which must be the bot's) ``WINDOW``
    most recent ones, with their table size: finished, not validation, not sealed."""
    pending = aliased(Match)
    sealed_group = exists().where(
        pending.mirror_group == Match.mirror_group, pending.status.in_(PENDING)
    )
    sealed_deal = exists().where(
        pending.tournament_id == Match.tournament_id,
        pending.seed == Match.seed,
        pending.status.in_(PENDING),
    )
    others = aliased(MatchSeat)
    size = select(func.count()).where(others.match_id == MatchSeat.match_id).scalar_subquery()
    mine = (
        MatchSeat.bot_id == bot_id if version_id is None else MatchSeat.bot_version_id == version_id
    )
    stmt = (
        select(
            MatchSeat.match_id,
            MatchSeat.seat,
            MatchSeat.place,
            MatchSeat.status,
            MatchSeat.strikes,
            MatchSeat.moves,
            MatchSeat.think_ms_p50,
            MatchSeat.think_ms_p90,
            MatchSeat.think_ms_max,
            Match.finished_at,
            size.label("players"),
        )
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            mine,
            MatchSeat.match_id >= _cutoff(bot_id, version_id),
            Match.status == MatchStatus.FINISHED,
            Match.kind != MatchKind.VALIDATION,
            ~sealed_group,
            ~sealed_deal,
        )
    )
    return stmt.subquery("recent")


def _record_columns(w: Subquery) -> list[Any]:
    return [
        func.count().label("matches"),
        func.sum(case((w.c.place == 1, 1), else_=0)).label("wins"),
        func.avg(w.c.place).label("average_place"),
    ]


def _record(row: Any) -> dict[str, Any]:
    matches = int(row.matches or 0)
    wins = int(row.wins or 0)
    return {
        "matches": matches,
        "wins": wins,
        "win_rate": round(wins / matches, 4) if matches else None,
        "average_place": round(float(row.average_place), 3)
        if row.average_place is not None
        else None,
    }


def _grouped(w: Subquery, key: Any, name: str) -> list[dict[str, Any]]:
    stmt: Select[Any] = select(key.label("key"), *_record_columns(w)).group_by(key).order_by(key)
    return [{name: row.key, **_record(row)} for row in db.session.execute(stmt)]


def _by_day(w: Subquery) -> list[dict[str, Any]]:
    day = func.date(w.c.finished_at)
    stmt = (
        select(day.label("key"), *_record_columns(w)).group_by(day).order_by(day.desc()).limit(DAYS)
    )
    rows = [{"day": str(row.key), **_record(row)} for row in db.session.execute(stmt)]
    return rows[::-1]


def _by_opponent(w: Subquery, bot_id: int) -> list[dict[str, Any]]:
    other = aliased(MatchSeat)
    stmt = (
        select(
            other.bot_id,
            func.count().label("matches"),
            func.sum(case((w.c.place < other.place, 1), else_=0)).label("ahead"),
            func.sum(case((w.c.place == 1, 1), else_=0)).label("wins"),
            func.avg(w.c.place).label("average_place"),
        )
        .join(other, other.match_id == w.c.match_id)
        .where(other.bot_id != bot_id)
        .group_by(other.bot_id)
        .order_by(func.count().desc(), other.bot_id)
        .limit(OPPONENTS)
    )
    rows = db.session.execute(stmt).all()
    named = select(Bot.id, Bot.name).where(Bot.id.in_([r.bot_id for r in rows]))
    names = {bot_id: name for bot_id, name in db.session.execute(named)}
    return [
        {
            "bot_id": row.bot_id,
            "name": names.get(row.bot_id, "?"),
            **_record(row),
            "ahead": int(row.ahead or 0),
            "ahead_rate": round(int(row.ahead or 0) / int(row.matches), 4),
        }
        for row in rows
    ]


def _errors(w: Subquery) -> dict[str, Any]:
    counted = (
        select(w.c.status, func.count()).where(w.c.status.in_(ERROR_STATUSES)).group_by(w.c.status)
    )
    kinds = {status: int(n) for status, n in db.session.execute(counted)}
    row = db.session.execute(
        select(
            func.coalesce(func.sum(w.c.strikes), 0),
            func.count().filter(w.c.strikes > 0),
            func.count().filter(w.c.status.in_(ERROR_STATUSES)),
        )
    ).one()
    return {
        "matches_with_errors": int(row[2]),
        "by_kind": {kind: int(kinds.get(kind, 0)) for kind in ERROR_STATUSES},
        "timeouts": int(kinds.get("timeout", 0)),
        "strikes": int(row[0]),
        "matches_with_strikes": int(row[1]),
    }


def _think(w: Subquery) -> dict[str, Any]:
    """Think time per move over the window's matches (``WINDOW`` rows at most): the median of
    each match's median move, the 90th percentile of each match's 90th percentile, the most."""
    rows = db.session.execute(
        select(w.c.moves, w.c.think_ms_p50, w.c.think_ms_p90, w.c.think_ms_max).where(w.c.moves > 0)
    ).all()
    medians = [float(r[1]) for r in rows if r[1] is not None]
    slow = [float(r[2]) for r in rows if r[2] is not None]
    most = [float(r[3]) for r in rows if r[3] is not None]
    return {
        "matches": len(rows),
        "moves": sum(int(r[0]) for r in rows),
        "p50_ms": _ms(percentile(medians, 0.5)),
        "p90_ms": _ms(percentile(slow, 0.9)),
        "max_ms": _ms(max(most, default=None)),
    }


def _ms(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None


def bot_stats(bot: Bot, version_id: int | None = None) -> dict[str, Any]:
    """The statistics of ``bot``, or of its version ``version_id``, over its most recent
    ``WINDOW`` counted matches."""
    w = _window(bot.id, version_id)
    total = db.session.execute(select(*_record_columns(w))).one()
    return {
        "bot_id": bot.id,
        "version_id": version_id,
        "window": WINDOW,
        "overall": _record(total),
        "by_seat": _grouped(w, w.c.seat, "seat"),
        "by_players": _grouped(w, w.c.players, "players"),
        "by_opponent": _by_opponent(w, bot.id),
        "by_day": _by_day(w),
        "errors": _errors(w),
        "think": _think(w),
    }


# --- an owner's matches with errors ----------------------------------------------------------


def error_seats(owner_id: int, bot_id: int | None = None) -> Select[Any]:
    """The owner's seats that ended in an error, newest match first (for ``queries.paginate``)."""
    stmt = (
        select(MatchSeat)
        .join(Bot, Bot.id == MatchSeat.bot_id)
        .where(Bot.owner_id == owner_id, MatchSeat.status.in_(ERROR_STATUSES))
        .order_by(MatchSeat.match_id.desc(), MatchSeat.seat)
        .options(
            joinedload(MatchSeat.match), joinedload(MatchSeat.bot), joinedload(MatchSeat.version)
        )
    )
    if bot_id is not None:
        stmt = stmt.where(MatchSeat.bot_id == bot_id)
    return stmt


def error_row(seat: MatchSeat, hidden: bool) -> dict[str, Any]:
    """One seat of the owner's error list; the place is withheld while the match is sealed."""
    match = seat.match
    outcome = match.outcome or {}
    forfeited = list(outcome.get("forfeited") or [])
    messages = list(outcome.get("messages") or [])
    return {
        "match_id": match.id,
        "kind": str(match.kind),
        "finished_at": match.finished_at.isoformat() if match.finished_at else None,
        "bot_id": seat.bot_id,
        "bot": seat.bot.name,
        "version": seat.version.number,
        "seat": seat.seat,
        "status": seat.status,
        "strikes": seat.strikes,
        "forfeited": bool(forfeited[seat.seat]) if seat.seat < len(forfeited) else False,
        "message": messages[seat.seat] if seat.seat < len(messages) else None,
        "place": None if hidden else seat.place,
    }
