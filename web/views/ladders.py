"""A ladder's table: sortable, paginated, with each bot's trend."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request
from flask.typing import ResponseReturnValue

from web.api import queries
from web.views.cache import anonymous_cache
from web.views.home import PLAYING_NOW

bp = Blueprint("ladders", __name__, url_prefix="/ladders")

PER_PAGE = 50


def page_arg() -> int:
    raw = request.args.get("page", "1")
    return min(max(int(raw), 1), 100_000) if raw.isascii() and raw.isdigit() else 1


@bp.route("/<slug>")
@anonymous_cache
def ladder(slug: str) -> ResponseReturnValue:
    found = queries.ladder_by_slug(slug)
    if found is None:
        abort(404)
    sort = request.args.get("sort", "rank")
    if sort not in queries.SORTS:
        sort = "rank"
    page = queries.standings(found, sort, page_arg(), PER_PAGE)
    running = queries.MatchFilter(status="running", ladder_id=found.id)
    playing = queries.recent_matches(running, PLAYING_NOW)
    return render_template("ladder.html", ladder=found, page=page, sort=sort, playing=playing)
