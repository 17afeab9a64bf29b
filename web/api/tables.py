"""API: tables, where a person plays one seat against bots (``web.services.tables``)."""

from __future__ import annotations

import time
from typing import Any

from flask import abort, current_app, url_for
from flask_smorest import Blueprint
from werkzeug.exceptions import TooManyRequests

from web import auth
from web.api import envelope
from web.api import schemas as s
from web.api import table_schemas as ts
from web.extensions import db
from web.models import Match, User
from web.services import tables as service

blp = Blueprint("api_tables", __name__, description="Tables: a person plays the bots")


def table_json(match: Match, seat: int) -> dict[str, Any]:
    """A table as its person sees it: never another seat's view."""
    cfg = current_app.config
    running = match.status == "running"
    turn = service.turn(match.id) if running else None
    left = max(0, turn["deadline_ms"] - round(time.time() * 1000)) if turn else None
    return {
        "match": match.id,
        "status": str(match.status),
        "game": dict(match.game_config),
        "seat": seat,
        "seats": [x.bot.name for x in match.seats],
        "move_s": float(cfg["HUMAN_MOVE_TIMEOUT"]),
        "bank_s": float(cfg["HUMAN_TIME_BANK"]),
        "turn": turn,
        "turn_left_ms": left,
        "watch": match.replay_path is not None and match.status in ("running", "finished"),
        "places": [x.place for x in match.seats] if match.status == "finished" else None,
        "url": url_for("play.table", match_id=match.id),
    }


def own_table(user: User | None, match_id: int) -> tuple[Match, int]:
    """The table ``match_id`` and the seat of ``user`` at it; 404 for anyone else's."""
    found = db.session.get(Match, match_id)
    seat = service.human_seat(found) if found is not None else None
    if found is None or seat is None or user is None or seat.bot.owner_id != user.id:
        abort(404, description=f"you have no table {match_id}")
    return found, seat.seat


@blp.route("/tables/opponents")
@blp.arguments(ts.OpponentArgs, location="query")
@blp.response(200, s.envelope(ts.Opponent, many=True))
def opponents(args: dict[str, Any]) -> dict[str, Any]:
    """The bots a person may seat at a table of a game (the house's sample bots and those
    whose owners allow it)."""
    bots = service.opponents(args["game"])
    return envelope([
        {"id": b.id, "name": b.name, "owner": b.owner.username, "house": b.owner.is_house}
        for b in bots
    ])  # fmt: skip


@blp.route("/tables", methods=["POST"])
@blp.arguments(ts.TableBody)
@blp.response(201, s.envelope(ts.Table))
@blp.alt_response(429, schema=s.ErrorEnvelope, description="too many tables open")
@blp.doc(security=[{"token": []}])
def create(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Open a table (needs a token): a game, variant and size, you at ``seat`` and the named
    bots at the others. Unrated for the bots' ladders; rated on the game's human ladder."""
    user = auth.writer()
    try:
        config = service.table_config(
            body["game"], body["variant"], body["players"], body["deals"], body["params"]
        )
        match = service.create(user, config, body["seat"], body["opponents"])
    except service.TableLimit as exc:
        raise TooManyRequests(str(exc), retry_after=30) from None
    except service.TableError as exc:
        abort(422, description=str(exc))
    return envelope(table_json(match, body["seat"])), 201


@blp.route("/tables/<id:match_id>/turn")
@blp.response(200, s.envelope(ts.Table))
def turn(match_id: int) -> dict[str, Any]:
    """Your table now: its status and, when it is your turn, what you are asked (your seat's
    observation, the legal actions with labels, the time left). Only the table's person."""
    match, seat = own_table(auth.reader(), match_id)
    return envelope(table_json(match, seat))


@blp.route("/tables/<id:match_id>/action", methods=["POST"])
@blp.arguments(ts.ActionBody)
@blp.response(202, s.envelope(ts.Table))
@blp.alt_response(409, schema=s.ErrorEnvelope, description="that turn is not being asked")
@blp.doc(security=[{"token": []}])
def action(body: dict[str, Any], match_id: int) -> tuple[dict[str, Any], int]:
    """Answer your turn (needs a token): the index of one of its legal actions."""
    match, seat = own_table(auth.writer(), match_id)
    play(match.id, body["request_id"], body["index"])
    return envelope(table_json(match, seat)), 202


@blp.route("/tables/<id:match_id>/leave", methods=["POST"])
@blp.response(202, s.envelope(ts.Table))
@blp.alt_response(409, schema=s.ErrorEnvelope, description="the table is not running")
@blp.doc(security=[{"token": []}])
def leave(match_id: int) -> tuple[dict[str, Any], int]:
    """Leave your running table (needs a token): your seat answers nothing more, as a bot that
    stops answering; it strikes out and forfeits at once and the bots play the match out."""
    match, seat = own_table(auth.writer(), match_id)
    if match.status not in ("queued", "running"):
        abort(409, description=f"table {match_id} is {match.status}: there is nothing to leave")
    db.session.rollback()  # hold no transaction while Redis is asked
    if not service.leave(match.id):
        abort(503, description="this server cannot reach its tables now; try again")
    return envelope(table_json(match, seat)), 202


def play(match_id: int, request_id: int, index: int) -> None:
    """Hand an answer on; 409 for a turn not asked now, 422 for an index out of range."""
    db.session.rollback()  # hold no transaction while Redis is asked
    try:
        taken = service.answer(match_id, request_id, index)
    except service.TableError as exc:
        abort(422, description=str(exc))
    if not taken:
        abort(409, description=f"turn {request_id} is not being asked (answered or timed out)")
