"""User pages: someone's bots and their latest matches."""

from __future__ import annotations

from flask import Blueprint, abort, render_template
from flask.typing import ResponseReturnValue

from web import auth
from web.api import queries

bp = Blueprint("users", __name__, url_prefix="/users")


@bp.route("/<username>")
def user(username: str) -> ResponseReturnValue:
    found = queries.user_by_name(username)
    if found is None:
        abort(404)
    bot_ids = [b.id for b in found.bots]
    return render_template(
        "user.html",
        person=found,
        me=auth.session_user() is not None and auth.session_user() == found,
        newest=queries.versions_of(bot_ids) if bot_ids else {},
        recent=queries.recent_matches(queries.MatchFilter(user_id=found.id), 15),
        slugs=queries.ladder_slugs(),
    )
