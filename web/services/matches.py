"""The match lifecycle: queued -> running -> finished | failed (or back to queued); a queued
ladder match that seats a retired version -> cancelled.

The database is the source of truth. A worker *claims* a match with one compare-and-set UPDATE;
whoever loses the race (a duplicate delivery, a redelivery after the visibility timeout) does
nothing. The result, the rating changes and the status are written in one transaction, guarded by
the claim's attempt number, so a match is rated exactly once however often it was played.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from flask import current_app
from sqlalchemy import ColumnElement, and_, exists, or_, select, update

from web.extensions import db
from web.models import (
    BotVersion,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    VersionStatus,
    utcnow,
)
from web.services import attempts, sealing
from web.services.placement import placement_left
from web.services.queue import (
    CHALLENGES,
    MATCHES,
    URGENT,
    VALIDATE,
    match_ids_in_broker,
    send_match,
    send_match_after_commit,
)
from web.services.seeds import new_seed as new_seed  # ladders draw through here

log = logging.getLogger(__name__)


def worker_name() -> str:
    """Who holds a claim: the worker's host identity (``WORKER_HOST``) and its pid."""
    import os

    return f"{attempts.worker_host()}:{os.getpid()}"


class Seated(Protocol):
    """What a seat needs of a version: its id and its bot's (a ``BotVersion``, or the plain
    columns the scheduler read)."""

    @property
    def id(self) -> int: ...

    @property
    def bot_id(self) -> int: ...


def create_match(
    game_config: dict[str, Any],
    versions: Sequence[Seated],
    *,
    seed: int | None = None,
    kind: MatchKind = MatchKind.LADDER,
    ladder_id: int | None = None,
    tournament_id: int | None = None,
    mirror_group: str | None = None,
    rated: bool = True,
    urgent: bool | None = None,
    challenge_id: int | None = None,
) -> Match:
    """Add a queued match (seat k gets ``versions[k]``); it is sent to a worker after commit.

    ``urgent`` (placement) matches go ahead of ordinary ones, challenges next; validation
    matches go first.
    """
    match = new_match(
        game_config,
        versions,
        seed=seed,
        kind=kind,
        ladder_id=ladder_id,
        tournament_id=tournament_id,
        mirror_group=mirror_group,
        rated=rated,
        challenge_id=challenge_id,
    )
    send_new([match], urgent=urgent)
    return match


def new_match(
    game_config: dict[str, Any],
    versions: Sequence[Seated],
    *,
    seed: int | None = None,
    kind: MatchKind = MatchKind.LADDER,
    ladder_id: int | None = None,
    tournament_id: int | None = None,
    mirror_group: str | None = None,
    rated: bool = True,
    challenge_id: int | None = None,
) -> Match:
    """A queued match added to the session, not yet flushed nor sent (``send_new``)."""
    match = Match(
        kind=kind,
        ladder_id=ladder_id,
        tournament_id=tournament_id,
        challenge_id=challenge_id,
        game_config=dict(game_config),
        seed=new_seed() if seed is None else seed,
        mirror_group=mirror_group,
        rated=rated and ladder_id is not None,
        max_attempts=int(current_app.config["MAX_ATTEMPTS"]),
    )
    for seat, version in enumerate(versions):
        match.seats.append(MatchSeat(seat=seat, bot_id=version.bot_id, bot_version_id=version.id))
    db.session.add(match)
    return match


def send_new(matches: Sequence[Match], *, urgent: bool | None = None) -> None:
    """Flush ``matches`` (made by ``new_match``; one statement per table for all of them) and
    send each to its queue after commit."""
    db.session.flush()
    for match in matches:
        if match.kind == MatchKind.VALIDATION:
            send_match_after_commit(match.id, queue=VALIDATE)
        elif match.kind in (MatchKind.CHALLENGE, MatchKind.HUMAN):  # people wait for no ladder
            send_match_after_commit(match.id, queue=CHALLENGES)
        else:
            send_match_after_commit(match.id, queue=URGENT if urgent else MATCHES)


def match_queue(match: Match) -> str:
    """The queue ``match`` goes to: validation first, then ladder matches with a version still
    playing its placement matches, then challenges, then the rest."""
    if match.kind == MatchKind.VALIDATION:
        return VALIDATE
    if match.kind in (MatchKind.CHALLENGE, MatchKind.HUMAN):
        return CHALLENGES
    if match.kind != MatchKind.LADDER:
        return MATCHES
    versions = [db.session.get(BotVersion, seat.bot_version_id) for seat in match.seats]
    return URGENT if any(v is not None and placement_left(v) > 0 for v in versions) else MATCHES


# --- claim and lease ------------------------------------------------------------------------


def claim(match_id: int, worker: str, lease_seconds: float) -> int | None:
    """Take match ``match_id`` for this worker; the attempt number, or None if someone else has it.

    Succeeds for a queued match, or a running one whose lease ran out (its worker died) or
    whose holder is a process of this host known to be gone (``attempts.holder_gone``: the
    broker redelivered a dead worker's message), as long as attempts remain
    (``web.services.attempts``). Commits.
    """
    now = utcnow()
    # A person's table is never taken over: its cards were seen (``attempts.lost_limit``).
    running = and_(Match.status == MatchStatus.RUNNING, Match.kind != MatchKind.HUMAN)
    claimable = or_(Match.status == MatchStatus.QUEUED, and_(running, Match.lease_until < now))
    holder = db.session.scalar(select(Match.worker).where(Match.id == match_id, running))
    if attempts.holder_gone(holder):
        claimable = or_(claimable, and_(running, Match.worker == holder))
    stmt = (
        update(Match)
        .where(Match.id == match_id, claimable, attempts.left(), ~_seats_retired())
        .values(
            status=MatchStatus.RUNNING,
            attempts=Match.attempts + 1,
            lost_workers=attempts.lost_on_takeover(),
            lease_until=now + timedelta(seconds=lease_seconds),
            worker=worker,
            started_at=now,
        )
        .execution_options(synchronize_session=False)
    )
    won = db.session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
    attempt = db.session.scalar(select(Match.attempts).where(Match.id == match_id)) if won else None
    if not won:
        cancel_retired(match_ids=[match_id])  # seated before its version retired
    db.session.commit()
    return attempt


def _seats_retired() -> ColumnElement[bool]:
    """SQL: a ladder match with a seat held by a retired version (no use playing it)."""
    retired = exists().where(
        MatchSeat.match_id == Match.id,
        MatchSeat.bot_version_id == BotVersion.id,
        BotVersion.status == VersionStatus.RETIRED,
    )
    return and_(Match.kind == MatchKind.LADDER, retired)


def cancel_retired(
    *, match_ids: Iterable[int] | None = None, version_ids: Iterable[int] | None = None
) -> list[int]:
    """Cancel the queued ladder and placement matches that seat a retired version (among
    ``match_ids``, or of ``version_ids``, or all); their ids. Does not commit.

    A running one is left to finish. The scheduler no longer counts a cancelled match, and a
    worker given its message finds nothing to claim.
    """
    query = select(Match.id).where(Match.status == MatchStatus.QUEUED, _seats_retired())
    if match_ids is not None:
        query = query.where(Match.id.in_(list(match_ids)))
    if version_ids is not None:
        seated = select(MatchSeat.match_id).where(MatchSeat.bot_version_id.in_(list(version_ids)))
        query = query.where(Match.id.in_(seated))
    ids = list(db.session.scalars(query))
    if ids:
        db.session.execute(
            update(Match)
            .where(Match.id.in_(ids), Match.status == MatchStatus.QUEUED)
            .values(
                status=MatchStatus.CANCELLED,
                finished_at=utcnow(),
                lease_until=None,
                error="cancelled before it was played: a version seated in it was retired",
            )
            .execution_options(synchronize_session=False)
        )
    return ids


def renew_lease(match_id: int, attempt: int, lease_seconds: float) -> bool:
    """Extend the lease of a claim still held; False if the match was taken away. Commits."""
    stmt = (
        update(Match)
        .where(
            Match.id == match_id,
            Match.attempts == attempt,
            Match.status == MatchStatus.RUNNING,
        )
        .values(lease_until=utcnow() + timedelta(seconds=lease_seconds))
        .execution_options(synchronize_session=False)
    )
    held: bool = db.session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
    db.session.commit()
    return held


def lease_held(match_id: int) -> float | None:
    """Seconds until the lease of the running match ``match_id`` lapses (None if it is not
    running or its lease has lapsed already). Ends its read transaction."""
    now = utcnow()
    until = db.session.scalar(
        select(Match.lease_until).where(
            Match.id == match_id, Match.status == MatchStatus.RUNNING, Match.lease_until > now
        )
    )
    db.session.rollback()
    return None if until is None else (until - now).total_seconds()


def release(
    match_id: int, attempt: int, error: str, *, platform: bool = False, storage: bool = False
) -> MatchStatus | None:
    """Give back a claim after a failed play: queued again (after a backoff), or failed.

    A fault of the ``platform`` spends no attempt (``web.services.attempts``); after one of the
    ``storage`` the message comes back every ``STORAGE_PROBE_EVERY`` s to look whether the
    storage answers again, rather than once the whole backoff has passed. Commits; returns the
    new status (None if the claim was no longer held).
    """
    match = db.session.get(Match, match_id, with_for_update=True)
    if match is None or match.status != MatchStatus.RUNNING or match.attempts != attempt:
        db.session.rollback()
        return None
    delay = attempts.charge(match, error, platform=platform, storage=storage)
    queue = match_queue(match)
    db.session.commit()
    if delay is None:
        tell_ended([match_id])
        return MatchStatus.FAILED
    if storage:
        delay = min(delay, attempts.STORAGE_PROBE_EVERY)
    send_match(match_id, queue=queue, countdown=delay)
    return MatchStatus.QUEUED


# --- who is told when a match ends -----------------------------------------------------------


@dataclass(frozen=True)
class Ended:
    """A match that ended: finished, or failed for good."""

    match_id: int
    kind: MatchKind
    status: MatchStatus


EndListener = Callable[[Ended], None]
"""Told of a match that ended, with no transaction open; may read, write and commit."""

_listeners: dict[MatchKind, list[EndListener]] = {}


def when_ended(kind: MatchKind) -> Callable[[EndListener], EndListener]:
    """Register the decorated function to be told of every ``kind`` match that ends.

    The services above this one (the bot lifecycle for validation matches, the ladders for
    ladder matches, the tournaments for tournament matches) register at their import, so this
    module needs none of them.
    """

    def register(listener: EndListener) -> EndListener:
        told = _listeners.setdefault(kind, [])
        if listener not in told:
            told.append(listener)
        return listener

    return register


def listeners(kind: MatchKind) -> tuple[EndListener, ...]:
    """Who is told when a ``kind`` match ends."""
    return tuple(_listeners.get(kind, ()))


def tell_ended(match_ids: Iterable[int]) -> None:
    """Tell the listeners of each match's kind that it ended (from the committed rows).

    No transaction is open while a listener runs, and none is left open afterwards.
    """
    ids = list(match_ids)
    if not ids:
        return
    try:
        rows = db.session.execute(
            select(Match.id, Match.kind, Match.status).where(Match.id.in_(ids)).order_by(Match.id)
        ).all()
    finally:
        db.session.rollback()
    for match_id, kind, status in rows:
        for listener in listeners(kind):
            try:
                listener(Ended(match_id, kind, status))
            finally:
                db.session.rollback()


# --- the reaper -----------------------------------------------------------------------------


@dataclass
class ReapReport:
    """What one pass of the reaper did."""

    requeued: list[int]
    resent: list[int]
    failed: list[int]


def reap(now: datetime | None = None) -> ReapReport:
    """Find matches the broker lost or whose worker died, and queue them again (or fail them).

    - running past its lease: queued again if attempts remain, else failed;
    - queued for longer than ``QUEUED_STALE_AFTER`` seconds and with no message in the broker
      (neither waiting in a match queue nor held by a worker), on two looks at the broker that
      enclose the database read: the message is sent again. A match merely waiting behind
      others is left alone. When the broker cannot be read, every such match is sent again (a
      duplicate message is harmless: claims are compare-and-set).
    No transaction is open while the broker is read. Commits; messages are sent after commit.
    """
    now = now or utcnow()
    report = ReapReport([], [], [])
    before = match_ids_in_broker()
    stale_before = now - timedelta(seconds=float(current_app.config["QUEUED_STALE_AFTER"]))
    suspects = _stale_queued(stale_before, before)
    after = match_ids_in_broker() if suspects else set()
    lost = [i for i in suspects if after is None or i not in after]
    expired = _lapsed(now, report)
    stale = db.session.scalars(
        select(Match)
        .where(
            Match.id.in_(lost),
            Match.status == MatchStatus.QUEUED,
            Match.queued_at < stale_before,
        )
        .with_for_update(skip_locked=True)
    ).all()
    for match in stale:
        _reap_queued(match, now, report)
    queues = {m.id: match_queue(m) for m in [*expired, *stale]}
    db.session.commit()
    for match_id in report.requeued + report.resent:
        send_match(match_id, queue=queues[match_id])
    tell_ended(report.failed)
    return report


def take_back_lapsed(now: datetime | None = None) -> ReapReport:
    """The reaper's quick part, run every ``LEASE_CHECK_INTERVAL`` s: a running match whose
    lease lapsed (its worker, or its whole host, is gone) is queued again at once (or failed at
    its bound). Reads no broker. Commits; messages are sent after commit."""
    now = now or utcnow()
    report = ReapReport([], [], [])
    lapsed = _lapsed(now, report)
    queues = {m.id: match_queue(m) for m in lapsed}
    db.session.commit()
    for match_id in report.requeued:
        send_match(match_id, queue=queues[match_id])
    tell_ended(report.failed)
    return report


def _lapsed(now: datetime, report: ReapReport) -> list[Match]:
    """Running matches whose lease lapsed, locked, each queued again or failed in ``report``."""
    expired = db.session.scalars(
        select(Match)
        .where(Match.status == MatchStatus.RUNNING, Match.lease_until < now)
        .with_for_update(skip_locked=True)
    ).all()
    for match in expired:
        _reap_expired(match, now, report)
    return list(expired)


def _stale_queued(stale_before: datetime, in_broker: set[int] | None) -> list[int]:
    """Matches queued since before ``stale_before`` with no message in ``in_broker``.

    Ends its read transaction.
    """
    ids = db.session.scalars(
        select(Match.id).where(Match.status == MatchStatus.QUEUED, Match.queued_at < stale_before)
    ).all()
    db.session.rollback()
    return [i for i in ids if in_broker is None or i not in in_broker]


def _reap_expired(match: Match, now: datetime, report: ReapReport) -> None:
    if attempts.worker_lost(match, now):
        report.requeued.append(match.id)
    else:
        report.failed.append(match.id)


def _reap_queued(match: Match, now: datetime, report: ReapReport) -> None:
    if not attempts.has_attempts_left(match):
        match.status = MatchStatus.FAILED
        match.finished_at = now
        report.failed.append(match.id)
        return
    match.queued_at = now
    report.resent.append(match.id)


def requeue(match_id: int) -> Match:
    """Play a match again (an admin action): queued, with a fresh budget of attempts. Commits.

    A match that already finished keeps its rating changes; replaying it cannot rate it twice.
    """
    match = db.session.get(Match, match_id, with_for_update=True)
    if match is None:
        raise LookupError(f"no match {match_id}")
    if match.status == MatchStatus.FINISHED:
        raise ValueError(f"match {match_id} is finished; it cannot be played again")
    sealing.fresh_deal_if_opened(match)  # its deal may be public by now
    match.status = MatchStatus.QUEUED
    match.max_attempts = match.faults + int(current_app.config["MAX_ATTEMPTS"])
    match.lost_workers = 0
    match.queued_at = utcnow()
    match.lease_until = None
    send_match_after_commit(match.id, queue=match_queue(match))
    db.session.commit()
    return match


def resume_orphans() -> list[int]:
    """Queue again every running match: for a single-machine platform that is (re)starting.

    No worker can hold a claim while the platform is down, so running rows are leftovers of the
    last stop. A stop is not the match's fault: the attempt it used is given back. Commits.
    """
    orphans = db.session.scalars(select(Match).where(Match.status == MatchStatus.RUNNING)).all()
    for match in orphans:
        match.status = MatchStatus.QUEUED
        match.attempts = max(match.attempts - 1, 0)
        match.lease_until = None
        match.queued_at = utcnow()
        send_match_after_commit(match.id, queue=match_queue(match))
    db.session.commit()
    return [m.id for m in orphans]
