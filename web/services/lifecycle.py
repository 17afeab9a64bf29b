"""The life of a bot version, from its upload to its retirement: its states, the moves between
them (``MOVES``, the one table of them), one function per stage, and the claim, lease and
retry rules of its preparation.

::

    uploaded --claim--> building --self-test passed--> validating --clean match--> active
       |  ^                |  |                          |   |                       |
       |  +--platform------+  +--the bot's fault--+      |   +--failed match--+      |
       |     fault, lost worker                   v      |                    v      v
       +--refused upload-----------------------> rejected <-------------------+   retired
                                                         |                           ^
                                                         +--validated, but a newer --+
                                                            version is active already,
                                                            or the owner chose another

    retired --the owner chooses it (a rollback, or forward again)--> active

Placement is not a status of its own: an active version that still owes placement matches
(``web.services.placement``) is *placing*. Other modules report events here (an upload stored,
a validation match ended) and never change a version's status themselves.

Preparing a version (its build and self-test) is claimed like a match: one compare-and-set
UPDATE takes an ``uploaded`` version (or a ``building`` one whose lease ran out) to
``building`` with a lease, renewed while the build runs. Then:

- the bot's own faults (a malformed manifest, its build command failing, its self-test
  failing) reject the version with its output;
- the platform's faults (the storage full, the sandbox unavailable, the database gone) give
  the claim back at once: the version is ``uploaded`` again with the error recorded, and
  prepared again after a backoff that doubles with each such failure, without a bound;
- a worker lost mid-build (killed, out of memory) leaves a lease that runs out: the reaper
  queues the version again and counts it in ``prepare_lost``. A version whose build brings
  its worker down every time is rejected after ``MAX_LOST_WORKERS`` such losses.

The reaper also resends a version whose message was lost (a broker restart): one that is due,
unclaimed for ``QUEUED_STALE_AFTER`` seconds and not waiting in the broker's queue.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Final

from flask import current_app
from sqlalchemy import and_, case, func, or_, select, update

from arena import checking
from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    BotVersion,
    Match,
    MatchKind,
    MatchStatus,
    User,
    VersionStatus,
    utcnow,
)
from web.services import attempts, building, events, ladders, ratings
from web.services.matches import Ended, cancel_retired, create_match, when_ended
from web.services.queue import PREPARE_TASK, after_commit, send_task, version_ids_in_broker
from web.storage import get_storage

log = logging.getLogger(__name__)

S = VersionStatus
MOVES: Final[dict[VersionStatus, frozenset[VersionStatus]]] = {
    # An upload is stored as ``uploaded``; one refused while unpacking is rejected at once.
    S.UPLOADED: frozenset({S.BUILDING, S.REJECTED}),
    # Claimed: the stages pass (validating), refuse the bot (rejected), meet a fault of the
    # platform or lose their worker (uploaded again), or the claim is taken over after its
    # lease ran out (building again, by another worker).
    S.BUILDING: frozenset({S.BUILDING, S.UPLOADED, S.VALIDATING, S.REJECTED}),
    # Validated: active, unless a newer version of the bot is active already (then retired
    # without playing: the newest validated version is the one that plays).
    S.VALIDATING: frozenset({S.ACTIVE, S.REJECTED, S.RETIRED}),
    S.ACTIVE: frozenset({S.RETIRED}),
    S.REJECTED: frozenset(),
    # A retired version passed validation: its owner may choose it to play again (a rollback).
    S.RETIRED: frozenset({S.ACTIVE}),
}
"""Every allowed move of a version's status: from each status, where it may go."""


class IllegalMove(RuntimeError):
    """A move that ``MOVES`` does not allow: a bug, never a bot's doing."""


def move(version: BotVersion, to: VersionStatus, reason: str | None = None) -> None:
    """Set ``version``'s status to ``to``, if ``MOVES`` allows it (else ``IllegalMove``).

    Becoming active or rejected (``reason`` says why) is an event its owner is told of
    (``web.services.events``): emitted here, the one place every status change goes through.
    """
    if to not in MOVES[version.status]:
        raise IllegalMove(f"version {version.id}: {version.status} cannot become {to}")
    version.status = to
    if to in (S.ACTIVE, S.REJECTED):
        bot = version.bot
        if bot is None and version.bot_id is not None:
            bot = db.session.get(Bot, version.bot_id)
        if bot is None:  # a version of no bot yet (not stored): nobody to tell
            return
        if to == S.ACTIVE:
            text = f"{bot.name} version {version.number} is active: it plays the ladders"
            events.emit(bot, events.VERSION_ACTIVE, text, version)
        else:
            text = f"{bot.name} version {version.number} failed: {reason or 'refused'}"
            events.emit(bot, events.VERSION_FAILED, text, version)


# --- the stages ---------------------------------------------------------------------------


def accept(version: BotVersion, files: int) -> None:
    """Upload: the version's files are in place; it is prepared once the transaction commits."""
    version.build_log = f"unpacked {files} files\n"
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    version_id = version.id  # read now: the row's attributes are expired by the commit

    def send_after_commit() -> None:
        with app.app_context():
            send(version_id)

    after_commit(send_after_commit)


def reject(version: BotVersion, reason: str) -> None:
    """The version is refused for good; ``reason`` is for its owner."""
    move(version, S.REJECTED, reason)
    version.error = reason
    log.info("bot version %s rejected: %s", version.id, reason)


def prepare(version_id: int) -> VersionStatus:
    """Build and self-test: read the manifest, build, self-test; then validate or activate.

    Runs under a claim: a platform fault gives the claim back to be tried again later; only
    the bot's own faults reject the version. Commits.
    """
    waiting = _still_waiting_for_storage(version_id)
    if waiting is not None:
        return waiting
    attempt = claim(version_id)
    if attempt is None:
        version = db.session.get(BotVersion, version_id)
        status = version.status if version else S.REJECTED
        db.session.rollback()
        return status
    work = _detached_copy(version_id)  # no transaction stays open during the build
    try:
        with leased(version_id, attempt):
            refusal = building.run(work)
    except Exception as exc:
        fault = building.fault_of(exc)
        if fault.platform:
            log.warning("version %s: preparing it met a platform fault: %s", version_id, exc)
            attempts.forget_transaction()
            attempts.patiently(
                lambda: give_back(version_id, attempt, fault.message, storage=fault.storage),
                f"version {version_id}: giving the claim back",
            )
            return S.UPLOADED
        refusal = fault.message
    return attempts.patiently(
        lambda: _conclude(version_id, attempt, work, refusal),
        f"version {version_id}: concluding",
    )


def _still_waiting_for_storage(version_id: int) -> VersionStatus | None:
    """For a version given back for a storage fault, whose message comes early to look: None
    (prepare it now) once the storage answers, else its status, with its message sent again."""
    version = db.session.get(BotVersion, version_id)
    if version is None or not attempts.waiting_for_storage(
        version.status == S.UPLOADED, version.prepare_due, version.error
    ):
        db.session.rollback()
        return None
    due = (version.prepare_due - utcnow()).total_seconds() if version.prepare_due else 0.0
    db.session.rollback()
    if get_storage().answers():
        return None
    send(version_id, min(due, attempts.STORAGE_PROBE_EVERY))
    return S.UPLOADED


def _detached_copy(version_id: int) -> BotVersion:
    """The version's columns in an object of no session, for the stages to record on."""
    row = db.session.get(BotVersion, version_id)
    assert row is not None
    copy = BotVersion(**{c.key: getattr(row, c.key) for c in BotVersion.__table__.columns})
    db.session.rollback()
    return copy


def _conclude(
    version_id: int, attempt: int, work: BotVersion, refusal: str | None
) -> VersionStatus:
    """Write what the stages found, while the claim holds; validate or activate. Commits."""
    version = held(version_id, attempt)
    if version is None:
        return S.BUILDING
    for name in building.FIELDS:
        setattr(version, name, getattr(work, name))
    if refusal is not None:
        reject(version, refusal)
        db.session.commit()
        return version.status
    version.error = None
    move(version, S.VALIDATING)
    return start_validation(version)


def start_validation(version: BotVersion) -> VersionStatus:
    """Validation: queue a match against sample bots, or activate at once if none can be set
    up (none configured, a trusted version, no opponents). Commits."""
    match = None
    if current_app.config["VALIDATION_MATCH"] and not version.trusted:
        match = validation_match(version)
    if match is None:
        version.validation_log += "no validation match (none configured or no opponents)\n"
        activate(version)
    db.session.commit()
    return version.status


def validation_match(version: BotVersion) -> Match | None:
    """A queued validation match of ``version`` against sample bots (None without them)."""
    game = version.games[0]
    ladder = ladders.default_ladder(game)
    opponents = _sample_opponents(game, ladder.players - 1, exclude=version.bot_id)
    if len(opponents) < ladder.players - 1:
        return None
    match = create_match(
        ladder.game_config(),
        [version, *opponents],
        kind=MatchKind.VALIDATION,
        rated=False,
    )
    version.validation_log += f"validation match {match.id} queued against sample bots\n"
    return match


def _sample_opponents(game: str, count: int, exclude: int) -> list[BotVersion]:
    """Active versions of house (sample) bots playing ``game``, repeated if there are too few."""
    rows = db.session.scalars(
        select(BotVersion)
        .join(Bot)
        .join(User)
        .where(
            User.is_house.is_(True),
            BotVersion.status == S.ACTIVE,
            Bot.id != exclude,
        )
        .order_by(BotVersion.id)
    ).all()
    pool = [v for v in rows if game in (v.games or [])]
    return [pool[i % len(pool)] for i in range(count)] if pool else []


@when_ended(MatchKind.VALIDATION)
def validation_ended(ended: Ended) -> None:
    """The validation match of a version ended: activate or reject the version. Commits."""
    match = db.session.get(Match, ended.match_id)
    assert match is not None
    seat = match.seats[0]
    version = db.session.get(BotVersion, seat.bot_version_id)
    if version is None or version.status != S.VALIDATING:
        return
    outcome = match.outcome or {}
    status = (outcome.get("status") or ["?"])[0]
    forfeited = (outcome.get("forfeited") or [True])[0]
    version.validation_log += (
        f"validation match {match.id}: status {status}, place {seat.place}"
        f"{', forfeited' if forfeited else ''}\n"
    )
    if match.status == MatchStatus.FINISHED and checking.validation_passed(status, forfeited):
        activate(version)
    elif match.status == MatchStatus.FAILED:
        reject(version, f"the validation match could not be played: {match.error}")
    else:
        message = (outcome.get("messages") or [None])[0] or ""
        manifest = building.recorded_manifest(version)
        reject(version, checking.validation_refusal(status, message, manifest))
    db.session.commit()


def activate(version: BotVersion) -> None:
    """Activation: ``version`` becomes the bot's playing version on every ladder of its games
    and the bot's older active version retires; but if a newer version of the bot is active
    already, ``version`` retires without playing. Does not commit.

    The bot's row is locked first, so activations of one bot take turns and each sees what the
    one before it did: whatever order validations finish in, the newest validated version is
    the one left playing. The lock is ``FOR NO KEY UPDATE``: a match finishing meanwhile adds
    rows that refer to the bot (its rating changes), which needs only a key-share lock on it,
    and must not wait for an activation that itself waits for that match's rating rows.
    """
    bot, versions = _locked_versions(version.bot_id)
    newer = [v for v in versions if v.number > version.number and v.status == S.ACTIVE]
    if newer:
        _superseded(version, newer[-1])
        return
    if bot.status == BotStatus.DELETED or _pinned_elsewhere(bot, version, versions):
        _set_aside(version, bot)
        return
    first = all(v.activated_at is None for v in versions if v.id != version.id)
    for older in versions:
        if older.id != version.id and older.status == S.ACTIVE:
            retire(older)
    move(version, S.ACTIVE)
    version.activated_at = utcnow()
    version.error = None
    bot.pinned_number = None  # no chosen version plays (or none was chosen): the newest does
    if bot.status in (BotStatus.PAUSED, BotStatus.RETIRED):
        bot.status, bot.paused_reason, bot.consecutive_failures = BotStatus.ACTIVE, None, 0
    for ladder in ladders.ladders_for(version.games or []):
        if first:
            ratings.ensure_rating(bot.id, ladder.id)
        else:
            ratings.new_version_rating(bot.id, ladder.id)


def _pinned_elsewhere(bot: Bot, version: BotVersion, versions: Sequence[BotVersion]) -> bool:
    """Whether the owner chose another version to play, one that still can."""
    return bot.pinned_number is not None and any(
        v.number == bot.pinned_number and v.status == S.ACTIVE and v.id != version.id
        for v in versions
    )


def _set_aside(version: BotVersion, bot: Bot) -> None:
    """``version`` passed every stage, but its owner chose another version (or deleted the bot)."""
    move(version, S.RETIRED)
    why = (
        "the bot is deleted"
        if bot.status == BotStatus.DELETED
        else f"its owner chose version {bot.pinned_number} to play"
    )
    version.validation_log += (
        f"validated, but {why}: set aside without playing "
        "(choose it on the bot's page to play it)\n"
    )


def choose(bot: Bot, number: int | None) -> BotVersion:
    """The owner's choice: version ``number`` (any that passed validation) plays the ladders of
    its games from now on and stays the one playing until the owner chooses again; ``None``
    goes back to the newest validated version and follows each newer one. The version that
    played until now retires (its queued ladder matches are cancelled); a retired or paused bot
    plays again. ``ValueError`` (a message for the owner) if the version cannot play. Does not
    commit.

    A version that takes over keeps the bot's rating with a wider sigma, as a new version does;
    the rating history itself is left exactly as it was.
    """
    locked, versions = _locked_versions(bot.id)
    validated = [v for v in versions if v.status in (S.ACTIVE, S.RETIRED)]
    if not validated:
        raise ValueError("no version of this bot has passed validation yet")
    chosen = validated[-1] if number is None else _version_numbered(versions, number)
    for other in versions:
        if other.status == S.ACTIVE and other.id != chosen.id:
            retire(other)
    if chosen.status != S.ACTIVE:
        move(chosen, S.ACTIVE)
        chosen.activated_at = utcnow()
        for ladder in ladders.ladders_for(chosen.games or []):
            ratings.new_version_rating(bot.id, ladder.id)
    locked.pinned_number = number
    if locked.status in (BotStatus.PAUSED, BotStatus.RETIRED):  # as a new version does
        locked.status, locked.paused_reason, locked.consecutive_failures = BotStatus.ACTIVE, None, 0
    return chosen


def _version_numbered(versions: Sequence[BotVersion], number: int) -> BotVersion:
    found = next((v for v in versions if v.number == number), None)
    if found is None:
        raise ValueError(f"this bot has no version {number}")
    if found.status not in (S.ACTIVE, S.RETIRED):
        raise ValueError(
            f"version {number} is {found.status}: only a version that passed validation can play"
        )
    return found


def _superseded(version: BotVersion, newest: BotVersion) -> None:
    """``version`` passed every stage, but ``newest`` (a newer version) plays already."""
    move(version, S.RETIRED)
    version.validation_log += (
        f"validated, but version {newest.number} is newer and already active: "
        "retired without playing\n"
    )


def retire(version: BotVersion) -> None:
    """Retirement: an active version stops playing (a newer one took its place); its ladder
    and placement matches still queued are cancelled, never played for nothing."""
    move(version, S.RETIRED)
    cancelled = cancel_retired(version_ids=[version.id])
    if cancelled:
        log.info("version %s retired: queued matches %s cancelled", version.id, cancelled)


# --- claim, lease and retry of the preparation ---------------------------------------------


def lease_seconds() -> float:
    return float(current_app.config["MATCH_LEASE"])


def _lost_limit() -> int:
    return int(current_app.config["MAX_LOST_WORKERS"])


def _lapsed(now: datetime) -> Any:
    return or_(BotVersion.prepare_lease_until.is_(None), BotVersion.prepare_lease_until < now)


def claim(version_id: int) -> int | None:
    """Take the version's preparation; the attempt number, or None if it is not ours. Commits.

    The SQL form of two moves of ``MOVES``: uploaded -> building, and building -> building
    once the holder's lease ran out (its worker was lost: counted in ``prepare_lost``).
    """
    now = utcnow()
    building_now = BotVersion.status == S.BUILDING
    claimable = or_(BotVersion.status == S.UPLOADED, and_(building_now, _lapsed(now)))
    stmt = (
        update(BotVersion)
        .where(BotVersion.id == version_id, claimable, BotVersion.prepare_lost < _lost_limit())
        .values(
            status=S.BUILDING,
            prepare_attempts=BotVersion.prepare_attempts + 1,
            prepare_lost=BotVersion.prepare_lost + case((building_now, 1), else_=0),
            prepare_lease_until=now + timedelta(seconds=lease_seconds()),
        )
        .execution_options(synchronize_session=False)
    )
    won = db.session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
    query = select(BotVersion.prepare_attempts).where(BotVersion.id == version_id)
    attempt = db.session.scalar(query) if won else None
    db.session.commit()
    return attempt


def held(version_id: int, attempt: int) -> BotVersion | None:
    """The version, row-locked, if this claim still holds it (else None, rolled back)."""
    version = db.session.get(BotVersion, version_id, with_for_update=True, populate_existing=True)
    if version is None or version.status != S.BUILDING or version.prepare_attempts != attempt:
        db.session.rollback()
        return None
    version.prepare_lease_until = None
    return version


def renew(version_id: int, attempt: int) -> bool:
    """Extend a held claim's lease; False if it was taken away. Commits."""
    stmt = (
        update(BotVersion)
        .where(
            BotVersion.id == version_id,
            BotVersion.prepare_attempts == attempt,
            BotVersion.status == S.BUILDING,
        )
        .values(prepare_lease_until=utcnow() + timedelta(seconds=lease_seconds()))
        .execution_options(synchronize_session=False)
    )
    ok: bool = db.session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
    db.session.commit()
    return ok


@contextmanager
def leased(version_id: int, attempt: int) -> Iterator[None]:
    """Renew the claim's lease every third of its length while the block runs."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    stop = threading.Event()
    every = max(lease_seconds() / 3, 0.5)

    def beat() -> None:
        while not stop.wait(every):
            with app.app_context():
                try:
                    renew(version_id, attempt)
                except attempts.DATABASE_ERRORS as exc:
                    attempts.forget_transaction()
                    log.warning("version %s: the lease could not be renewed: %s", version_id, exc)
                finally:
                    db.session.remove()

    thread = threading.Thread(target=beat, name=f"lease-version-{version_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def give_back(version_id: int, attempt: int, error: str, *, storage: bool = False) -> float | None:
    """A platform fault: queued again after a backoff, the error recorded. Commits.

    After a fault of the ``storage`` the message comes back every ``STORAGE_PROBE_EVERY`` s
    to look whether the storage answers again, rather than once the whole backoff has passed.
    Returns the backoff, or None if the claim was no longer held.
    """
    version = held(version_id, attempt)
    if version is None:
        return None
    delay = attempts.backoff(max(version.prepare_attempts - version.prepare_lost, 1))
    move(version, S.UPLOADED)
    version.prepare_due = utcnow() + timedelta(seconds=delay)
    again = (
        f"built again {attempts.STORAGE_WAIT}, in {delay:g} s at most"
        if storage
        else (f"built again in {delay:g} s")
    )
    version.error = f"{error}; not the bot's fault: {again}"
    db.session.commit()
    send(version_id, min(delay, attempts.STORAGE_PROBE_EVERY) if storage else delay)
    return delay


def send(version_id: int, countdown: float | None = None) -> bool:
    """Ask a worker to prepare the version (after ``countdown`` seconds)."""
    return send_task(PREPARE_TASK, version_id, countdown=countdown)


def reap(now: datetime | None = None) -> dict[str, list[int]]:
    """Queue again versions whose worker was lost, resend lost messages. Commits."""
    now = now or utcnow()
    report: dict[str, list[int]] = {"requeued": [], "resent": [], "rejected": []}
    expired = db.session.scalars(
        select(BotVersion)
        .where(BotVersion.status == S.BUILDING, _lapsed(now))
        .with_for_update(skip_locked=True)
    ).all()
    for version in expired:
        _worker_lost(version, now, report)
    stale_before = now - timedelta(seconds=float(current_app.config["QUEUED_STALE_AFTER"]))
    due = db.session.scalars(
        select(BotVersion)
        .where(
            BotVersion.status == S.UPLOADED,
            func.coalesce(BotVersion.prepare_due, BotVersion.created_at) < stale_before,
        )
        .with_for_update(skip_locked=True)
    ).all()
    waiting = version_ids_in_broker() if due else set()
    for version in due:
        if version.id not in waiting:
            version.prepare_due = now
            report["resent"].append(version.id)
    db.session.commit()
    for version_id in report["requeued"] + report["resent"]:
        send(version_id)
    return report


def _worker_lost(version: BotVersion, now: datetime, report: dict[str, list[int]]) -> None:
    version.prepare_lost += 1
    version.prepare_lease_until = None
    limit = _lost_limit()
    if version.prepare_lost >= limit:
        reject(
            version,
            f"the worker building and self-testing this version stopped answering "
            f"{version.prepare_lost} times: the version is rejected, as its build or self-test "
            "appears to bring its worker down (upload it again to retry)",
        )
        report["rejected"].append(version.id)
        return
    move(version, S.UPLOADED)
    version.prepare_due = now
    version.error = (
        f"the worker building it stopped answering; queued again "
        f"(lost worker {version.prepare_lost} of at most {limit})"
    )
    report["requeued"].append(version.id)


def _locked_versions(bot_id: int) -> tuple[Bot, list[BotVersion]]:
    """The bot, its row locked ``FOR NO KEY UPDATE`` (so that changes of which version plays take
    turns), and its versions by number, all read afresh."""
    db.session.flush()
    bot = db.session.get(Bot, bot_id, with_for_update={"key_share": True}, populate_existing=True)
    assert bot is not None
    versions = db.session.scalars(
        select(BotVersion)
        .where(BotVersion.bot_id == bot_id)
        .order_by(BotVersion.number)
        .execution_options(populate_existing=True)
    ).all()
    return bot, list(versions)
