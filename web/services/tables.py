"""People at the tables: a logged-in user plays one seat of a match against bots.

A table is a match of kind ``human``: one seat is the person's (a bot row of kind ``human``,
one per user, that no list, ladder or page shows), the others are bots: the house's sample
bots or active bots whose owners let people play them (``Bot.humans_may_play``). The match is
queued like a challenge (ahead of ladder matches), played by a worker through the same referee
(the person's seat is an ``arena.remote_seat.RemoteSeat``), never mirrored, never rated on a
bot ladder, and played once (a lost worker fails it rather than deal the cards again).

The worker and the site meet in Redis (``web.services.human_seat`` is the worker's side): at the
person's turn the worker writes the turn (the seat's own observation, the legal actions, the
time left) at ``<prefix>table:<match>:turn``; the site reads it for the seat's user only and
pushes the user's answer on the list ``<prefix>table:<match>:answer``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import orjson
from flask import current_app
from limits import parse
from sqlalchemy import func, select

from arena.games import game_class, make_game
from arena.games.base import ConfigError
from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    BotVersion,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    User,
    VersionStatus,
    utcnow,
)
from web.services.matches import create_match
from web.services.queue import app_redis

HUMAN = "human"
"""``Bot.kind`` of a person's seat."""
OPEN = (MatchStatus.QUEUED, MatchStatus.RUNNING)
JSON = dict[str, Any]
TURN_TTL = 3600
"""Seconds a turn or an answer stays in Redis at most (the match is long over by then)."""


class TableError(ValueError):
    """The table cannot be opened; the message says why, for the person."""


class TableLimit(Exception):
    """Too many tables are open (the user's, or the server's): try again later."""


def table_bound() -> float:
    """Seconds a table may last before every answer is late: ``HUMAN_MATCH_MAX``, and within
    the worker task's time limit (which follows ``MATCH_BUDGET``)."""
    cfg = current_app.config
    return max(0.0, min(float(cfg["HUMAN_MATCH_MAX"]), float(cfg["MATCH_BUDGET"]) - 60))


def turn_key(prefix: str, match_id: int) -> str:
    return f"{prefix}table:{match_id}:turn"


def answer_key(prefix: str, match_id: int) -> str:
    return f"{prefix}table:{match_id}:answer"


def left_key(prefix: str, match_id: int) -> str:
    """Set when the person left the table: the worker asks the seat nothing more."""
    return f"{prefix}table:{match_id}:left"


def _prefix() -> str:
    return str(current_app.config.get("BROKER_PREFIX") or "")


# --- who sits ------------------------------------------------------------------------------


def person_version(user: User) -> BotVersion:
    """The version that stands for ``user`` at a table (made on first use). Does not commit."""
    name = f"@{user.username}"
    bot = db.session.scalar(select(Bot).where(Bot.owner_id == user.id, Bot.name == name))
    if bot is None:
        bot = Bot(owner_id=user.id, name=name, kind=HUMAN, status=BotStatus.DELETED)
        bot.deleted_at = utcnow()
        db.session.add(bot)
        db.session.flush()
        version = BotVersion(
            bot_id=bot.id, number=1, sha256="0" * 64, status=VersionStatus.RETIRED, games=[]
        )
        db.session.add(version)
        db.session.flush()
        return version
    first: BotVersion = bot.versions[0]
    return first


def opponents(game: str) -> list[Bot]:
    """The bots a person may seat at a table of ``game``: the house's and those whose owners
    allow it, active, with a version playing now that plays the game."""
    rows = db.session.scalars(
        select(Bot)
        .join(User, User.id == Bot.owner_id)
        .where(
            Bot.status == BotStatus.ACTIVE,
            Bot.kind != HUMAN,
            (User.is_house.is_(True)) | (Bot.humans_may_play.is_(True)),
        )
        .order_by(User.is_house.desc(), Bot.name)
    ).all()
    return [b for b in rows if (v := b.active_version()) and game in (v.games or [])]


def allow_people(bot: Bot, allowed: bool) -> None:
    """The owner's choice: people may (or may no longer) seat ``bot`` at tables. Commits."""
    bot.humans_may_play = allowed
    db.session.commit()


def human_seat(match: Match) -> MatchSeat | None:
    """The person's seat of a table (None for any other match)."""
    if match.kind != MatchKind.HUMAN:
        return None
    return next((s for s in match.seats if s.bot.kind == HUMAN), None)


def is_human(match: Match) -> bool:
    return human_seat(match) is not None


# --- opening a table -----------------------------------------------------------------------


def fewest_deals(game: str) -> int | None:
    """The shortest match ``game`` can be asked for in deals (None: it has no such length)."""
    cls = game_class(game)
    for deals in range(1, 7):
        try:
            params = cls.length_params(deals)
            for name, value in params.items():
                cls.spec.param(name).check(value)
        except ConfigError:
            continue
        return deals
    return None


def table_config(
    game: str,
    variant: str | None = None,
    players: int | None = None,
    deals: int | None = None,
    params: JSON | None = None,
) -> JSON:
    """The game configuration of a table (``make_game``'s arguments, every one spelt out):
    ``deals`` sets its length as ``arena play --deals`` does, ``params`` any parameter.
    ``TableError`` for a game, variant, size or parameter that does not exist."""
    try:
        cls = game_class(game)
        chosen = dict(cls.length_params(deals)) if deals is not None else {}
        chosen.update(params or {})
        made = make_game(game, players=players, variant=variant or None, params=chosen)
    except (ConfigError, KeyError, ValueError, TypeError) as exc:
        raise TableError(f"no such table: {exc}") from None
    return dict(made.config())


def create(user: User, config: JSON, seat: int, opponent_ids: list[int]) -> Match:
    """Queue a table of ``config`` (``table_config``), ``user`` at ``seat`` and the named bots
    at the other seats in order. Commits. ``TableError``, ``TableLimit``."""
    try:
        versions = _seating(user, config, seat, opponent_ids)
        _within_limits(user)
    except (TableError, TableLimit):
        db.session.rollback()
        raise
    match = create_match(config, versions, kind=MatchKind.HUMAN, rated=False)
    match.max_attempts = 1  # never deal the same cards to the person twice
    db.session.commit()
    return match


def _seating(user: User, config: JSON, seat: int, opponent_ids: list[int]) -> list[BotVersion]:
    game, players = str(config["game"]), int(config["players"])
    if not 0 <= seat < players:
        raise TableError(f"a table of {players} has seats 0 to {players - 1}, not {seat}")
    if len(opponent_ids) != players - 1:
        raise TableError(f"a table of {players} seats {players - 1} bots besides you")
    allowed = {b.id: b for b in opponents(game)}
    bots = []
    for bot_id in opponent_ids:
        if bot_id not in allowed:
            raise TableError(f"bot {bot_id} cannot be seated at a {game} table")
        bots.append(allowed[bot_id])
    versions: list[BotVersion] = [b.active_version() for b in bots]  # type: ignore[misc]
    versions.insert(seat, person_version(user))
    return versions


def _within_limits(user: User) -> None:
    """``TableLimit`` if the user or the server has as many tables open as allowed, or the
    user opened too many lately. The user's row is locked first, so two requests queue."""
    cfg = current_app.config
    db.session.get(User, user.id, with_for_update={"key_share": True})
    mine = open_tables(user)
    if mine >= int(cfg["HUMAN_TABLES_PER_USER"]):
        raise TableLimit(f"you have {mine} table(s) open: finish or leave it first")
    if open_tables() >= int(cfg["HUMAN_TABLES"]):
        raise TableLimit("every table of this server is taken just now; try again in a minute")
    item = parse(str(cfg["HUMAN_TABLE_RATE_LIMIT"]))
    since = utcnow() - timedelta(seconds=item.get_expiry())
    recent = db.session.scalar(
        select(func.count(Match.id))
        .join(MatchSeat, MatchSeat.match_id == Match.id)
        .join(Bot, Bot.id == MatchSeat.bot_id)
        .where(Match.kind == MatchKind.HUMAN, Bot.owner_id == user.id, Bot.kind == HUMAN)
        .where(Match.created_at > since)
    )
    if int(recent or 0) >= item.amount:
        raise TableLimit(f"at most {item.amount} tables per {item.GRANULARITY.name}")


def open_tables(user: User | None = None) -> int:
    """Tables queued or being played: ``user``'s, or the whole server's."""
    query = select(func.count(func.distinct(Match.id))).where(
        Match.kind == MatchKind.HUMAN, Match.status.in_(OPEN)
    )
    if user is not None:
        query = (
            query.join(MatchSeat, MatchSeat.match_id == Match.id)
            .join(Bot, Bot.id == MatchSeat.bot_id)
            .where(Bot.owner_id == user.id, Bot.kind == HUMAN)
        )
    return int(db.session.scalar(query) or 0)


# --- the site's side of a turn ----------------------------------------------------------


def turn(match_id: int) -> dict[str, Any] | None:
    """The turn the person's seat is asked now (``arena.remote_seat.Turn`` as JSON, with its
    ``deadline_ms``), or None when it is not the person's turn."""
    with app_redis() as client:
        if client is None:
            return None
        raw: Any = client.get(turn_key(_prefix(), match_id))
    return orjson.loads(raw) if raw else None


def answer(match_id: int, request_id: int, index: int) -> bool:
    """Hand the person's choice (``index`` of the legal actions of turn ``request_id``) to the
    worker; False if that turn is not being asked (answered, timed out, over)."""
    current = turn(match_id)
    if current is None or current.get("request_id") != request_id:
        return False
    if not 0 <= index < len(current.get("legal_actions") or []):
        raise TableError(f"choose an action from 0 to {len(current['legal_actions']) - 1}")
    with app_redis() as client:
        if client is None:
            return False
        key = answer_key(_prefix(), match_id)
        pipe = client.pipeline()
        pipe.rpush(key, orjson.dumps({"request_id": request_id, "index": index}))
        pipe.expire(key, TURN_TTL)
        pipe.execute()
    return True


def leave(match_id: int) -> bool:
    """The person leaves their running table: from now on their seat answers nothing, as a bot
    that stops answering (a strike a turn, without waiting, until it forfeits; the bots play
    the match out). False when the site has no Redis to tell the worker through."""
    with app_redis() as client:
        if client is None:
            return False
        pipe = client.pipeline()
        pipe.set(left_key(_prefix(), match_id), b"1", ex=TURN_TTL)
        key = answer_key(_prefix(), match_id)
        pipe.rpush(key, orjson.dumps({"leave": True}))  # wakes a turn being waited for
        pipe.expire(key, TURN_TTL)
        pipe.execute()
    return True
