"""``/healthz``: is the app up and can it reach its database."""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify
from flask.typing import ResponseReturnValue
from sqlalchemy import text

from web.extensions import csrf, db, limiter

bp = Blueprint("health", __name__)


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
