"""What counts as an attempt at a match: its own faults do, the platform's do not.

A match is *faulted* when playing it raised an error of its own: the referee crashed on it, or
it ran past its time budget. Those spend one of its ``max_attempts``; a match that keeps
faulting ends ``failed``. Everything else is the platform's fault and spends nothing:

- a worker that stopped answering (killed, out of memory, its machine lost): the lease ran out
  and the match is queued again, counted in ``lost_workers``. A worker killed by the platform
  and a match that kills its worker every time look the same from outside, so this count has a
  bound of its own, much larger than ``max_attempts`` (``MAX_LOST_WORKERS``);
- the database or the broker unreachable, the storage full or failing, a sandbox that cannot
  start: the claim is given back at once, the error recorded as it is, and the match queued
  again after a backoff that doubles with each such failure, without a bound.

``attempts`` itself counts every claim: it is the claim's token, never given back.
"""

from __future__ import annotations

import errno
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar

from flask import current_app
from sqlalchemy import ColumnElement, and_, case
from sqlalchemy.exc import InterfaceError, OperationalError

from web.engine import InfrastructureError
from web.extensions import db
from web.models import Match, MatchKind, MatchStatus, utcnow
from web.storage import describe

log = logging.getLogger(__name__)

T = TypeVar("T")

STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EFBIG, errno.ENFILE}
)
"""Errors of a disk or file system rather than of the file being written."""

PROC_STAT = Path("/proc/self/stat")
"""Present where processes can be looked up in ``/proc`` (Linux)."""

DATABASE_ERRORS = (OperationalError, InterfaceError)
"""What SQLAlchemy raises when the database cannot be reached or drops the connection."""


class StorageError(Exception):
    """A file of the platform's storage could not be written; the message names the storage."""


@dataclass(frozen=True)
class Fault:
    """Why one play of a match ended without a result, and whose fault that was."""

    platform: bool
    message: str
    storage: bool = False  # the storage failed: the play is tried again once it answers


def classify(exc: BaseException) -> Fault:
    """Tell a fault of the platform (spends no attempt) from one of the match (spends one)."""
    if isinstance(exc, DATABASE_ERRORS):
        return Fault(True, f"database unreachable: {_first_line(exc)}")
    if isinstance(exc, StorageError):
        return Fault(True, str(exc), storage=True)
    if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
        return Fault(True, f"storage failure: {describe_os_error(exc)}", storage=True)
    if isinstance(exc, (InfrastructureError, OSError, ConnectionError, TimeoutError)):
        return Fault(True, f"platform failure: {type(exc).__name__}: {exc}")
    if _is_broker_error(exc):
        return Fault(True, f"broker unreachable: {exc}")
    return Fault(False, f"{type(exc).__name__}: {exc}")


def describe_os_error(exc: OSError) -> str:
    """``no space left on device (ENOSPC)``: the system's wording, in lower case, and the code;
    for an object store, what it answered (``web.storage.describe``)."""
    return describe(exc)


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return (str(orig).strip().splitlines() or [type(orig).__name__])[0]


def _is_broker_error(exc: BaseException) -> bool:
    from kombu.exceptions import OperationalError as BrokerError

    return isinstance(exc, BrokerError)


def backoff(failures: int) -> float:
    """Seconds to wait before the next play after ``failures`` platform failures in all."""
    base = float(current_app.config["RETRY_BACKOFF"])
    ceiling = float(current_app.config["RETRY_BACKOFF_MAX"])
    return float(min(base * 2 ** max(failures - 1, 0), ceiling))


# --- the rules, applied to a match row --------------------------------------------------------


def left() -> ColumnElement[bool]:
    """SQL: the match may still be claimed (neither bound reached)."""
    limit = int(current_app.config["MAX_LOST_WORKERS"])
    bound = case((Match.kind == MatchKind.HUMAN, 1), else_=limit)
    return and_(Match.faults < Match.max_attempts, Match.lost_workers < bound)


def lost_limit(match: Match) -> int:
    """How many lost workers ``match`` outlives: none for a person's table, whose cards the
    person has seen (it is never dealt again), else ``MAX_LOST_WORKERS``."""
    if match.kind == MatchKind.HUMAN:
        return 1
    return int(current_app.config["MAX_LOST_WORKERS"])


def lost_on_takeover() -> ColumnElement[int]:
    """SQL for a claim's new ``lost_workers``: a running match taken over lost its worker."""
    return Match.lost_workers + case((Match.status == MatchStatus.RUNNING, 1), else_=0)


def has_attempts_left(match: Match) -> bool:
    return match.faults < match.max_attempts and match.lost_workers < lost_limit(match)


def charge(
    match: Match,
    error: str,
    *,
    platform: bool,
    storage: bool = False,
    now: datetime | None = None,
) -> float | None:
    """Record a play given back with ``error``; queue the match again or fail it.

    Returns the seconds to wait before the match is sent again, or None if it failed. A match
    given back for a ``storage`` fault is played before that, as soon as the storage answers
    (``waiting_for_storage``).
    """
    now = now or utcnow()
    match.lease_until = None
    if not platform:
        match.faults += 1
        match.error = f"{error} (attempt {match.faults} of {match.max_attempts} spent)"
        if match.faults >= match.max_attempts:
            _fail(match, now)
            return None
        return _queue(match, now, backoff(match.faults))
    failures = match.attempts - match.faults
    delay = backoff(failures)
    if storage:
        match.error = (
            f"{error}; not the match's fault: played again {STORAGE_WAIT}, in {delay:g} s at most"
        )
    else:
        match.error = f"{error}; not the match's fault: played again in {delay:g} s"
    return _queue(match, now, delay)


# --- a storage that answers again -------------------------------------------------------------

STORAGE_WAIT = "as soon as the storage answers"
"""Marks the error of a match or a version given back for a fault of the storage."""

STORAGE_PROBE_EVERY = 5.0
"""Seconds between two looks at the storage while a match waits for it to answer."""


def waiting_for_storage(waiting: bool, due: datetime | None, error: str | None) -> bool:
    """Whether a match or a version (``waiting``: queued, or uploaded; ``due``: when its
    backoff ends; its error) waits out a storage fault's backoff: its message comes every
    ``STORAGE_PROBE_EVERY`` s to look at the storage."""
    return waiting and due is not None and due > utcnow() and STORAGE_WAIT in (error or "")


def worker_host() -> str:
    """This worker's host identity (``WORKER_HOST``, by default the host name): the first
    part of every claim it takes. Processes that share it must see each other's pids."""
    return str(current_app.config.get("WORKER_HOST") or "") or socket.gethostname()


def holder_gone(worker: str | None) -> bool:
    """True if ``worker`` (a claim's holder, ``host:pid``) is a process of this host that no
    longer runs: its match may be taken over at once, before its lease runs out.

    The broker hands the message of a worker process that died (killed, out of memory) to
    another at once; without this the match would wait for the dead claim's lease. Only a
    process of this host can be known to be gone: another host's claim keeps its lease, and
    its match is taken over once that lapses (``web.services.play``).
    """
    if not worker:
        return False
    host, _, pid = worker.rpartition(":")
    if host != worker_host() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    return not _running(int(pid))


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    if not PROC_STAT.exists():  # no /proc: ask the kernel whether the pid exists at all
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # cannot tell: it may run
        return True
    return stat.rpartition(")")[2].split()[:1] not in (["Z"], ["X"])


def worker_lost(match: Match, now: datetime) -> bool:
    """A running match's lease ran out: queued again (True), or failed at the bound (False)."""
    match.lost_workers += 1
    match.lease_until = None
    limit = lost_limit(match)
    if match.kind == MatchKind.HUMAN:
        match.error = (
            f"the worker playing this table ({match.worker}) stopped answering; a table is "
            "never dealt again, since its cards were seen: start a new one"
        )
        _fail(match, now)
        return False
    if match.lost_workers >= limit:
        match.error = (
            f"the worker playing it stopped answering {match.lost_workers} times "
            f"(last {match.worker}): the match is taken to bring its worker down"
        )
        _fail(match, now)
        return False
    match.error = (
        f"worker {match.worker} stopped answering; queued again "
        f"(lost worker {match.lost_workers} of at most {limit}, no attempt spent)"
    )
    _queue(match, now, 0.0)
    return True


def _queue(match: Match, now: datetime, delay: float) -> float:
    """Queued again; ``queued_at`` is when it is due, so a delayed match is not stale before."""
    match.status = MatchStatus.QUEUED
    match.queued_at = now + timedelta(seconds=delay)
    return delay


def _fail(match: Match, now: datetime) -> None:
    match.status = MatchStatus.FAILED
    match.finished_at = now


# --- waiting out a database outage ------------------------------------------------------------


def patiently(action: Callable[[], T], what: str) -> T:
    """Run ``action`` (database work that may be repeated), waiting out a database outage.

    Waits up to ``DB_PATIENCE`` seconds in all, doubling the pause between tries; then the
    error propagates (the task is retried, and the claim's lease runs out).
    """
    deadline = time.monotonic() + float(current_app.config["DB_PATIENCE"])
    pause = 0.5
    while True:
        try:
            return action()
        except DATABASE_ERRORS as exc:
            forget_transaction()
            if time.monotonic() + pause > deadline:
                raise
            log.warning("%s: %s; trying again in %g s", what, _first_line(exc), pause)
            time.sleep(pause)
            pause = min(pause * 2, 15.0)


def forget_transaction() -> None:
    """Roll the session back after a database error, whatever state its connection is in."""
    try:
        db.session.rollback()
    except Exception:  # the connection is gone: the pool replaces it on the next use
        log.debug("rollback after a database error failed", exc_info=True)
