"""Ladders and their scheduler: a few matches kept queued per ladder, by ``arena.matchmaking``.

The scheduler only decides who plays and inserts queued rows; workers are told after the commit.
With mirrored ladders one table becomes ``players`` matches on one seed with the seats rotated,
so every bot is dealt every hand once.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence

from flask import current_app
from sqlalchemy import func, select

from arena import matchmaking
from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    BotVersion,
    Ladder,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    Rating,
    User,
    VersionStatus,
)
from web.services.matches import Ended, cancel_retired, create_match, new_seed, when_ended
from web.services.placement import placement_left as placement_left  # the pages ask here
from web.services.placement import placement_played
from web.services.queue import request_schedule

log = logging.getLogger(__name__)


def ladder_slug(game: str, players: int, variant: str | None) -> str:
    return f"{game}-{players}p" + (f"-{variant}" if variant else "")


def get_or_create_ladder(
    game: str, players: int | None = None, variant: str | None = None, mirrored: bool = True
) -> Ladder:
    """The ladder for (game, variant, players); created with the game's defaults when missing."""
    from arena.games import make_game

    config = make_game(game, players=players, variant=variant).config()
    ladder = db.session.scalar(
        select(Ladder).where(
            Ladder.game == game,
            Ladder.players == config["players"],
            Ladder.variant.is_(config["variant"])
            if config["variant"] is None
            else Ladder.variant == config["variant"],
        )
    )
    if ladder is None:
        ladder = Ladder(
            slug=ladder_slug(game, config["players"], config["variant"]),
            game=game,
            players=config["players"],
            variant=config["variant"],
            params={},
            mirrored=mirrored,
        )
        db.session.add(ladder)
        db.session.flush()
    return ladder


def default_ladder(game: str) -> Ladder:
    """The game's ladder at its default table size and variant."""
    return get_or_create_ladder(game)


def ensure_default_ladders(games: Iterable[str] | None = None) -> list[Ladder]:
    """One default ladder per registered game that can be loaded. Does not commit."""
    from arena.games import names

    made = []
    for game in games if games is not None else names():
        try:
            made.append(default_ladder(game))
        except Exception as exc:  # a game still being written must not stop the others
            log.warning("no ladder for %s: %s", game, exc)
    return made


def ladders_for(games: Sequence[str]) -> list[Ladder]:
    """The active ladders of ``games`` (creating the default one of each game if none exists)."""
    for game in games:
        if not db.session.scalar(select(Ladder.id).where(Ladder.game == game)):
            ensure_default_ladders([game])
    return list(
        db.session.scalars(
            select(Ladder).where(Ladder.game.in_(list(games)), Ladder.active.is_(True))
        )
    )


# --- the scheduler -------------------------------------------------------------------------


@when_ended(MatchKind.LADDER)
def ladder_match_ended(ended: Ended) -> None:
    """A finished ladder match asks for a scheduler run at once: the workers do not wait for
    the next beat with a ladder below its target."""
    if ended.status == MatchStatus.FINISHED:
        request_schedule()


def candidates(ladder: Ladder) -> list[tuple[matchmaking.Candidate, BotVersion]]:
    """Bots that may play on ``ladder`` now, with the version each would play."""
    rows = db.session.execute(
        select(Rating, Bot, User)
        .join(Bot, Rating.bot_id == Bot.id)
        .join(User, Bot.owner_id == User.id)
        .where(Rating.ladder_id == ladder.id, Bot.status == BotStatus.ACTIVE)
    ).all()
    found = []
    for rating, bot, owner in rows:
        version = bot.active_version()
        if version is None or ladder.game not in (version.games or []):
            continue
        author = f"house-{bot.id}" if owner.is_house else f"user-{owner.id}"
        last = rating.last_played_at.timestamp() if rating.last_played_at else 0.0
        found.append(
            (
                matchmaking.Candidate(
                    bot=str(bot.id),
                    author=author,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    games=rating.games,
                    last_played=last,
                ),
                version,
            )
        )
    return found


def seat_counts(ladder: Ladder) -> dict[str, list[int]]:
    """How often each bot sat in each seat on this ladder."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * ladder.players)
    rows = db.session.execute(
        select(MatchSeat.bot_id, MatchSeat.seat, func.count())
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.ladder_id == ladder.id)
        .group_by(MatchSeat.bot_id, MatchSeat.seat)
    ).all()
    for bot_id, seat, n in rows:
        counts[str(bot_id)][seat] = n
    return dict(counts)


def pending(ladder: Ladder) -> int:
    """Ladder matches queued or running."""
    return int(
        db.session.scalar(
            select(func.count())
            .select_from(Match)
            .where(
                Match.ladder_id == ladder.id,
                Match.status.in_([MatchStatus.QUEUED, MatchStatus.RUNNING]),
            )
        )
        or 0
    )


def schedule_ladder(
    ladder: Ladder, rng: random.Random, target: int, max_tables: int | None = None
) -> list[Match]:
    """Queue tables on ``ladder`` until ``target`` matches are pending (or ``max_tables`` were
    added). Does not commit."""

    made: list[Match] = []
    pool = candidates(ladder)
    versions = {c.bot: v for c, v in pool}
    tables = 0
    while pending(ladder) < target and (max_tables is None or tables < max_tables):
        tables += 1
        try:
            table = matchmaking.pick_table(
                [c for c, _ in pool], ladder.players, rng, seat_counts(ladder)
            )
        except matchmaking.NoTableError:
            break
        made.extend(_table_matches(ladder, table, versions))
    return made


def _table_matches(
    ladder: Ladder, table: list[str], versions: dict[str, BotVersion], *, urgent: bool = False
) -> list[Match]:
    """The matches of one table: every rotation of its seats on one deal when the ladder is
    mirrored (a sealed deal group), else the table as seated."""
    seatings = matchmaking.mirrored_seatings(table) if ladder.mirrored else [table]
    group = uuid.uuid4().hex if len(seatings) > 1 else None
    seed = new_seed()
    return [
        create_match(
            ladder.game_config(),
            [versions[bot] for bot in seating],
            seed=seed,
            kind=MatchKind.LADDER,
            ladder_id=ladder.id,
            mirror_group=group,
            urgent=urgent or None,
        )
        for seating in seatings
    ]


def schedule_all(rng: random.Random | None = None) -> int:
    """Top up every active ladder, placement matches first. Commits; returns how many matches
    were queued."""
    rng = rng or random.Random()
    cancel_retired()  # seated before their version retired: counted out, never played
    target = int(current_app.config["QUEUE_TARGET"])
    open_ladders = list(db.session.scalars(select(Ladder).where(Ladder.active.is_(True))))
    total = sum(len(schedule_placement(ladder, rng)) for ladder in open_ladders)
    while open_ladders:
        # One table per ladder per round: the queue interleaves the games, so a game with
        # long matches does not hold the others back.
        added = {ladder.id: len(schedule_ladder(ladder, rng, target, 1)) for ladder in open_ladders}
        total += sum(added.values())
        open_ladders = [ladder for ladder in open_ladders if added[ladder.id]]
    db.session.commit()
    return total


def active_versions(game: str) -> list[BotVersion]:
    """Active versions of active bots that play ``game``."""
    rows = db.session.scalars(
        select(BotVersion)
        .join(Bot)
        .where(BotVersion.status == VersionStatus.ACTIVE, Bot.status == BotStatus.ACTIVE)
    ).all()
    return [v for v in rows if game in (v.games or [])]


# --- placement ------------------------------------------------------------------------------

PLACEMENT_AHEAD = 2
"""Tables of placement matches kept queued (or running) per new version and ladder."""


def _in_flight(ladder: Ladder, version_id: int) -> int:
    """Ladder matches of ``version_id`` on ``ladder`` queued or running."""
    return int(
        db.session.scalar(
            select(func.count())
            .select_from(MatchSeat)
            .join(Match, Match.id == MatchSeat.match_id)
            .where(
                MatchSeat.bot_version_id == version_id,
                Match.ladder_id == ladder.id,
                Match.status.in_([MatchStatus.QUEUED, MatchStatus.RUNNING]),
            )
        )
        or 0
    )


def schedule_placement(ladder: Ladder, rng: random.Random) -> list[Match]:
    """Queue urgent tables for versions still owing placement matches on ``ladder``, ahead of
    every ordinary match: first against the strong, middle and weak of the ladder, then against
    the bots nearest its rating (``matchmaking.placement_table``). Does not commit."""
    if int(current_app.config["PLACEMENT_MATCHES"]) <= 0:
        return []
    pool = candidates(ladder)
    played = placement_played([v.id for _, v in pool])
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    made: list[Match] = []
    per_table = ladder.players if ladder.mirrored else 1
    for candidate, version in pool:
        left = wanted - played.get(version.id, 0)
        cap = min(left, PLACEMENT_AHEAD * per_table)
        while left > 0 and (in_flight := _in_flight(ladder, version.id)) < cap:
            index = (played.get(version.id, 0) + in_flight) // per_table
            tables = _placement_table(ladder, rng, candidate, pool, index)
            if not tables:
                break
            made.extend(tables)
    return made


def _placement_table(
    ladder: Ladder,
    rng: random.Random,
    newcomer: matchmaking.Candidate,
    pool: list[tuple[matchmaking.Candidate, BotVersion]],
    index: int,
) -> list[Match]:
    """The matches of ``newcomer``'s placement table number ``index`` (0 first)."""
    versions = {c.bot: v for c, v in pool}
    try:
        table = matchmaking.placement_table(
            newcomer, [c for c, _ in pool], ladder.players, index, rng
        )
    except matchmaking.NoTableError:
        return []
    order = matchmaking.seat_table([c.bot for c in table], seat_counts(ladder), rng)
    return _table_matches(ladder, order, versions, urgent=True)
