"""Ladder ratings in the database, updated under row locks.

On PostgreSQL the rating rows of a table are locked with ``SELECT ... FOR UPDATE`` in id order
(so two workers finishing matches of the same bot wait for each other instead of one overwriting
the other's update, and never deadlock); on SQLite every write transaction already holds the
database's single write lock from its first statement.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from arena import ratings as skill
from web.extensions import db
from web.models import Match, MatchStatus, Rating, RatingChange, utcnow


def ensure_rating(bot_id: int, ladder_id: int, start: skill.Rating | None = None) -> Rating:
    """The bot's rating row on a ladder, created (at ``start`` or the default) if missing."""
    query = select(Rating).where(Rating.bot_id == bot_id, Rating.ladder_id == ladder_id)
    row: Rating | None = db.session.scalar(query)
    if row is not None:
        return row
    start = start or skill.Rating()
    try:
        with db.session.begin_nested():
            row = Rating(bot_id=bot_id, ladder_id=ladder_id, mu=start.mu, sigma=start.sigma)
            db.session.add(row)
    except IntegrityError:  # created by a concurrent transaction since our read: use that one
        row = db.session.scalar(query)
        assert row is not None
    return row


def locked_ratings(bot_ids: Sequence[int], ladder_id: int) -> dict[int, Rating]:
    """The rating rows of ``bot_ids`` on a ladder, locked for this transaction, by bot id."""
    for bot_id in sorted(set(bot_ids)):
        ensure_rating(bot_id, ladder_id)
    rows = db.session.scalars(
        select(Rating)
        .where(Rating.ladder_id == ladder_id, Rating.bot_id.in_(set(bot_ids)))
        .order_by(Rating.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    return {row.bot_id: row for row in rows}


def apply_match(match: Match, bot_ids: Sequence[int], ranking: Sequence[int]) -> None:
    """Rate one finished ladder match (seat k held ``bot_ids[k]``) inside the caller's transaction.

    Adds one ``RatingChange`` per bot; their unique (match, bot) constraint makes a second rating
    of the same match fail instead of counting twice.
    """
    assert match.ladder_id is not None
    rows = locked_ratings(bot_ids, match.ladder_id)
    before = {bot: skill.Rating(rows[bot].mu, rows[bot].sigma) for bot in rows}
    after = skill.rate_table(before, list(bot_ids), list(ranking))
    now = utcnow()
    for bot_id, new in after.items():
        row = rows[bot_id]
        place = min(p for b, p in zip(bot_ids, ranking, strict=True) if b == bot_id)
        db.session.add(
            RatingChange(
                match_id=match.id,
                bot_id=bot_id,
                ladder_id=match.ladder_id,
                place=place,
                mu_before=row.mu,
                sigma_before=row.sigma,
                mu_after=new.mu,
                sigma_after=new.sigma,
            )
        )
        row.mu, row.sigma = new.mu, new.sigma
        row.games += 1
        row.updated_at = row.last_played_at = now


def new_version_rating(bot_id: int, ladder_id: int) -> Rating:
    """A new version keeps the bot's mu and gets a wider sigma (``arena.ratings.new_version``).

    The row is read under its lock, so a match finishing meanwhile is either seen or waits.
    """
    row = locked_ratings([bot_id], ladder_id)[bot_id]
    fresh = skill.new_version(skill.Rating(row.mu, row.sigma))
    row.mu, row.sigma = fresh.mu, fresh.sigma
    row.updated_at = utcnow()
    return row


def recompute(ladder_id: int) -> int:
    """Rebuild a ladder's ratings from its finished rated matches, in order. Commits.

    Returns the number of matches replayed. Version resets are not replayed: the result is the
    rating every bot would have if it had played its whole history as one version.
    """
    matches = db.session.scalars(
        select(Match)
        .where(
            Match.ladder_id == ladder_id,
            Match.rated.is_(True),
            Match.status == MatchStatus.FINISHED,
        )
        .order_by(Match.finished_at, Match.id)
    ).all()
    db.session.execute(delete(RatingChange).where(RatingChange.ladder_id == ladder_id))
    for row in db.session.scalars(select(Rating).where(Rating.ladder_id == ladder_id)):
        row.mu, row.sigma, row.games = skill.DEFAULT_MU, skill.DEFAULT_SIGMA, 0
    db.session.flush()
    for match in matches:
        if match.result is not None:
            apply_match(match, [s.bot_id for s in match.seats], match.result["ranking"])
    db.session.commit()
    return len(matches)


def leaderboard(ladder_id: int) -> list[tuple[Rating, float]]:
    """Rating rows of a ladder with their displayed score, best first."""
    rows = db.session.scalars(select(Rating).where(Rating.ladder_id == ladder_id)).all()
    scored = [(row, skill.display(skill.Rating(row.mu, row.sigma))) for row in rows]
    return sorted(scored, key=lambda pair: -pair[1])
