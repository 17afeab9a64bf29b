"""Sending work to the workers, only once the rows it refers to are committed."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import Session

from web.extensions import db

log = logging.getLogger(__name__)

_PENDING = "arena_after_commit"
_installed = False


def install_commit_hooks() -> None:
    """Run ``after_commit`` callbacks when their session commits (installed once per process)."""
    global _installed
    if _installed:
        return
    event.listen(Session, "after_commit", _run_pending)
    event.listen(Session, "after_soft_rollback", _drop_pending)
    _installed = True


def _run_pending(session: Session) -> None:
    callbacks = session.info.pop(_PENDING, [])
    for callback in callbacks:
        callback()


def _drop_pending(session: Session, _previous: Any) -> None:
    session.info.pop(_PENDING, None)


def after_commit(callback: Callable[[], None]) -> None:
    """Call ``callback`` after the current ``db.session`` transaction commits; never on rollback."""
    db.session().info.setdefault(_PENDING, []).append(callback)


def send_task(
    name: str, *args: Any, queue: str | None = None, countdown: float | None = None
) -> bool:
    """Send a task (after ``countdown`` seconds); False (logged) if the broker is unreachable.

    The reaper resends what could not be sent.
    """
    celery = current_app.extensions["celery"]
    try:
        celery.send_task(name, args=list(args), queue=queue, countdown=countdown or None)
    except Exception as exc:  # the broker is down: the row stays queued in the database
        log.warning("could not send %s%r: %s", name, args, exc)
        return False
    return True


def send_match(match_id: int, countdown: float | None = None) -> bool:
    """Ask a worker to play match ``match_id`` (the row must already be committed)."""
    return send_task("web.tasks.run_match", match_id, queue="matches", countdown=countdown)


def send_match_after_commit(match_id: int) -> None:
    """Ask a worker to play ``match_id`` once the current transaction commits."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def _send() -> None:
        with app.app_context():
            send_match(match_id)

    after_commit(_send)
