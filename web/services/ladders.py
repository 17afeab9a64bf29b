"""Ladders and their scheduler: a few matches kept queued per ladder, by ``arena.matchmaking``.

The scheduler only decides who plays and inserts queued rows; workers are told after the commit.
With mirrored ladders one table becomes ``players`` matches on one seed with the seats rotated,
so every bot is dealt every hand once.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from flask import current_app
from sqlalchemy import Text, cast, exists, func, literal, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased

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
    utcnow,
)
from web.services.matches import (
    Ended,
    cancel_retired,
    new_match,
    new_seed,
    send_new,
    when_ended,
)
from web.services.placement import placement_left as placement_left  # the pages ask here
from web.services.queue import request_schedule

log = logging.getLogger(__name__)


def ladder_slug(game: str, players: int, variant: str | None) -> str:
    return f"{game}-{players}p" + (f"-{variant}" if variant else "")


def get_or_create_ladder(
    game: str, players: int | None = None, variant: str | None = None, mirrored: bool = True
) -> Ladder:
    """The ladder for (game, variant, players); created with the game's defaults when missing.

    Two processes may create it at once (two versions of a new game activating together): the
    insert runs in a savepoint, and the one that loses the race reads the winner's row.
    """
    from arena.games import make_game

    config = make_game(game, players=players, variant=variant).config()
    ladder = _find_ladder(game, config["players"], config["variant"])
    if ladder is not None:
        return ladder
    try:
        with db.session.begin_nested():
            ladder = Ladder(
                slug=ladder_slug(game, config["players"], config["variant"]),
                game=game,
                players=config["players"],
                variant=config["variant"],
                params={},
                mirrored=mirrored,
            )
            db.session.add(ladder)
    except IntegrityError:  # created by a concurrent transaction since our read
        ladder = _find_ladder(game, config["players"], config["variant"])
        assert ladder is not None
    return ladder


def _find_ladder(game: str, players: int, variant: str | None) -> Ladder | None:
    return db.session.scalar(
        select(Ladder).where(
            Ladder.game == game,
            Ladder.players == players,
            Ladder.variant.is_(None) if variant is None else Ladder.variant == variant,
        )
    )


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


@dataclass(frozen=True)
class Entrant:
    """The version a candidate bot would play: its id, its bot's, and the finished ladder
    matches it has played (``BotVersion.ladder_matches``: its placement)."""

    id: int
    bot_id: int
    played: int = 0


def candidates(ladder: Ladder) -> list[tuple[matchmaking.Candidate, Entrant]]:
    """Bots that may play on ``ladder`` now, with the version each would play (its newest
    active one), in the order of their ratings' ids."""
    return candidates_by_ladder([ladder])[ladder.id]


def candidates_by_ladder(
    ladders: Sequence[Ladder], bot_ids: Sequence[int] | None = None
) -> dict[int, list[tuple[matchmaking.Candidate, Entrant]]]:
    """``candidates`` of each of ``ladders``, by ladder id (with ``bot_ids``: of those bots
    only). Plain columns, not model objects, all ladders in one query: thousands of bots per
    ladder are read in one pass and a few milliseconds of Python per thousand."""
    found: dict[int, list[tuple[matchmaking.Candidate, Entrant]]] = {x.id: [] for x in ladders}
    for ladder_id, _rating_id, entry in _candidate_rows(ladders, bot_ids):
        found[ladder_id].append(entry)
    return found


def _candidate_rows(
    ladders: Sequence[Ladder], bot_ids: Sequence[int] | None = None
) -> list[tuple[int, int, tuple[matchmaking.Candidate, Entrant]]]:
    """(ladder id, rating id, candidate) of ``candidates_by_ladder``, in rating id order."""
    # The version's games as their JSON text: 20,000 lists are not parsed, the ladder's game is
    # looked for as a quoted name (game names are plain words and hyphens).
    plays = cast(BotVersion.games, Text)
    newer = aliased(BotVersion)
    newest = ~exists().where(
        newer.bot_id == BotVersion.bot_id,
        newer.status == VersionStatus.ACTIVE,
        newer.number > BotVersion.number,
    )
    stmt = (
        select(
            Rating.ladder_id,
            Rating.id,
            Rating.mu,
            Rating.sigma,
            Rating.games,
            Rating.last_played_at,
            Bot.id,
            User.id,
            User.is_house,
            BotVersion.id,
            plays.label("listed"),
            BotVersion.ladder_matches,
        )
        .join(Ladder, Ladder.id == Rating.ladder_id)
        .join(Bot, Rating.bot_id == Bot.id)
        .join(User, Bot.owner_id == User.id)
        .join(BotVersion, BotVersion.bot_id == Bot.id)
        .where(
            Rating.ladder_id.in_([x.id for x in ladders]),
            Bot.status == BotStatus.ACTIVE,
            BotVersion.status == VersionStatus.ACTIVE,
            newest,
            plays.contains(literal('"') + Ladder.game + literal('"')),  # narrows; checked below
        )
        .order_by(Rating.id)
    )
    if bot_ids is not None:
        stmt = stmt.where(Rating.bot_id.in_(list(bot_ids)))
    games = {x.id: f'"{x.game}"' for x in ladders}
    Candidate = matchmaking.Candidate
    found = []
    for row in db.session.execute(stmt):
        (
            ladder_id,
            rating_id,
            mu,
            sigma,
            n,
            last,
            bot_id,
            owner_id,
            house,
            version_id,
            listed,
            played,
        ) = row
        if games[ladder_id] not in (listed or ""):
            continue
        candidate = Candidate(
            bot=str(bot_id),
            author=f"house-{bot_id}" if house else f"user-{owner_id}",
            mu=mu,
            sigma=sigma,
            games=n,
            last_played=last.timestamp() if last else 0.0,
        )
        found.append((ladder_id, rating_id, (candidate, Entrant(version_id, bot_id, played))))
    return found


def seat_counts(ladder: Ladder, bots: Iterable[str]) -> dict[str, list[int]]:
    """How often each of ``bots`` sat in each seat on this ladder (read through the index on a
    bot's seats, so it costs the same however many matches the ladder has)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * ladder.players)
    rows = db.session.execute(
        select(MatchSeat.bot_id, MatchSeat.seat, func.count())
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.ladder_id == ladder.id, MatchSeat.bot_id.in_([int(b) for b in bots]))
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


def pending_by_ladder(ladder_ids: Sequence[int]) -> dict[int, int]:
    """``pending`` of each of ``ladder_ids``, in one query."""
    rows = db.session.execute(
        select(Match.ladder_id, func.count())
        .where(
            Match.ladder_id.in_(list(ladder_ids)),
            Match.status.in_([MatchStatus.QUEUED, MatchStatus.RUNNING]),
        )
        .group_by(Match.ladder_id)
    ).all()
    found = {int(ladder_id or 0): int(n) for ladder_id, n in rows}
    return {ladder_id: found.get(ladder_id, 0) for ladder_id in ladder_ids}


Pool = list[tuple[matchmaking.Candidate, Entrant]]


def schedule_ladder(
    ladder: Ladder,
    rng: random.Random,
    target: int,
    max_tables: int | None = None,
    pool: Pool | None = None,
    waiting: int | None = None,
) -> list[Match]:
    """Queue tables on ``ladder`` until ``target`` matches are pending (or ``max_tables`` were
    added), from ``pool`` (default: its ``candidates``); ``waiting``: its ``pending`` matches if
    the caller counted them already in this transaction. Does not commit."""

    made: list[Match] = []
    pool = candidates(ladder) if pool is None else pool
    bots = [c for c, _ in pool]
    versions = {c.bot: v for c, v in pool}
    tables = 0
    waiting = pending(ladder) if waiting is None else waiting
    while waiting + len(made) < target and (max_tables is None or tables < max_tables):
        tables += 1
        try:
            seed = matchmaking.pick_seed(bots, rng)
            chosen = [c.bot for c in matchmaking.fill_table(seed, bots, ladder.players, rng)]
        except matchmaking.NoTableError:
            break
        table = matchmaking.seat_table(chosen, seat_counts(ladder, chosen), rng)
        made.extend(_table_matches(ladder, table, versions))
    return made


def _table_matches(
    ladder: Ladder, table: list[str], versions: dict[str, Entrant], *, urgent: bool = False
) -> list[Match]:
    """The matches of one table: every rotation of its seats on one deal when the ladder is
    mirrored (a sealed deal group), else the table as seated. Written in one flush."""
    seatings = matchmaking.mirrored_seatings(table) if ladder.mirrored else [table]
    group = uuid.uuid4().hex if len(seatings) > 1 else None
    seed = new_seed()
    made = [
        new_match(
            ladder.game_config(),
            [versions[bot] for bot in seating],
            seed=seed,
            kind=MatchKind.LADDER,
            ladder_id=ladder.id,
            mirror_group=group,
        )
        for seating in seatings
    ]
    send_new(made, urgent=urgent or None)
    return made


def schedule_all(rng: random.Random | None = None) -> int:
    """Top up every active ladder, placement matches first; a settled ladder gets one table
    per ``SETTLED_INTERVAL`` at most (see ``resting``). Commits; returns how many matches were
    queued."""
    rng = rng or random.Random()
    cancel_retired()  # seated before their version retired: counted out, never played
    target = int(current_app.config["QUEUE_TARGET"])
    open_ladders = list(db.session.scalars(select(Ladder).where(Ladder.active.is_(True))))
    pools = kept_pools.read(open_ladders)  # once per pass, only what changed
    owed = {ladder.id: placement_owed(pools[ladder.id]) for ladder in open_ladders}
    total = 0
    for ladder in open_ladders:
        total += len(schedule_placement(ladder, rng, pools[ladder.id], owed[ladder.id]))
    quiet = {x.id for x in open_ladders if settled(x, pools[x.id], owed[x.id])}
    open_ladders = [x for x in open_ladders if x.id not in quiet or not resting(x)]
    waiting = pending_by_ladder([x.id for x in open_ladders])  # then kept as tables are added
    while open_ladders:
        # One table per ladder per round: the queue interleaves the games, so a game with
        # long matches does not hold the others back.
        added = {
            x.id: len(schedule_ladder(x, rng, target, 1, pools[x.id], waiting[x.id]))
            for x in open_ladders
        }
        for ladder_id, n in added.items():
            waiting[ladder_id] += n
        total += sum(added.values())
        open_ladders = [x for x in open_ladders if added[x.id] and x.id not in quiet]
    db.session.commit()
    return total


# --- pools kept between passes ---------------------------------------------------------------

POOL_RELOAD_SECONDS = 300.0
"""A kept pool is read whole again at least this often (see ``KeptPools``)."""

_CHANGES = """
WITH changed AS (
    SELECT bot_id FROM ratings
     WHERE ladder_id = ANY(:ladders) AND age(xmin) <= age(CAST(:since AS xid))
    UNION SELECT id FROM bots WHERE age(xmin) <= age(CAST(:since AS xid))
    UNION SELECT bot_id FROM bot_versions WHERE age(xmin) <= age(CAST(:since AS xid))
    UNION SELECT bots.id FROM bots JOIN users ON users.id = bots.owner_id
     WHERE age(users.xmin) <= age(CAST(:since AS xid))
)
SELECT ({watermark})::text,
       (SELECT count(*) FROM ratings WHERE ladder_id = ANY(:ladders)),
       changed.bot_id,
       (SELECT count(*) FROM ratings
         WHERE ratings.bot_id = changed.bot_id AND ladder_id = ANY(:ladders))
  FROM (SELECT 1) AS one LEFT JOIN changed ON true
"""
"""In one statement (one snapshot): the new watermark, the ladders' ratings, and each bot
changed since ``:since`` with its ratings on the ladders."""

Row = tuple[int, int, tuple[matchmaking.Candidate, Entrant]]


class KeptPools:
    """The scheduler's pools, kept by the process between passes (PostgreSQL only): a pass
    reads again only the bots whose rating, bot, owner or versions changed since the previous
    pass read them, instead of every bot of every ladder.

    What changed is told by the rows' ``xmin`` (the transaction that wrote them): before each
    read the oldest transaction still running is noted, and the next pass re-reads the bots of
    every row written by that transaction or a later one (a few more than changed, never
    fewer). Rows deleted are caught by counting the ladders' ratings: when the count is not
    the one kept, and at least every ``POOL_RELOAD_SECONDS``, everything is read again. Each
    pool is the one ``candidates_by_ladder`` would read, in the same order."""

    watermark = "pg_snapshot_xmin(pg_current_snapshot())"
    """The oldest transaction still running (SQL)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, tuple[tuple[int, str], ...]] | None = None
        self._since: str | None = None
        self._read_at = 0.0
        self._by_bot: dict[int, list[Row]] = {}
        self._ratings: dict[int, int] = {}  # ratings on the ladders, by bot
        self._pools: dict[int, dict[int, tuple[matchmaking.Candidate, Entrant]]] = {}

    def clear(self) -> None:
        with self._lock:
            self._key = None

    def read(self, ladders: Sequence[Ladder]) -> dict[int, Pool]:
        """``candidates_by_ladder(ladders)``, from what was kept and what changed since."""
        bind = db.session.get_bind()
        if bind.dialect.name != "postgresql" or not self._lock.acquire(blocking=False):
            return candidates_by_ladder(ladders)
        try:
            key = (
                bind.engine.url.render_as_string(hide_password=True),
                tuple(sorted((x.id, x.game) for x in ladders)),
            )
            fresh = time.monotonic() - self._read_at < POOL_RELOAD_SECONDS
            if key != self._key or self._since is None or not fresh or not self._update(ladders):
                self._reload(ladders, key)
            return {
                ladder.id: [pool[r] for r in sorted(pool)]
                for ladder in ladders
                for pool in [self._pools[ladder.id]]
            }
        except BaseException:
            self._key = None
            raise
        finally:
            self._lock.release()

    def _watermark(self) -> str | None:
        """The oldest transaction still running, as a 32-bit id (None near a wrap-around)."""
        return self._low(db.session.scalar(text(f"SELECT ({self.watermark})::text")))

    @staticmethod
    def _low(full: Any) -> str | None:
        """A 64-bit transaction id as the 32-bit one rows carry (None near a wrap-around)."""
        low = int(str(full)) % 2**32
        return str(low) if low >= 3 else None  # 0-2 are special ids

    def _ladder_ratings(self, ladder_ids: list[int]) -> dict[int, int]:
        """Each bot's ratings on the ladders."""
        stmt = (
            select(Rating.bot_id, func.count())
            .where(Rating.ladder_id.in_(ladder_ids))
            .group_by(Rating.bot_id)
        )
        return {int(bot): int(n) for bot, n in db.session.execute(stmt)}

    def _reload(self, ladders: Sequence[Ladder], key: Any) -> None:
        self._key = None
        since = self._watermark()
        self._by_bot = defaultdict(list)
        self._pools = {x.id: {} for x in ladders}
        for row in _candidate_rows(ladders):
            self._by_bot[row[2][1].bot_id].append(row)
            self._pools[row[0]][row[1]] = row[2]
        self._ratings = self._ladder_ratings([x.id for x in ladders])
        self._since, self._key, self._read_at = since, key, time.monotonic()

    def _update(self, ladders: Sequence[Ladder]) -> bool:
        """Re-read the bots changed since the last read; False if a full read is needed."""
        ladder_ids = [x.id for x in ladders]
        rows = db.session.execute(
            text(_CHANGES.format(watermark=self.watermark)),
            {"ladders": ladder_ids, "since": self._since},
        ).all()
        since, total = self._low(rows[0][0]), int(rows[0][1])
        changed = sorted(int(row[2]) for row in rows if row[2] is not None)
        for bot in changed:
            for ladder_id, rating_id, _ in self._by_bot.pop(bot, []):
                del self._pools[ladder_id][rating_id]
        self._ratings.update({int(row[2]): int(row[3]) for row in rows if row[2] is not None})
        if changed:
            for row in _candidate_rows(ladders, changed):
                self._by_bot[row[2][1].bot_id].append(row)
                self._pools[row[0]][row[1]] = row[2]
        self._since = since
        return total == sum(self._ratings.values())


kept_pools = KeptPools()


# --- a quiet idle ---------------------------------------------------------------------------


def settled(ladder: Ladder, pool: Pool | None = None, owed: dict[int, int] | None = None) -> bool:
    """Nothing new needs matches on ``ladder``: every bot that may play there has a rating
    uncertainty (sigma) below ``SETTLED_SIGMA`` and no placement matches left. A newly active
    version (placement owed, a wider sigma) unsettles its ladders at the next scheduler pass."""
    limit = float(current_app.config["SETTLED_SIGMA"])
    pool = candidates(ladder) if pool is None else pool
    if limit <= 0 or not pool:
        return False
    owed = placement_owed(pool) if owed is None else owed
    return all(c.sigma < limit and not owed.get(v.id) for c, v in pool)


def resting(ladder: Ladder) -> bool:
    """A settled ladder waits: it has a match queued or running, or its last table was
    queued less than ``SETTLED_INTERVAL`` seconds ago."""
    if pending(ladder):
        return True
    last = db.session.scalar(
        select(Match.created_at)
        .where(Match.ladder_id == ladder.id, Match.kind == MatchKind.LADDER)
        .order_by(Match.id.desc())
        .limit(1)
    )
    interval = timedelta(seconds=float(current_app.config["SETTLED_INTERVAL"]))
    return last is not None and last > utcnow() - interval


def active_versions(game: str) -> list[BotVersion]:
    """Active versions of active bots that play ``game``."""
    rows = db.session.scalars(
        select(BotVersion)
        .join(Bot)
        .where(BotVersion.status == VersionStatus.ACTIVE, Bot.status == BotStatus.ACTIVE)
    ).all()
    return [v for v in rows if game in (v.games or [])]


# --- placement ------------------------------------------------------------------------------

PLACEMENT_AHEAD = 1
"""Tables of placement matches kept queued (or running) per new version and ladder: one, so
that each table is chosen from the rating its previous table gave (the mirrored matches of a
table still run side by side). Two tables ahead chose every other table blind, and placed the
newcomer further from its true rank (``bench/ladder_sim.py --part placement``)."""


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


def placement_owed(pool: Pool) -> dict[int, int]:
    """Placement matches each version of ``pool`` still owes, by version id (none: absent), as
    counted when the pool was read."""
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    if wanted <= 0:
        return {}
    return {v.id: wanted - v.played for _, v in pool if v.played < wanted}


def schedule_placement(
    ladder: Ladder,
    rng: random.Random,
    pool: Pool | None = None,
    owed: dict[int, int] | None = None,
) -> list[Match]:
    """Queue urgent tables for versions still owing placement matches on ``ladder``, ahead of
    every ordinary match: first against the strong, middle and weak of the ladder, then against
    bots just above, at and just below its rating (``matchmaking.placement_table``). Does not
    commit."""
    pool = candidates(ladder) if pool is None else pool
    owed = placement_owed(pool) if owed is None else owed
    wanted = int(current_app.config["PLACEMENT_MATCHES"])
    made: list[Match] = []
    per_table = ladder.players if ladder.mirrored else 1
    room = PLACEMENT_AHEAD * per_table
    for candidate, version in pool:
        left = owed.get(version.id, 0)
        if not left:  # most of the ladder: nothing to count
            continue
        # Whole tables only: the next one waits until a whole table's room is free, so that
        # with one table ahead it is chosen from the rating all of the previous one gave.
        while (
            in_flight := _in_flight(ladder, version.id)
        ) < left and in_flight + per_table <= room:
            index = (wanted - left + in_flight) // per_table
            tables = _placement_table(ladder, rng, candidate, pool, index)
            if not tables:
                break
            made.extend(tables)
    return made


def _placement_table(
    ladder: Ladder,
    rng: random.Random,
    newcomer: matchmaking.Candidate,
    pool: Pool,
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
    bots = [c.bot for c in table]
    order = matchmaking.seat_table(bots, seat_counts(ladder, bots), rng)
    return _table_matches(ladder, order, versions, urgent=True)
