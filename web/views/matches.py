"""Match lists with filters, and the match page that hosts the replay viewer."""

from __future__ import annotations

import orjson
from flask import Blueprint, abort, render_template, request
from flask.typing import ResponseReturnValue

from web import auth
from web.api import queries
from web.forms import ActionForm
from web.models import MatchStatus
from web.services import sealing
from web.views.ladders import page_arg

bp = Blueprint("matches", __name__, url_prefix="/matches")

STATUSES = [s.value for s in MatchStatus]


def _int_arg(name: str) -> int | None:
    raw = request.args.get(name, "")
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 10 else None


@bp.route("")
def index() -> ResponseReturnValue:
    ladders = queries.ladders()
    slug = request.args.get("ladder") or None
    ladder = next((x for x in ladders if x.slug == slug), None)
    status = request.args.get("status") or None
    flt = queries.MatchFilter(
        game=request.args.get("game") or None,
        bot_id=_int_arg("bot"),
        status=status if status in STATUSES else None,
        ladder_id=ladder.id if ladder else None,
        tournament_id=_int_arg("tournament"),
    )
    page = queries.matches(flt, page_arg(), 25)
    return render_template(
        "matches.html",
        page=page,
        flt=flt,
        ladders=ladders,
        slugs={x.id: x.slug for x in ladders},
        statuses=STATUSES,
        games=sorted({x.game for x in ladders}),
        ladder_slug=slug if ladder else "",
    )


@bp.route("/<id:match_id>")
def match(match_id: int) -> ResponseReturnValue:
    found = queries.match(match_id)
    if found is None:
        abort(404)
    user = auth.session_user()
    mine = sorted(s.seat for s in found.seats if user is not None and s.bot.owner_id == user.id)
    names = orjson.dumps([s.bot.name for s in found.seats]).decode()
    sealed = sealing.note(found)
    return render_template(
        "match.html",
        match=found,
        sealed=sealed,
        hidden=sealed is not None or sealing.hidden(found),
        show_replay=bool(found.replay_path),
        seat_names=names,
        viewer_seat=mine[0] if mine else "",
        ladder=next((x for x in queries.ladders() if x.id == found.ladder_id), None),
        admin=auth.is_admin(user),
        action=ActionForm(),
    )
