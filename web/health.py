"""``/healthz``: is the app up and can it reach its database."""

from __future__ import annotations

from flask import Blueprint, jsonify
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
    except Exception as exc:  # any database failure means "not healthy"
        return jsonify({"ok": False, "database": str(exc).splitlines()[0]}), 503
    return jsonify({"ok": True, "database": "ok"})
