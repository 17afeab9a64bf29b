"""The read side of the site: the few queries behind every page and API listing.

Each function issues a fixed number of queries whatever the page size (no query per row), and
uses the indexes declared on the models and in the ``site read indexes`` migration.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, Select, and_, case, func, or_, select, true
from sqlalchemy.orm import aliased, joinedload, selectinload

from web.extensions import db
from web.models import (
    MATCH_BLOCK,
    Bot,
    BotStatus,
    BotVersion,
    Challenge,
    Ladder,
    Match,
    MatchBlock,
    MatchSeat,
    MatchStatus,
    MatchTotal,
    Rating,
    RatingChange,
    Tournament,
    User,
    utcnow,
)
from web.services.placement import placing_bots, placing_on_ladder

T = TypeVar("T")

_listed = Bot.status != BotStatus.DELETED
"""A deleted bot leaves the ladder tables (a rating row a match finishing as it was deleted
may have left behind included)."""

SPARK_POINTS = 20
"""Rating changes shown in a ladder row's trend sparkline."""


@dataclass
class Page(Generic[T]):
    """One page of a listing and what is needed to link to the others."""

    items: list[T]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def meta(self) -> dict[str, int]:
        return {
            "page": self.page,
            "per_page": self.per_page,
            "total": self.total,
            "pages": self.pages,
        }


def paginate(
    stmt: Select[Any],
    page: int,
    per_page: int,
    *options: Any,
    total: int | None = None,
    skip: int | None = None,
) -> Page[Any]:
    """One page of ``stmt`` (one model, with its joins, conditions and order; no loader
    options) with the total count of its rows; the page's rows are loaded with ``options``.

    A deferred join: the page's ids are found first, from the ids alone (an index-only scan
    that skips even a deep page's offset cheaply), then only those rows are loaded with their
    related rows; counting, too, reads ids only (``total``: the count, if the caller knows it;
    ``skip``: the rows of ``stmt`` before the page, if the caller narrowed it to start nearer).
    """
    model = stmt.column_descriptions[0]["entity"]
    ids = stmt.with_only_columns(model.id)
    if total is None:
        total = db.session.scalar(select(func.count()).select_from(ids.order_by(None).subquery()))
    skip = (page - 1) * per_page if skip is None else skip
    chosen = list(db.session.scalars(ids.limit(per_page).offset(skip)))
    rows = select(model).options(*options).where(model.id.in_(chosen))
    by_id = {row.id: row for row in db.session.scalars(rows).unique()} if chosen else {}
    return Page([by_id[i] for i in chosen if i in by_id], page, per_page, int(total or 0))


def score(mu: float, sigma: float) -> float:
    """The conservative rating ``mu - 3 sigma`` (``arena.ratings.display``), shown as the score."""
    return mu - 3 * sigma


RANK_BY = Rating.mu
"""What ranks order by: the mean estimate ``mu`` (docs/ratings.md, "Ranks")."""


def rank_label(rank: int | None, placing: tuple[int, int] | None) -> str:
    """How a rank reads on the site: ``3``, ``placing, 7 of 10`` or ``unranked``."""
    if placing is not None:
        return f"placing, {placing[0]} of {placing[1]}"
    return str(rank) if rank is not None else "unranked"


def _ranked_flag(placing: dict[int, tuple[int, int]]) -> ColumnElement[int]:
    """1 for a rating that has a rank (rated matches played, placement over), else 0."""
    conds = [Rating.games > 0]
    if placing:
        conds.append(Rating.bot_id.not_in(list(placing)))
    return case((and_(*conds), 1), else_=0)


def _ranks(ladder_id: int, placing: dict[int, tuple[int, int]]) -> Any:
    """Per rating of the ladder: ``ranked`` (1 or 0) and ``rank`` among the ranked ones."""
    ranked = _ranked_flag(placing)
    return (
        select(
            Rating.id.label("rid"),
            ranked.label("ranked"),
            func.rank().over(partition_by=ranked, order_by=RANK_BY.desc()).label("rank"),
        )
        .join(Bot, Bot.id == Rating.bot_id)
        .where(Rating.ladder_id == ladder_id, _listed)
        .subquery()
    )


def ladder_placing(ladder_id: int) -> dict[int, tuple[int, int]]:
    """The bots of a ladder still placing: (played, owed) by bot id."""
    return placing_on_ladder(ladder_id)


# --- ladders --------------------------------------------------------------------------------


def ladders() -> list[Ladder]:
    return list(
        db.session.scalars(select(Ladder).order_by(Ladder.game, Ladder.players, Ladder.variant))
    )


def ladder_slugs() -> dict[int, str]:
    """Every ladder's slug by id (a handful of rows), for linking matches to their ladders."""
    return {
        ladder_id: slug for ladder_id, slug in db.session.execute(select(Ladder.id, Ladder.slug))
    }


def ladder_by_slug(slug: str) -> Ladder | None:
    return db.session.scalar(select(Ladder).where(Ladder.slug == slug))


@dataclass
class Standing:
    """One row of a ladder table."""

    rank: int | None
    """None while the bot is placing or has no rated match."""
    bot_id: int
    bot: str
    author: str
    status: str
    score: float
    mu: float
    sigma: float
    matches: int
    last_active: datetime | None
    placements: dict[int, int] = field(default_factory=dict)
    trend: list[float] = field(default_factory=list)
    placing: tuple[int, int] | None = None
    """(placement matches played, owed in all) while the bot's active version is placing."""

    @property
    def rank_label(self) -> str:
        return rank_label(self.rank, self.placing)

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "rank_label": self.rank_label,
            "placing": placing_json(self.placing),
            "bot_id": self.bot_id,
            "bot": self.bot,
            "author": self.author,
            "status": self.status,
            "score": round(self.score, 3),
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "matches": self.matches,
            "last_active": iso(self.last_active),
            "placements": {str(k): v for k, v in sorted(self.placements.items())},
            "trend": [round(x, 3) for x in self.trend],
        }


def placing_json(placing: tuple[int, int] | None) -> dict[str, int] | None:
    return {"played": placing[0], "of": placing[1]} if placing else None


SORTS: dict[str, Any] = {
    "rank": RANK_BY.desc(),
    "score": (Rating.mu - 3 * Rating.sigma).desc(),
    "mu": Rating.mu.desc(),
    "sigma": Rating.sigma.asc(),
    "matches": Rating.games.desc(),
    "active": Rating.last_played_at.desc(),
    "bot": Bot.name.asc(),
}


def standings(
    ladder: Ladder, sort: str = "rank", page: int = 1, per_page: int = 50
) -> Page[Standing]:
    """A page of ``ladder``'s table sorted by ``sort`` (the ranked bots first, then the placing
    and unranked ones, each group in that order); ranks always follow ``RANK_BY``."""
    placing = ladder_placing(ladder.id)
    flag = _ranked_flag(placing)
    # Ranks, the total and the page's order in one pass over the ladder's ratings; names and
    # authors then read for the page's rows alone.
    ranked = (
        select(
            Rating.id,
            func.rank().over(partition_by=flag, order_by=RANK_BY.desc()),
            flag,
            func.count().over(),  # every row of the table, counted with the page
        )
        .join(Bot, Bot.id == Rating.bot_id)
        .where(Rating.ladder_id == ladder.id, _listed)
        .order_by(flag.desc(), SORTS.get(sort, SORTS["rank"]), Rating.id)
    )
    found = db.session.execute(ranked.limit(per_page).offset((page - 1) * per_page)).all()
    # past the last page, the table is counted alone
    counted = select(func.count()).select_from(ranked.order_by(None).subquery())
    total = found[0][-1] if found else db.session.scalar(counted)
    rows = _standing_rows([(rid, rank, is_ranked) for rid, rank, is_ranked, _ in found])
    bot_ids = [row[0].bot_id for row in rows]
    places, trends = placements(ladder.id, bot_ids), trend_points(ladder.id, bot_ids)
    items = [_standing(row, places, trends, placing) for row in rows]
    return Page(items, page, per_page, int(total or 0))


def _standing_rows(ranked: list[tuple[int, int, int]]) -> list[Any]:
    """(rating, rank, ranked, bot name, bot status, author) of each (rating id, rank, ranked),
    in that order."""
    if not ranked:
        return []
    found = {
        rating.id: (rating, name, status, author)
        for rating, name, status, author in db.session.execute(
            select(Rating, Bot.name, Bot.status, User.username)
            .join(Bot, Bot.id == Rating.bot_id)
            .join(User, User.id == Bot.owner_id)
            .where(Rating.id.in_([rid for rid, _, _ in ranked]))
        )
    }
    return [
        (found[rid][0], rank, flag, *found[rid][1:]) for rid, rank, flag in ranked if rid in found
    ]


def _standing(row: Any, places: Any, trends: Any, placing: dict[int, tuple[int, int]]) -> Standing:
    rating, rank, ranked, name, status, author = row
    return Standing(
        rank=int(rank) if ranked else None,
        bot_id=rating.bot_id,
        bot=name,
        author=author,
        status=str(status),
        score=score(rating.mu, rating.sigma),
        mu=rating.mu,
        sigma=rating.sigma,
        matches=rating.games,
        last_active=rating.last_played_at,
        placements=places.get(rating.bot_id, {}),
        trend=trends.get(rating.bot_id, []),
        placing=placing.get(rating.bot_id),
    )


def bot_ranks(
    bot_id: int, ladder_ids: list[int], placing: dict[int, tuple[int, int]] | None = None
) -> dict[int, tuple[int | None, tuple[int, int] | None]]:
    """The bot's (rank, placing) on each of ``ladder_ids``, as the ladder tables show them
    (``placing``: ``placing_bots([bot_id])``, if the caller read it already)."""
    if not ladder_ids:  # a list of bots shows no ratings: nothing to ask
        return {}
    placing = placing_bots([bot_id]) if placing is None else placing
    found: dict[int, tuple[int | None, tuple[int, int] | None]] = {}
    for ladder_id in ladder_ids:
        if bot_id in placing:
            found[ladder_id] = (None, placing[bot_id])
            continue
        ranked = _ranks(ladder_id, ladder_placing(ladder_id))
        row = db.session.execute(
            select(ranked.c.rank, ranked.c.ranked)
            .join(Rating, Rating.id == ranked.c.rid)
            .where(Rating.bot_id == bot_id)
        ).first()
        found[ladder_id] = (int(row[0]) if row is not None and row[1] else None, None)
    return found


def placements(ladder_id: int, bot_ids: list[int]) -> dict[int, dict[int, int]]:
    """How often each bot finished in each place on the ladder."""
    counts: dict[int, dict[int, int]] = defaultdict(dict)
    if not bot_ids:
        return counts
    rows = db.session.execute(
        select(RatingChange.bot_id, RatingChange.place, func.count())
        .where(RatingChange.ladder_id == ladder_id, RatingChange.bot_id.in_(bot_ids))
        .group_by(RatingChange.bot_id, RatingChange.place)
    ).all()
    for bot_id, place, n in rows:
        counts[bot_id][place] = n
    return counts


def trend_points(
    ladder_id: int, bot_ids: list[int], points: int = SPARK_POINTS
) -> dict[int, list[float]]:
    """The last ``points`` scores (after each rated match) of each bot, oldest first."""
    if not bot_ids:
        return {}
    if db.session.get_bind().dialect.name == "postgresql":
        rows = _latest_changes_lateral(ladder_id, bot_ids, points)
    else:
        rows = _latest_changes_window(ladder_id, bot_ids, points)
    trends: dict[int, list[float]] = defaultdict(list)
    for bot_id, value, _change in sorted(rows, key=lambda row: (row[0], row[2])):
        trends[bot_id].append(float(value))
    return trends


def _latest_changes_lateral(ladder_id: int, bot_ids: list[int], points: int) -> list[Any]:
    """PostgreSQL: one short backward index scan per bot (``ix_rating_changes_bot_ladder``)."""
    bots = select(func.unnest(bot_ids).label("bot_id")).subquery()
    latest = (
        select(
            (RatingChange.mu_after - 3 * RatingChange.sigma_after).label("score"),
            RatingChange.id.label("change_id"),
        )
        .where(RatingChange.bot_id == bots.c.bot_id, RatingChange.ladder_id == ladder_id)
        .order_by(RatingChange.id.desc())
        .limit(points)
        .lateral()
    )
    stmt = select(bots.c.bot_id, latest.c.score, latest.c.change_id).join(latest, true())
    return list(db.session.execute(stmt).all())


def _latest_changes_window(ladder_id: int, bot_ids: list[int], points: int) -> list[Any]:
    """Other databases (SQLite): number each bot's changes, newest first, and keep the first."""
    numbered = (
        select(
            RatingChange.bot_id,
            RatingChange.id,
            (RatingChange.mu_after - 3 * RatingChange.sigma_after).label("score"),
            func.row_number()
            .over(partition_by=RatingChange.bot_id, order_by=RatingChange.id.desc())
            .label("n"),
        )
        .where(RatingChange.ladder_id == ladder_id, RatingChange.bot_id.in_(bot_ids))
        .subquery()
    )
    stmt = select(numbered.c.bot_id, numbered.c.score, numbered.c.id).where(numbered.c.n <= points)
    return list(db.session.execute(stmt).all())


def top_of_ladders(per_ladder: int = 5) -> dict[int, list[tuple[Rating, str, str]]]:
    """The best few ranked bots of every ladder: (rating, bot name, author) by ladder id.

    Each ladder sorts only its own rated ratings, and names are joined to its few rows, where
    a ranking over every rating would read them all: on PostgreSQL all ladders in one query
    (a lateral subquery per ladder), elsewhere one short query per ladder. Bots still placing
    have no rank: a few more rows than wanted are read and those left out.
    """
    if db.session.get_bind().dialect.name == "postgresql":
        found = _best_of_ladders_lateral(per_ladder * 4)
    else:
        found = {
            x: _best_of_ladder(x, per_ladder * 4) for x in db.session.scalars(select(Ladder.id))
        }
    placing = placing_bots([r.bot_id for rows in found.values() for r, _, _ in rows])  # once
    top: dict[int, list[tuple[Rating, str, str]]] = defaultdict(list)
    for ladder_id, rows in found.items():
        top[ladder_id] = [row for row in rows if row[0].bot_id not in placing][:per_ladder]
    return top


def _best_of_ladder(ladder_id: int, limit: int) -> list[tuple[Rating, str, str]]:
    best = (
        select(Rating.id, RANK_BY.label("rank_by"))
        .join(Bot, Bot.id == Rating.bot_id)
        .where(Rating.ladder_id == ladder_id, Rating.games > 0, _listed)
        .order_by(RANK_BY.desc(), Rating.id)
        .limit(limit)
        .subquery()
    )  # the ratings alone are sorted; names are joined to the few rows kept
    kept = db.session.execute(
        select(Rating, Bot.name, User.username)
        .join(best, best.c.id == Rating.id)
        .join(Bot, Bot.id == Rating.bot_id)
        .join(User, User.id == Bot.owner_id)
        .order_by(best.c.rank_by.desc(), Rating.id)
    ).all()
    return [(rating, name, author) for rating, name, author in kept]


def _best_of_ladders_lateral(limit: int) -> dict[int, list[tuple[Rating, str, str]]]:
    """``_best_of_ladder`` of every ladder in one query (PostgreSQL)."""
    rated, owner = aliased(Rating), aliased(Bot)
    best = (
        select(rated.id.label("rid"), rated.mu.label("rank_by"))
        .join(owner, owner.id == rated.bot_id)
        .where(
            rated.ladder_id == Ladder.id,
            rated.games > 0,
            owner.status != BotStatus.DELETED,  # ``_listed``
        )
        .order_by(rated.mu.desc(), rated.id)  # ``RANK_BY``
        .limit(limit)
        .lateral("best")
    )
    rows = db.session.execute(
        select(Ladder.id, Rating, Bot.name, User.username)
        .select_from(Ladder)
        .join(best, true())
        .join(Rating, Rating.id == best.c.rid)
        .join(Bot, Bot.id == Rating.bot_id)
        .join(User, User.id == Bot.owner_id)
        .order_by(Ladder.id, best.c.rank_by.desc(), Rating.id)
    ).all()
    found: dict[int, list[tuple[Rating, str, str]]] = defaultdict(list)
    for ladder_id, rating, name, author in rows:
        found[ladder_id].append((rating, name, author))
    return found


# --- matches --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MatchFilter:
    """What a match listing is narrowed to (every field optional)."""

    game: str | None = None
    bot_id: int | None = None
    status: str | None = None
    ladder_id: int | None = None
    tournament_id: int | None = None
    user_id: int | None = None
    before: int | None = None  # only matches with a smaller id: a keyset page


MATCH_LOADS = (
    selectinload(Match.seats).joinedload(MatchSeat.bot).joinedload(Bot.owner),
    selectinload(Match.seats).joinedload(MatchSeat.version),
)
"""A match's seats, their bots, owners and versions, loaded in bulk for a list."""


def match_query(flt: MatchFilter) -> Select[Any]:
    """Matches passing ``flt``, newest first (loader options: ``MATCH_LOADS``).

    One bot's (or one user's bots') matches are read from their seats, newest first, each
    match then found by its id: a bot whose last matches are old costs no walk over all the
    newer matches of the site."""
    stmt = select(Match)
    conds: list[ColumnElement[bool]] = []
    order: Any = Match.id
    if flt.bot_id is not None or flt.user_id is not None:
        seats = _seats_of(flt)
        stmt = stmt.join(seats, seats.c.match_id == Match.id)
        order = seats.c.match_id
    if flt.game:
        conds.append(Match.ladder_id.in_(select(Ladder.id).where(Ladder.game == flt.game)))
    if flt.status:
        conds.append(Match.status == flt.status)
    if flt.ladder_id is not None:
        conds.append(Match.ladder_id == flt.ladder_id)
    if flt.tournament_id is not None:
        conds.append(Match.tournament_id == flt.tournament_id)
    if flt.before is not None:
        conds.append(Match.id < flt.before)
    return stmt.where(*conds).order_by(order.desc())


def _seats_of(flt: MatchFilter) -> Any:
    """The ids of the matches with a seat of ``flt``'s bot (and of a bot of its user), once
    each, from the index on a bot's seats."""
    ids = select(MatchSeat.match_id).distinct()
    if flt.bot_id is not None:
        ids = ids.where(MatchSeat.bot_id == flt.bot_id)
    if flt.user_id is not None:
        owned = select(Bot.id).where(Bot.owner_id == flt.user_id)
        ids = ids.where(MatchSeat.bot_id.in_(owned))
    if flt.before is not None:
        ids = ids.where(MatchSeat.match_id < flt.before)
    return ids.order_by(MatchSeat.match_id.desc()).subquery("seated")


def matches(flt: MatchFilter, page: int = 1, per_page: int = 25) -> Page[Match]:
    skip = (page - 1) * per_page
    start = _deep_start(skip) if flt == MatchFilter() and skip >= DEEP_PAGE else None
    if start is not None:  # the ids below the block the page starts in, and those to skip
        below, skip = start
        stmt = match_query(MatchFilter(before=below))
    else:
        stmt = match_query(flt)
    return paginate(stmt, page, per_page, *MATCH_LOADS, total=_match_total(flt), skip=skip)


DEEP_PAGE = MATCH_BLOCK
"""From this many rows skipped, a page of the whole match list starts from the kept counts
per block (above it, walking the index from the newest is as short)."""


def _blocks_kept() -> bool:
    """Whether the triggers keep ``MatchTotal`` and ``MatchBlock`` (PostgreSQL)."""
    return bool(db.session.get_bind().dialect.name == "postgresql")


def _deep_start(skip: int) -> tuple[int, int] | None:
    """Where the row ``skip`` of the whole match list (newest first) is, from the kept counts
    per block: (the ids to read below, the rows of those to skip, fewer than a block); None
    where no counts are kept, or past the end."""
    if not _blocks_kept():
        return None
    running = func.sum(MatchBlock.matches).over(order_by=MatchBlock.block.desc())
    blocks = select(MatchBlock.block, MatchBlock.matches, running.label("running")).subquery()
    row = db.session.execute(
        select(blocks.c.block, blocks.c.running - blocks.c.matches)
        .where(blocks.c.running > skip)
        .order_by(blocks.c.block.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    block, above = row
    return (int(block) + 1) * MATCH_BLOCK, skip - int(above)


def _match_total(flt: MatchFilter) -> int | None:
    """The length of the whole match list (or of the part below ``before``) from the kept
    number of matches (``MatchTotal``, ``MatchBlock``), in one statement, without counting a
    million ids; None (count them) for other filters, or where no number is kept (SQLite).

    Below ``before``: the kept counts of the blocks below ``before``'s, and the ids of its
    own block below it counted (at most a block)."""
    if flt.bot_id is not None and replace(flt, bot_id=None, before=None) == MatchFilter():
        return int(db.session.scalar(select(func.count()).select_from(_seats_of(flt))) or 0)
    if replace(flt, before=None) != MatchFilter() or not _blocks_kept():
        return None
    if flt.before is None:
        kept = select(MatchTotal.matches).where(MatchTotal.id == 1)
        found = db.session.scalar(kept)
        return None if found is None else int(found)
    block = flt.before // MATCH_BLOCK
    full = select(func.coalesce(func.sum(MatchBlock.matches), 0)).where(MatchBlock.block < block)
    part = select(func.count()).where(Match.id >= block * MATCH_BLOCK, Match.id < flt.before)
    return int(db.session.scalar(select(full.scalar_subquery() + part.scalar_subquery())) or 0)


def recent_matches(flt: MatchFilter, limit: int) -> list[Match]:
    """The newest ``limit`` matches passing ``flt``, without counting them all (a page that
    shows only the newest few need not count a million rows)."""
    stmt = match_query(flt).options(*MATCH_LOADS).limit(limit)
    return list(db.session.scalars(stmt).unique().all())


def match(match_id: int) -> Match | None:
    return db.session.scalar(
        select(Match)
        .where(Match.id == match_id)
        .options(
            selectinload(Match.seats).joinedload(MatchSeat.bot).joinedload(Bot.owner),
            selectinload(Match.seats).joinedload(MatchSeat.version),
        )
    )


def queue_status() -> dict[str, Any]:
    """Matches waiting and running, which workers play them now (``busy``), and which workers
    played in the last ten minutes (``workers``)."""
    counts = dict(
        db.session.execute(
            select(Match.status, func.count())
            .where(Match.status.in_([MatchStatus.QUEUED, MatchStatus.RUNNING]))
            .group_by(Match.status)
        ).all()
    )
    busy = db.session.scalars(
        select(Match.worker).where(Match.status == MatchStatus.RUNNING).distinct().limit(50)
    ).all()
    since = utcnow() - timedelta(minutes=10)
    workers = db.session.scalars(
        select(Match.worker)
        .where(
            Match.worker.is_not(None),
            or_(Match.status == MatchStatus.RUNNING, Match.finished_at >= since),
        )
        .distinct()
        .limit(50)
    ).all()
    return {
        "queued": int(counts.get(MatchStatus.QUEUED, 0)),
        "running": int(counts.get(MatchStatus.RUNNING, 0)),
        "workers": sorted(w for w in workers if w),
        "busy": sorted(w for w in busy if w),
    }


# --- bots -------------------------------------------------------------------------------------


def bot(bot_id: int) -> Bot | None:
    """The bot with its owner and versions; None if there is none or it was deleted."""
    return db.session.scalar(
        select(Bot)
        .where(Bot.id == bot_id, Bot.status != BotStatus.DELETED)
        .options(joinedload(Bot.owner), selectinload(Bot.versions))
    )


def bot_ratings(bot_id: int) -> list[tuple[Rating, Ladder]]:
    return list(
        db.session.execute(
            select(Rating, Ladder)
            .join(Ladder, Ladder.id == Rating.ladder_id)
            .where(Rating.bot_id == bot_id)
            .order_by(Ladder.game, Ladder.players)
        ).all()
    )


def head_to_head(
    bot_id: int, ladder_id: int | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """Against each opponent: matches shared, and how often this bot finished above or below."""
    me, them = MatchSeat.__table__.alias("me"), MatchSeat.__table__.alias("them")
    stmt = (
        select(
            them.c.bot_id,
            Bot.name,
            func.count(),
            func.sum(func.cast(me.c.place < them.c.place, db.Integer)),
            func.sum(func.cast(me.c.place > them.c.place, db.Integer)),
        )
        .select_from(me)
        .join(them, and_(them.c.match_id == me.c.match_id, them.c.bot_id != me.c.bot_id))
        .join(Bot, Bot.id == them.c.bot_id)
        .join(Match, Match.id == me.c.match_id)
        .where(me.c.bot_id == bot_id, Match.status == MatchStatus.FINISHED)
        .group_by(them.c.bot_id, Bot.name)
        .order_by(func.count().desc())
        .limit(limit)
    )
    if ladder_id is not None:
        stmt = stmt.where(Match.ladder_id == ladder_id)
    return [
        {"bot_id": b, "bot": n, "matches": c, "above": int(a or 0), "below": int(w or 0)}
        for b, n, c, a, w in db.session.execute(stmt).all()
    ]


def rating_history(bot_id: int, ladder_id: int, limit: int = 500) -> list[list[Any]]:
    """``[iso time, mu - 3 sigma, mu, sigma, version]`` after each rated match (``version``: the
    number of the bot's version that played it), at most ``limit`` points.

    Long histories are thinned evenly; the first and the latest points are always kept.
    """
    seat = and_(MatchSeat.match_id == RatingChange.match_id, MatchSeat.bot_id == bot_id)
    rows = db.session.execute(
        select(
            RatingChange.created_at,
            RatingChange.mu_after,
            RatingChange.sigma_after,
            select(func.min(BotVersion.number))
            .join(MatchSeat, MatchSeat.bot_version_id == BotVersion.id)
            .where(seat)
            .scalar_subquery(),
        )
        .where(RatingChange.bot_id == bot_id, RatingChange.ladder_id == ladder_id)
        .order_by(RatingChange.id)
    ).all()
    points = [[iso(t), round(score(m, s), 3), round(m, 3), round(s, 3), v] for t, m, s, v in rows]
    return downsample(points, limit)


def downsample(points: list[T], limit: int) -> list[T]:
    """At most ``limit`` evenly spaced items of ``points``, keeping the first and the last."""
    if len(points) <= limit or limit < 2:
        return points
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def user_by_name(username: str) -> User | None:
    return db.session.scalar(
        select(User).where(User.username == username).options(selectinload(User.bots))
    )


def versions_of(bot_ids: list[int]) -> dict[int, BotVersion]:
    """The newest version of each bot."""
    newest = (
        select(func.max(BotVersion.id))
        .where(BotVersion.bot_id.in_(bot_ids))
        .group_by(BotVersion.bot_id)
    )
    rows = db.session.scalars(select(BotVersion).where(BotVersion.id.in_(newest))).all()
    return {v.bot_id: v for v in rows}


def tournaments() -> list[Tournament]:
    return list(db.session.scalars(select(Tournament).order_by(Tournament.id.desc()).limit(100)))


def iso(moment: datetime | None) -> str | None:
    """An ISO-8601 UTC timestamp (``Z``) for a naive UTC time."""
    return moment.isoformat(timespec="seconds") + "Z" if moment else None


def challenges(
    username: str | None, bot_id: int | None, page: int = 1, per_page: int = 25
) -> Page[Challenge]:
    """Challenges newest first: all, one user's, or those seating ``bot_id``."""
    stmt = (
        select(Challenge)
        .options(
            joinedload(Challenge.user),
            joinedload(Challenge.ladder),
            selectinload(Challenge.matches).selectinload(Match.seats),
        )
        .order_by(Challenge.id.desc())
    )
    if username:
        stmt = stmt.join(User, User.id == Challenge.user_id).where(User.username == username)
    if bot_id is not None:
        seated = (
            select(Match.challenge_id)
            .join(MatchSeat, MatchSeat.match_id == Match.id)
            .where(MatchSeat.bot_id == bot_id, Match.challenge_id.is_not(None))
        )
        stmt = stmt.where(Challenge.id.in_(seated))
    return paginate(stmt, page, per_page)
