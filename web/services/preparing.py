"""The claim on a version's build and self-test: nothing is lost to a fault of the platform.

Preparing a version (``web.services.bots.prepare``) is claimed like a match: one
compare-and-set UPDATE takes an ``uploaded`` version (or a ``building`` one whose lease ran out)
to ``building`` with a lease, renewed while the build runs. Then:

- the bot's own faults (a malformed manifest, its build command failing, its self-test
  failing) reject the version with its output, as before;
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

import ast
import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import and_, case, func, or_, select, update

from web.extensions import db
from web.models import BotVersion, VersionStatus, utcnow
from web.services import attempts
from web.services.queue import send_task

log = logging.getLogger(__name__)

PREPARE_TASK = "web.tasks.prepare_version"


def lease_seconds() -> float:
    return float(current_app.config["MATCH_LEASE"])


def _lost_limit() -> int:
    return int(current_app.config["MAX_LOST_WORKERS"])


def _lapsed(now: datetime) -> Any:
    return or_(BotVersion.prepare_lease_until.is_(None), BotVersion.prepare_lease_until < now)


def claim(version_id: int) -> int | None:
    """Take the version's preparation; the attempt number, or None if it is not ours. Commits."""
    now = utcnow()
    building = BotVersion.status == VersionStatus.BUILDING
    claimable = or_(BotVersion.status == VersionStatus.UPLOADED, and_(building, _lapsed(now)))
    stmt = (
        update(BotVersion)
        .where(BotVersion.id == version_id, claimable, BotVersion.prepare_lost < _lost_limit())
        .values(
            status=VersionStatus.BUILDING,
            prepare_attempts=BotVersion.prepare_attempts + 1,
            prepare_lost=BotVersion.prepare_lost + case((building, 1), else_=0),
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
    if (
        version is None
        or version.status != VersionStatus.BUILDING
        or version.prepare_attempts != attempt
    ):
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
            BotVersion.status == VersionStatus.BUILDING,
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


def give_back(version_id: int, attempt: int, error: str) -> float | None:
    """A platform fault: queued again after a backoff, the error recorded. Commits.

    Returns the backoff, or None if the claim was no longer held.
    """
    version = held(version_id, attempt)
    if version is None:
        return None
    delay = attempts.backoff(max(version.prepare_attempts - version.prepare_lost, 1))
    version.status = VersionStatus.UPLOADED
    version.prepare_due = utcnow() + timedelta(seconds=delay)
    version.error = f"{error}; not the bot's fault: built again in {delay:g} s"
    db.session.commit()
    send(version_id, delay)
    return delay


def send(version_id: int, countdown: float | None = None) -> bool:
    return send_task(PREPARE_TASK, version_id, countdown=countdown)


# --- the reaper -----------------------------------------------------------------------------


def reap(now: datetime | None = None) -> dict[str, list[int]]:
    """Queue again versions whose worker was lost, resend lost messages. Commits."""
    now = now or utcnow()
    report: dict[str, list[int]] = {"requeued": [], "resent": [], "rejected": []}
    expired = db.session.scalars(
        select(BotVersion)
        .where(BotVersion.status == VersionStatus.BUILDING, _lapsed(now))
        .with_for_update(skip_locked=True)
    ).all()
    for version in expired:
        _worker_lost(version, now, report)
    stale_before = now - timedelta(seconds=float(current_app.config["QUEUED_STALE_AFTER"]))
    due = db.session.scalars(
        select(BotVersion)
        .where(
            BotVersion.status == VersionStatus.UPLOADED,
            func.coalesce(BotVersion.prepare_due, BotVersion.created_at) < stale_before,
        )
        .with_for_update(skip_locked=True)
    ).all()
    waiting = waiting_in_broker() if due else set()
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
        version.status = VersionStatus.REJECTED
        version.error = (
            f"the worker building and self-testing this version stopped answering "
            f"{version.prepare_lost} times: the version is rejected, as its build or self-test "
            "appears to bring its worker down (upload it again to retry)"
        )
        report["rejected"].append(version.id)
        return
    version.status = VersionStatus.UPLOADED
    version.prepare_due = now
    version.error = (
        f"the worker building it stopped answering; queued again "
        f"(lost worker {version.prepare_lost} of at most {limit})"
    )
    report["requeued"].append(version.id)


def waiting_in_broker() -> set[int]:
    """Ids of versions whose prepare message waits in the broker's queue (Redis only).

    Anything else (another broker, Redis unreachable) gives an empty set: the reaper then
    resends, and the claim makes a duplicate harmless.
    """
    celery = current_app.extensions["celery"]
    try:
        with celery.connection_for_read() as conn:
            channel = conn.default_channel
            prefix = getattr(channel, "global_keyprefix", "") or ""
            queue = _queue_of(celery, PREPARE_TASK)
            keys = {prefix + channel._q_for_pri(queue, pri) for pri in channel.priority_steps}
            raw = [item for key in keys for item in channel.client.lrange(key, 0, -1)]
    except Exception as exc:  # not Redis, or Redis away: nothing is known to wait
        log.warning("could not read the broker's queue: %s", exc)
        return set()
    return {vid for vid in (_version_of(item) for item in raw) if vid is not None}


def _queue_of(celery: Any, task: str) -> str:
    route = celery.amqp.router.route({}, task, args=(), kwargs={})
    queue = route.get("queue")
    return str(getattr(queue, "name", queue) or celery.conf.task_default_queue)


def _version_of(item: bytes | str) -> int | None:
    """The version id a queued prepare message is for (None for any other message)."""
    try:
        headers = json.loads(item).get("headers") or {}
        if headers.get("task") != PREPARE_TASK:
            return None
        args = ast.literal_eval(headers.get("argsrepr") or "()")
        return int(args[0])
    except (ValueError, TypeError, IndexError, SyntaxError, AttributeError):
        return None
