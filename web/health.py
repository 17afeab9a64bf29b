"""Is the database reachable: ``/healthz``, and the 503 every request answers while it is not."""

from __future__ import annotations

from collections.abc import Iterator

from flask import Blueprint, current_app, g, jsonify, request
from flask.typing import ResponseReturnValue
from sqlalchemy import exc, text
from werkzeug.exceptions import ServiceUnavailable

from web.extensions import csrf, db, limiter, login_manager

bp = Blueprint("health", __name__)

RETRY_AFTER_S = 30
"""What a 503 tells clients to wait before they try again (``Retry-After``), in seconds."""

# SQLite's primary result codes that mean "not now" rather than "wrong": busy, locked, I/O
# error, cannot open, protocol (a lock race). Its other OperationalErrors (no such table, a
# syntax error) are bugs and stay 500.
_SQLITE_TRANSIENT = {5, 6, 10, 14, 15}
# PostgreSQL's SQLSTATE classes of an unusable server: connection exception, insufficient
# resources (too many connections), operator intervention (shut down, starting, cancelled).
_POSTGRES_TRANSIENT = ("08", "53", "57")


@bp.get("/healthz")
@limiter.exempt
@csrf.exempt
def healthz() -> ResponseReturnValue:
    """200 with ``{"ok": true}`` when the database answers, 503 otherwise."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception:  # any database failure means "not healthy"
        # The cause names hosts, ports and database users: the log has it, anonymous callers
        # learn only that the database does not answer.
        current_app.logger.exception("health check: the database does not answer")
        return jsonify({"ok": False, "database": "unreachable"}), 503
    return jsonify({"ok": True, "database": "ok"})


def database_unreachable(error: BaseException) -> bool:
    """Is ``error``, or any error it was raised from or while handling, the database being out
    of reach (refused, cut, shut down, busy, or no pooled connection free in time)?"""
    return any(_unreachable(link) for link in _chain(error))


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _unreachable(error: BaseException) -> bool:
    if isinstance(error, (exc.TimeoutError, exc.DisconnectionError)):
        return True  # the pool had no connection to give in time, or lost the one it had
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    if not isinstance(error, exc.OperationalError):
        return False
    sqlite_code = getattr(error.orig, "sqlite_errorcode", None)
    if sqlite_code is not None:
        return int(sqlite_code) & 0xFF in _SQLITE_TRANSIENT
    state = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    return state is None or str(state).startswith(_POSTGRES_TRANSIENT)


def unavailable(error: BaseException) -> ServiceUnavailable:
    """The 503 for a request that met an unreachable database, once its session is cleared.

    The session is rolled back so the next request starts clean (the pool has already dropped
    the connections the driver reported lost, and tests each one before use), and the page is
    drawn for an anonymous visitor: loading the logged-in user needs the database.
    """
    current_app.logger.warning("the database is unreachable on %s: %s", request.path, error)
    try:
        db.session.rollback()
    except exc.SQLAlchemyError:  # the connection is gone; the pool replaces it
        db.session().invalidate()
    g._login_user = login_manager.anonymous_user()
    return ServiceUnavailable(
        description=f"the database does not answer just now; try again in {RETRY_AFTER_S} seconds",
        retry_after=RETRY_AFTER_S,
    )
