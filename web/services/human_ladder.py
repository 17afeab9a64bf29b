"""The human ladder of each game: people at the tables and the bot versions they played.

One ladder per game, whatever its variant or table size, rated with the bot ladders' system
(``arena.ratings``) but in rows of its own (``HumanRating``): a table never changes a bot
ladder's rating and a ladder match never changes these. An author reads here how a version
fares against people: the share of rated people whose skill it exceeds ("beats 70 % of human
players"), once it has played ``HUMAN_LADDER_MIN_GAMES`` tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flask import current_app
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from arena import ratings as skill
from web.extensions import db
from web.models import HumanRating, Match, utcnow

HUMAN = "human"


def _ensure(game: str, bot_id: int, version_id: int, person: bool) -> None:
    query = select(HumanRating.id).where(
        HumanRating.game == game, HumanRating.bot_version_id == version_id
    )
    if db.session.scalar(query) is not None:
        return
    start = skill.Rating()
    try:
        with db.session.begin_nested():
            db.session.add(
                HumanRating(
                    game=game,
                    bot_id=bot_id,
                    bot_version_id=version_id,
                    person=person,
                    mu=start.mu,
                    sigma=start.sigma,
                )
            )
    except IntegrityError:  # made by a table finishing at the same moment: that one it is
        pass


def rate_table(match: Match, ranking: Sequence[int]) -> None:
    """Rate one finished table inside the caller's transaction: every seat's row on the game's
    human ladder, locked in id order (two tables finishing at once wait for each other)."""
    game = str(match.game_config["game"])
    seats = list(match.seats)
    for seat in sorted(seats, key=lambda s: s.bot_version_id):
        _ensure(game, seat.bot_id, seat.bot_version_id, seat.bot.kind == HUMAN)
    versions = [s.bot_version_id for s in seats]
    rows = db.session.scalars(
        select(HumanRating)
        .where(HumanRating.game == game, HumanRating.bot_version_id.in_(versions))
        .order_by(HumanRating.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    by_version = {row.bot_version_id: row for row in rows}
    before = {v: skill.Rating(by_version[v].mu, by_version[v].sigma) for v in by_version}
    after = skill.rate_table(before, versions, list(ranking))
    now = utcnow()
    for version_id, new in after.items():
        row = by_version[version_id]
        row.mu, row.sigma = new.mu, new.sigma
        row.games += 1
        row.updated_at = now


@dataclass(frozen=True)
class Standing:
    """How a bot version fares against people at one game."""

    game: str
    games: int
    beats: int
    """Percent of the rated people whose skill estimate (the rating's mean, ``mu``: who would
    more likely win, not the cautious ladder score) is below the version's."""
    people: int


def standings(version_id: int) -> list[Standing]:
    """The version's standing on each game's human ladder where it played enough tables."""
    least = int(current_app.config["HUMAN_LADDER_MIN_GAMES"])
    rows = db.session.scalars(
        select(HumanRating).where(
            HumanRating.bot_version_id == version_id, HumanRating.games >= least
        )
    ).all()
    return [s for row in rows if (s := _standing(row)) is not None]


def _standing(row: HumanRating) -> Standing | None:
    people = db.session.scalars(
        select(HumanRating).where(
            HumanRating.game == row.game, HumanRating.person.is_(True), HumanRating.games > 0
        )
    ).all()
    if not people:
        return None
    below = sum(1 for p in people if p.mu < row.mu)
    return Standing(row.game, row.games, round(100 * below / len(people)), len(people))


def ladder(game: str) -> list[tuple[HumanRating, float]]:
    """A game's human ladder, people and bot versions, best first, with their scores."""
    rows = db.session.scalars(
        select(HumanRating).where(HumanRating.game == game, HumanRating.games > 0)
    ).all()
    scored = [(row, skill.display(skill.Rating(row.mu, row.sigma))) for row in rows]
    return sorted(scored, key=lambda pair: -pair[1])
