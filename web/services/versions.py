"""An owner's control of a bot and its versions: which version plays, retiring and deleting the
bot, and each version's record (matches, wins, errors, think time, rating) to compare them.

The moves of a version's status stay in ``web.services.lifecycle``; this module asks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, delete, select, update

from arena import ratings as skill
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
    RatingChange,
    VersionStatus,
    utcnow,
)
from web.services import lifecycle

CLEAN = frozenset({"ok", "done", "active"})
"""Seat statuses of a match the bot played through without an error."""


class ControlError(ValueError):
    """The owner's request cannot be done; the message says why."""


def choose(bot: Bot, number: int | None) -> BotVersion:
    """Version ``number`` plays (``None``: the newest validated one, then each newer one).
    Commits."""
    if bot.status == BotStatus.DELETED:
        raise ControlError("the bot is deleted")
    try:
        chosen = lifecycle.choose(bot, number)
    except ValueError as exc:
        db.session.rollback()
        raise ControlError(str(exc)) from None
    db.session.commit()
    return chosen


def retire(bot: Bot) -> None:
    """The bot stops playing the ladders (its queued ladder matches are cancelled); its page,
    ratings and matches stay. Choosing a version, or a new version, brings it back. Commits."""
    if bot.status == BotStatus.DELETED:
        raise ControlError("the bot is deleted")
    _stop(bot, BotStatus.RETIRED)
    db.session.commit()


def delete_bot(bot: Bot, confirm: str) -> None:
    """The bot leaves the site for good: no page, no ladder row, its queued matches cancelled.
    Its finished matches and replays stay, showing its name. ``confirm`` must be its name.
    Commits."""
    if confirm != bot.name:
        raise ControlError(f"to delete the bot, confirm with its name, {bot.name!r}")
    _stop(bot, BotStatus.DELETED)
    bot.deleted_at = utcnow()
    version_ids = [v.id for v in bot.versions]
    seated = select(MatchSeat.match_id).where(MatchSeat.bot_version_id.in_(version_ids))
    db.session.execute(
        update(Match)
        .where(Match.id.in_(seated), Match.status == MatchStatus.QUEUED)
        .values(
            status=MatchStatus.CANCELLED,
            finished_at=utcnow(),
            error="cancelled before it was played: a bot seated in it was deleted",
        )
        .execution_options(synchronize_session=False)
    )
    # Off every ladder table; its rating history (and everyone else's) stays as it was.
    db.session.execute(delete(Rating).where(Rating.bot_id == bot.id))
    db.session.commit()


def _stop(bot: Bot, status: BotStatus) -> None:
    locked = db.session.get(Bot, bot.id, with_for_update={"key_share": True})
    assert locked is not None
    for version in bot.versions:
        if version.status == VersionStatus.ACTIVE:
            lifecycle.retire(version)
    locked.status = status


# --- records --------------------------------------------------------------------------------


@dataclass
class Record:
    """What one version did: its finished matches by kind, places, errors and think time."""

    version_id: int
    number: int
    status: str
    matches: int = 0
    ladder_matches: int = 0
    wins: int = 0
    errors: int = 0
    place_sum: int = 0
    cpu_sum: float = 0.0
    cpu_matches: int = 0
    ratings: dict[str, float] = field(default_factory=dict)
    """The score (``mu - 3 sigma``) after the version's last rated match, by ladder slug."""

    def to_json(self) -> dict[str, Any]:
        return {
            "version_id": self.version_id,
            "number": self.number,
            "status": self.status,
            "matches": self.matches,
            "ladder_matches": self.ladder_matches,
            "wins": self.wins,
            "win_rate": _ratio(self.wins, self.matches),
            "average_place": _ratio(self.place_sum, self.matches),
            "errors": self.errors,
            "error_rate": _ratio(self.errors, self.matches),
            "think_seconds": _ratio(self.cpu_sum, self.cpu_matches),
            "ratings": {k: round(v, 3) for k, v in sorted(self.ratings.items())},
        }


def _ratio(part: float, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def records(bot: Bot) -> list[Record]:
    """Every version's record, newest first (validation matches are not counted)."""
    found = {v.id: Record(v.id, v.number, str(v.status)) for v in bot.versions}
    rows = db.session.execute(
        select(MatchSeat.bot_version_id, MatchSeat.place, MatchSeat.status, MatchSeat.cpu_seconds)
        .add_columns(Match.kind)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(
            MatchSeat.bot_id == bot.id,
            Match.status == MatchStatus.FINISHED,
            Match.kind != MatchKind.VALIDATION,
        )
    ).all()
    for version_id, place, status, cpu, kind in rows:
        _count(found[version_id], place, status, cpu, kind)
    for version_id, slug, rated in _last_ratings(bot.id):
        found[version_id].ratings[slug] = rated
    return sorted(found.values(), key=lambda r: -r.number)


def _count(
    record: Record, place: int | None, status: str | None, cpu: float | None, kind: Any
) -> None:
    record.matches += 1
    record.ladder_matches += kind == MatchKind.LADDER
    record.wins += place == 1
    record.place_sum += place or 0
    record.errors += status not in CLEAN
    if cpu is not None:
        record.cpu_sum += cpu
        record.cpu_matches += 1


def _last_ratings(bot_id: int) -> list[tuple[int, str, float]]:
    """(version id, ladder slug, score) after each version's last rated match on each ladder."""
    same = and_(RatingChange.match_id == MatchSeat.match_id, RatingChange.bot_id == bot_id)
    rows = db.session.execute(
        select(MatchSeat.bot_version_id, Ladder.slug)
        .add_columns(RatingChange.mu_after, RatingChange.sigma_after)
        .join(RatingChange, same)
        .join(Ladder, Ladder.id == RatingChange.ladder_id)
        .where(MatchSeat.bot_id == bot_id)
        .order_by(RatingChange.id)
    ).all()
    last: dict[tuple[int, str], float] = {}
    for version_id, slug, mu, sigma in rows:
        last[(version_id, slug)] = skill.display(skill.Rating(mu, sigma))
    return [(v, slug, value) for (v, slug), value in last.items()]
