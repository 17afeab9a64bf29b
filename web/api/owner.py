"""API: an owner's tools: seats' whole logs, a bot's replays in bulk, its events, webhooks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Response, abort, stream_with_context
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate

from web import auth
from web.api import envelope, queries, replays
from web.api import schemas as s
from web.extensions import db
from web.models import Bot, Match, User, Webhook, WebhookDelivery
from web.services import events, seatlogs, webhooks

blp = Blueprint("api_owner", __name__, description="Owners' logs, bulk replays and webhooks")

_NOT_YOURS = {
    "description": "Not Found: no such thing, or it is not yours (the same answer, so that a "
    "guessed id confirms nothing)",
    "schema": s.ErrorEnvelope,
}


class BulkArgs(Schema):
    last = fields.Integer(validate=validate.Range(1, seatlogs.BULK_REPLAYS_MAX))
    since = fields.Date(metadata={"description": "finished on or after this day (UTC)"})
    until = fields.Date(metadata={"description": "finished before this day (UTC)"})


class BotEvent(Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True, metadata={"enum": list(events.KINDS)})
    bot_id = fields.Integer(required=True)
    version = fields.Integer(allow_none=True)
    message = fields.String(required=True)
    created_at = fields.String(required=True)


class WebhookBody(Schema):
    url = fields.String(required=True, validate=validate.Length(1, webhooks.MAX_URL))


class WebhookInfo(Schema):
    id = fields.Integer(required=True)
    url = fields.String(required=True)
    secret = fields.String(metadata={"description": "only in the answer that created it"})
    created_at = fields.String(required=True)


class Delivery(Schema):
    id = fields.Integer(required=True)
    webhook_id = fields.Integer(required=True)
    event = fields.Nested(BotEvent, required=True)
    status = fields.String(required=True, metadata={"enum": ["pending", "delivered", "failed"]})
    tries = fields.Integer(required=True)
    last_code = fields.Integer(allow_none=True)
    last_error = fields.String(allow_none=True)


def _reader() -> User:
    user = auth.reader()
    if user is None:
        abort(401, description="log in or send an API token (Authorization: Bearer ...)")
    return user


def _own_bot(bot_id: int) -> Bot:
    """The bot, if the reader owns it (or is an admin); 404 otherwise."""
    found = queries.bot(bot_id)
    if found is None or not auth.owns_bot(_reader(), found.owner_id):
        abort(404, description=f"no bot {bot_id} of yours")
    return found


@blp.route("/matches/<id:match_id>/seats/<int:seat>/log")
@blp.response(200, description="the seat's whole stderr of the match, UTF-8 text")
@blp.alt_response(404, **_NOT_YOURS)
def seat_log(match_id: int, seat: int) -> Response:
    """A seat's whole stderr of a finished match: its bot's owner only.

    At most 1 MiB per seat is kept; a longer log ends with a line saying how many bytes were
    cut. Admins may read it too once the match's deal group is no longer sealed.
    """
    user = auth.reader()
    found = db.session.get(Match, match_id)
    mine = None if found is None else next((x for x in found.seats if x.seat == seat), None)
    if found is None or mine is None or not seatlogs.readable(found, mine, user):
        abort(404, description=f"no log of seat {seat} of match {match_id} for you")
    try:
        body = seatlogs.read(found, mine)
    except (OSError, ValueError):
        abort(503, description="the log cannot be read from storage now; try again later")
    response = Response(body, mimetype="text/plain")
    response.headers["Content-Disposition"] = (
        f'attachment; filename="match-{match_id}-seat{seat}.log"'
    )
    response.headers["Cache-Control"] = "private, no-store"
    return response


def bulk_response(found: Bot, user: User, args: dict[str, Any]) -> Response:
    """The streamed zip of ``found``'s replays that ``args`` asks for (site and API)."""

    def day(value: Any) -> datetime | None:
        return None if value is None else datetime(value.year, value.month, value.day)

    chosen = seatlogs.bulk_matches(
        found, last=args.get("last"), since=day(args.get("since")), until=day(args.get("until"))
    )

    def public(match: Match) -> bytes:
        return replays.served_bytes(match, auth.owned_seats(user, match)).body

    stream = stream_with_context(seatlogs.replay_archive(chosen, public))
    response = Response(stream, mimetype="application/zip")
    response.headers["Content-Disposition"] = f'attachment; filename="bot-{found.id}-replays.zip"'
    response.headers["Cache-Control"] = "private, no-store"
    return response


@blp.route("/bots/<id:bot_id>/replays")
@blp.arguments(BulkArgs, location="query")
@blp.response(200, description="a zip of replays, one `match-<id>.json` each, and README.txt")
@blp.alt_response(404, **_NOT_YOURS)
def bulk_replays(args: dict[str, Any], bot_id: int) -> Response:
    """The bot's replays in one zip: the last N, or those finished in a date range (owner).

    At most 200 matches and 64 MiB of replays; matches whose deal group is still sealed are
    left out. Each replay is as its owner sees it (their seats' debug and stderr text kept).
    """
    found = _own_bot(bot_id)
    return bulk_response(found, _reader(), args)


@blp.route("/bots/<id:bot_id>/events")
@blp.response(200, s.envelope(BotEvent, many=True))
@blp.alt_response(404, **_NOT_YOURS)
def bot_events(bot_id: int) -> dict[str, Any]:
    """The bot's latest events (a version active or failed, the bot suspended): owner only."""
    found = _own_bot(bot_id)
    return envelope([e.to_json() for e in events.recent(found)])


def _hook_json(hook: Webhook, secret: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": hook.id,
        "url": hook.url,
        "created_at": hook.created_at.isoformat() + "Z",
    }
    if secret:
        out["secret"] = hook.secret
    return out


@blp.route("/webhooks")
@blp.response(200, s.envelope(WebhookInfo, many=True))
@blp.doc(security=[{"token": []}])
def list_webhooks() -> dict[str, Any]:
    """Your webhooks (their secrets are shown only when created)."""
    return envelope([_hook_json(h) for h in webhooks.hooks_of(auth.writer())])


@blp.route("/webhooks", methods=["POST"])
@blp.arguments(WebhookBody)
@blp.response(201, s.envelope(WebhookInfo))
@blp.doc(security=[{"token": []}])
def add_webhook(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Subscribe a URL to every event of your bots; the answer holds its signing secret."""
    user = auth.writer()
    try:
        hook = webhooks.subscribe(user, body["url"])
    except webhooks.WebhookRefused as exc:
        abort(422, description=str(exc))
    db.session.commit()
    return envelope(_hook_json(hook, secret=True)), 201


@blp.route("/webhooks/<id:hook_id>", methods=["DELETE"])
@blp.response(204)
@blp.alt_response(404, **_NOT_YOURS)
@blp.doc(security=[{"token": []}])
def delete_webhook(hook_id: int) -> tuple[str, int]:
    """Remove one of your webhooks and its delivery log."""
    user = auth.writer()
    hook = db.session.get(Webhook, hook_id)
    if hook is None or hook.user_id != user.id:
        abort(404, description=f"no webhook {hook_id} of yours")
    webhooks.remove(hook)
    db.session.commit()
    return "", 204


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "webhook_id": delivery.webhook_id,
        "event": delivery.event.to_json(),
        "status": delivery.status,
        "tries": delivery.tries,
        "last_code": delivery.last_code,
        "last_error": delivery.last_error,
    }


@blp.route("/webhooks/deliveries")
@blp.response(200, s.envelope(Delivery, many=True))
@blp.doc(security=[{"token": []}])
def deliveries() -> dict[str, Any]:
    """The latest deliveries to your webhooks: status, tries, the last answer or error."""
    return envelope([delivery_json(d) for d in webhooks.deliveries_of(auth.writer())])
