"""Play the bots: the form that opens a table, and the table itself, where a person plays
their seat in the browser (``web.services.tables``)."""

from __future__ import annotations

import orjson
from flask import (
    Blueprint,
    abort,
    current_app,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_login import login_required

from arena.games import names
from web import auth
from web.api import queries
from web.api.tables import own_table, play, table_json
from web.extensions import limiter
from web.forms import ActionForm
from web.models import Ladder
from web.services import human_ladder
from web.services import tables as service

bp = Blueprint("play", __name__, url_prefix="/play")

MAX_ID = 2**31 - 1


def _id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_ID


def _action_limit() -> str:
    return str(current_app.config["API_RATE_LIMIT"])


def _number(text: str, most: int = MAX_ID) -> int | None:
    """``text`` as a number in ASCII digits up to ``most``, else None."""
    if not (text.isascii() and text.isdigit() and len(text) < 11):
        return None
    value = int(text)
    return value if value <= most else None


@bp.route("", methods=["GET", "POST"])
@login_required
def new() -> ResponseReturnValue:
    """Choose a game (a ladder's game, variant and size), a seat and the bots at the others."""
    user = auth.session_user()
    assert user is not None
    open_ladders = [x for x in queries.ladders() if x.active]
    slug = request.values.get("ladder") or (open_ladders[0].slug if open_ladders else "")
    ladder = next((x for x in open_ladders if x.slug == slug), None)
    error = None
    if ladder is not None and request.method == "POST" and ActionForm().validate():
        try:
            made = service.create(user, ladder, *_seating(ladder))
        except (service.TableError, service.TableLimit) as exc:
            error = str(exc)
        else:
            return redirect(url_for("play.table", match_id=made.id))
    page = render_template(
        "play_new.html",
        ladders=open_ladders,
        ladder=ladder,
        bots=service.opponents(ladder) if ladder is not None else [],
        form=ActionForm(),
        error=error,
        move_s=current_app.config["HUMAN_MOVE_TIMEOUT"],
        bank_s=current_app.config["HUMAN_TIME_BANK"],
        games=sorted({x.game for x in open_ladders}),
    )
    return page, 429 if error and "open" in error else 422 if error else 200


def _seating(ladder: Ladder) -> tuple[int, list[int]]:
    """The seat and the opponents' bot ids the form names; a ``TableError`` if it names none."""
    seat = _number(request.form.get("seat", ""), ladder.players - 1)
    chosen = [_number(raw) for raw in request.form.getlist("opponent")]
    if seat is None or any(bot is None for bot in chosen):
        raise service.TableError("choose your seat and a bot for every other seat")
    return seat, [bot for bot in chosen if bot is not None]


@bp.route("/ladders/<game>")
def ladder(game: str) -> ResponseReturnValue:
    """A game's human ladder: people and the bot versions they played, best first."""
    if game not in names():
        abort(404)
    return render_template("play_ladder.html", game=game, rows=human_ladder.ladder(game))


@bp.route("/<id:match_id>")
@login_required
def table(match_id: int) -> ResponseReturnValue:
    """The table: the game viewer from the person's seat, and their legal actions."""
    found, seat = own_table(auth.session_user(), match_id)
    return render_template(
        "play_table.html",
        match=found,
        seat=seat,
        seat_names=orjson.dumps([s.bot.name for s in found.seats]).decode(),
        move_s=current_app.config["HUMAN_MOVE_TIMEOUT"],
        bank_s=current_app.config["HUMAN_TIME_BANK"],
        form=ActionForm(),
    )


@bp.route("/<id:match_id>/action", methods=["POST"])
@login_required
@limiter.limit(_action_limit)
def action(match_id: int) -> ResponseReturnValue:
    """The page's answer to its turn (JSON ``{request_id, index}``; CSRF token in a header)."""
    found, seat = own_table(auth.session_user(), match_id)
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        abort(400, description="send JSON: {request_id, index}")
    request_id, index = body.get("request_id"), body.get("index")
    if not isinstance(request_id, int) or not isinstance(index, int):
        abort(400, description="request_id and index are numbers")
    if not (_id(request_id) and _id(index)):
        abort(400, description="request_id and index are numbers from 0")
    play(found.id, request_id, index)
    return jsonify({"data": table_json(found, seat)}), 202
