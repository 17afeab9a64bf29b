"""Challenges: an unrated match or series an author asks for between chosen bot versions.

An author names the bots (each playing its current version, or, for the author's own bots,
any version that passed validation: old against new) and a ladder, whose game, variant and
table size the matches are played on. Each deal is one match, or on a mirrored ladder one
match per seat rotation of the same cards (a mirror group, sealed as the ladder's are:
``web.services.sealing``). The matches go to their own queue, behind validation and
placement and ahead of ordinary ladder matches, and are never rated.

Each author may ask for ``CHALLENGE_RATE_LIMIT`` challenges (counted in the database, per user,
over a sliding window); one more is refused with the moment the next is allowed. Since
challenges go ahead of ladder play, the whole platform holds at most ``CHALLENGE_QUEUE_MAX``
challenge matches waiting: many accounts together cannot starve the ladders, and a challenge
that would pass the cap is refused (try again in a minute) rather than queued late.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from flask import current_app
from limits import RateLimitItem, parse
from sqlalchemy import func, select

from arena import matchmaking
from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    BotVersion,
    Challenge,
    Ladder,
    Match,
    MatchKind,
    MatchStatus,
    User,
    VersionStatus,
    utcnow,
)
from web.services.matches import create_match
from web.services.seeds import new_seed

VALIDATED = (VersionStatus.ACTIVE, VersionStatus.RETIRED)


class ChallengeError(ValueError):
    """The challenge cannot be made; the message says why, for its author."""


class ChallengeLimit(Exception):
    """The author used up their challenges for now; ``retry_after`` seconds until the next."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Entry:
    """One seat of a challenge as asked: a bot, and a version number (None: the one playing)."""

    bot_id: int
    version: int | None = None


def allowance() -> RateLimitItem:
    return parse(str(current_app.config["CHALLENGE_RATE_LIMIT"]))


def describe_allowance() -> str:
    """``12 challenges per hour``."""
    item = allowance()
    unit = item.GRANULARITY.name
    per = unit if item.multiples == 1 else f"{item.multiples} {unit}s"
    return f"{item.amount} challenge{'s' if item.amount != 1 else ''} per {per}"


def create(user: User, ladder: Ladder, entries: list[Entry], deals: int) -> Challenge:
    """Queue the matches of a new challenge by ``user``. Commits.

    ``ChallengeError`` for a challenge that cannot be played, ``ChallengeLimit`` when the
    author has used up their allowance (nothing is queued either way).
    """
    try:
        versions = _seats(user, ladder, entries)
        _check_size(ladder, deals)
        _within_allowance(user)
        _room_in_queue(ladder, deals)
    except (ChallengeError, ChallengeLimit):
        db.session.rollback()
        raise
    challenge = Challenge(
        user_id=user.id, ladder_id=ladder.id, entries=[v.id for v in versions], deals=deals
    )
    db.session.add(challenge)
    db.session.flush()
    for _ in range(deals):
        _deal(challenge, ladder, versions)
    db.session.commit()
    return challenge


def _deal(challenge: Challenge, ladder: Ladder, versions: list[BotVersion]) -> None:
    seatings = matchmaking.mirrored_seatings(versions) if ladder.mirrored else [versions]
    group = uuid.uuid4().hex if len(seatings) > 1 else None
    seed = new_seed()
    for seating in seatings:
        create_match(
            ladder.game_config(),
            list(seating),
            seed=seed,
            kind=MatchKind.CHALLENGE,
            mirror_group=group,
            rated=False,
            challenge_id=challenge.id,
        )


def _check_size(ladder: Ladder, deals: int) -> None:
    most = int(current_app.config["CHALLENGE_MAX_MATCHES"])
    per_deal = ladder.players if ladder.mirrored else 1
    if deals < 1 or deals * per_deal > most:
        rotations = f" ({per_deal} seat rotations each)" if per_deal > 1 else ""
        raise ChallengeError(
            f"a challenge holds 1 to {most // per_deal} deals on {ladder.slug}{rotations}: "
            f"at most {most} matches; {deals} asked"
        )


def _seats(user: User, ladder: Ladder, entries: list[Entry]) -> list[BotVersion]:
    if not ladder.active:
        raise ChallengeError(f"the ladder {ladder.slug} is closed")
    if len(entries) != ladder.players:
        raise ChallengeError(
            f"{ladder.slug} seats {ladder.players} bots: name {ladder.players} "
            f"(you named {len(entries)})"
        )
    versions = [_version(user, ladder, entry) for entry in entries]
    if not any(v.bot.owner_id == user.id for v in versions):
        raise ChallengeError("a challenge seats at least one of your own bots")
    return versions


def _version(user: User, ladder: Ladder, entry: Entry) -> BotVersion:
    bot = db.session.get(Bot, entry.bot_id)
    if bot is None or bot.status == BotStatus.DELETED:
        raise ChallengeError(f"there is no bot {entry.bot_id}")
    mine = bot.owner_id == user.id
    if entry.version is None:
        version = bot.active_version()
        if version is None or (not mine and bot.status != BotStatus.ACTIVE):
            raise ChallengeError(f"{bot.name} has no version playing just now ({bot.status})")
    else:
        if not mine:
            raise ChallengeError(
                f"{bot.name} is not yours: it plays the version it plays now "
                "(name a version only of your own bots)"
            )
        version = next((v for v in bot.versions if v.number == entry.version), None)
        if version is None:
            raise ChallengeError(f"{bot.name} has no version {entry.version}")
        if version.status not in VALIDATED:
            raise ChallengeError(
                f"{bot.name} version {version.number} is {version.status}: only a version "
                "that passed validation can play"
            )
    if ladder.game not in (version.games or []):
        raise ChallengeError(
            f"{bot.name} version {version.number} does not play {ladder.game} "
            f"(it plays {', '.join(version.games or []) or 'nothing'})"
        )
    return version


def _within_allowance(user: User) -> None:
    """Raise ``ChallengeLimit`` if ``user`` asked for all their challenges of the window.

    The user's row is locked first, so two requests at once are counted one after the other.
    """
    item = allowance()
    db.session.get(User, user.id, with_for_update={"key_share": True})
    window = timedelta(seconds=item.get_expiry())
    since = utcnow() - window
    times = db.session.scalars(
        select(Challenge.created_at)
        .where(Challenge.user_id == user.id, Challenge.created_at > since)
        .order_by(Challenge.created_at)
    ).all()
    if len(times) < item.amount:
        return
    reset = times[len(times) - item.amount] + window
    wait = max(1, round((reset - utcnow()).total_seconds()))
    at = time.strftime("%H:%M:%S UTC", time.gmtime(time.time() + wait))
    later = f"{wait} s" if wait < 120 else f"{round(wait / 60)} min"
    raise ChallengeLimit(
        f"you have used up your {describe_allowance()}; the next is allowed at {at} (in {later})",
        wait,
    )


QUEUE_RETRY_S = 60
"""What a refusal for a full challenge queue asks the author to wait."""


def _room_in_queue(ladder: Ladder, deals: int) -> None:
    """Raise ``ChallengeLimit`` if the new matches would take the platform's waiting challenge
    matches past ``CHALLENGE_QUEUE_MAX``.

    Counted after the author's row lock (``_within_allowance``): two authors at once may both
    pass, so the cap can be passed by at most one challenge per concurrent request.
    """
    most = int(current_app.config["CHALLENGE_QUEUE_MAX"])
    waiting = db.session.scalar(
        select(func.count()).where(
            Match.kind == MatchKind.CHALLENGE, Match.status == MatchStatus.QUEUED
        )
    )
    wanted = deals * (ladder.players if ladder.mirrored else 1)
    if int(waiting or 0) + wanted > most:
        raise ChallengeLimit(
            f"the platform's challenge queue is full ({waiting} of {most} matches waiting); "
            f"try again in a minute",
            QUEUE_RETRY_S,
        )


def count_recent(user: User) -> int:
    """Challenges ``user`` asked for in the current window."""
    since = utcnow() - timedelta(seconds=allowance().get_expiry())
    query = select(func.count()).where(Challenge.user_id == user.id, Challenge.created_at > since)
    return int(db.session.scalar(query) or 0)
