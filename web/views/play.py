"""Play the bots: the form that opens a table, and the table itself, where a person plays
their seat in the browser (``web.services.tables``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_login import login_required

from arena.games import game_class, names
from web import auth
from web.api.tables import own_table, play, table_json
from web.extensions import limiter
from web.forms import ActionForm
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
    """Choose a game, variant, table size and length, then a seat and the bots at the others."""
    user = auth.session_user()
    assert user is not None
    choice = _choice()
    error = None
    config: dict[str, Any] | None = None
    try:
        config = choice.config()
    except service.TableError as exc:
        error = str(exc)
    if config is not None and request.method == "POST" and ActionForm().validate():
        try:
            made = service.create(user, config, *_seating(int(config["players"])))
        except (service.TableError, service.TableLimit) as exc:
            error = str(exc)
        else:
            return redirect(url_for("play.table", match_id=made.id))
    page = render_template(
        "play_new.html",
        games=names(),
        spec=game_class(choice.game).spec if choice.game in names() else None,
        choice=choice,
        config=config,
        bots=service.opponents(choice.game) if config is not None else [],
        form=ActionForm(),
        error=error,
        move_s=current_app.config["HUMAN_MOVE_TIMEOUT"],
        bank_s=current_app.config["HUMAN_TIME_BANK"],
        bound_s=service.table_bound(),
    )
    return page, 429 if error and "open" in error else 422 if error else 200


PARAM = "param."
"""Query and form fields ``param.NAME`` set any parameter of the game (JSON, else text)."""


@dataclass(frozen=True)
class Choice:
    """The table the request asks for (the first game's defaults where it names nothing)."""

    game: str
    variant: str | None
    players: int | None
    deals: int | None
    params: dict[str, Any]

    def config(self) -> dict[str, Any]:
        return service.table_config(self.game, self.variant, self.players, self.deals, self.params)


def _choice() -> Choice:
    values = request.values
    game = values.get("game") or names()[0]
    deals = _number(values.get("deals", ""), 100)
    if "deals" not in values and game in names():
        deals = service.fewest_deals(game)
    params = {k[len(PARAM) :]: _json(v) for k, v in values.items() if k.startswith(PARAM)}
    return Choice(game, values.get("variant") or None, _number(values.get("players", ""), 16),
                  deals, params)  # fmt: skip


def _json(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return text


def _seating(players: int) -> tuple[int, list[int]]:
    """The seat and the opponents' bot ids the form names; a ``TableError`` if it names none."""
    seat = _number(request.form.get("seat", ""), players - 1)
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


@bp.route("/<id:match_id>/leave", methods=["POST"])
@login_required
def leave(match_id: int) -> ResponseReturnValue:
    """Leave the table (a form with its CSRF token): the seat answers nothing more and forfeits
    (``web.services.tables.leave``); the bots play the match out."""
    found, _seat = own_table(auth.session_user(), match_id)
    if found.status not in ("queued", "running"):
        flash(f"Table {match_id} is {found.status}: there is nothing to leave.", "error")
    elif service.leave(found.id):
        flash("You left the table: your seat forfeits and the bots play the match out.", "ok")
    else:
        flash("The site cannot reach its tables now; try again.", "error")
    return redirect(url_for("play.table", match_id=match_id))
