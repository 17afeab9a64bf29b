"""API for administrators: the collusion report (404 for everyone else, as the admin pages)."""

from __future__ import annotations

from typing import Any

from flask import abort
from flask_smorest import Blueprint

from web import auth
from web.api import envelope
from web.api import schemas as s
from web.services import collusion

blp = Blueprint("api_admin", __name__, description="Administrators only")


@blp.route("/admin/collusion")
@blp.arguments(s.CollusionArgs, location="query")
@blp.response(200, s.envelope(s.CollusionReport))
@blp.doc(security=[{"token": []}])
def collusion_report(args: dict[str, Any]) -> dict[str, Any]:
    """For every pair of authors who shared a table: how each does together against apart,
    and whether one's answer times predict the other's next choices, flagged at ``alpha``
    (family-wise, Holm). Covers the newest ``matches`` finished matches (of ``game``).
    Administrators only (by token or session): 404 for anyone else."""
    if not auth.is_admin(auth.reader()):
        abort(404)
    scope = collusion.Scope(game=args.get("game"), matches=args["matches"], alpha=args["alpha"])
    report, unreadable = collusion.report(scope)
    return envelope({**report.to_json(), "unreadable_matches": unreadable})
