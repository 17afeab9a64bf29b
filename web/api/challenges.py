"""API: challenges, unrated matches an author asks for between chosen bot versions."""

from __future__ import annotations

from typing import Any

from flask import abort
from flask_smorest import Blueprint
from werkzeug.exceptions import TooManyRequests

from web import auth
from web.api import envelope, queries
from web.api import schemas as s
from web.api.present import challenge_json
from web.extensions import db
from web.models import BotVersion, Challenge
from web.services import challenges as service
from web.services import sealing

blp = Blueprint("api_challenges", __name__, description="Challenges: unrated matches on demand")


def present(rows: list[Challenge]) -> list[dict[str, Any]]:
    """Challenges as the API serves them (their versions and hidden seeds read at once)."""
    ids = {v for c in rows for v in c.entries}
    versions = {v.id: v for v in db.session.query(BotVersion).filter(BotVersion.id.in_(ids))}
    hidden = sealing.hidden_ids([m for c in rows for m in c.matches])
    return [challenge_json(c, versions, hidden) for c in rows]


@blp.route("/challenges")
@blp.arguments(s.ChallengeArgs, location="query")
@blp.response(200, s.envelope(s.Challenge, many=True))
def challenges(args: dict[str, Any]) -> dict[str, Any]:
    """Challenges, newest first (optionally one user's, or those seating one bot)."""
    page = queries.challenges(args.get("user"), args.get("bot"), args["page"], args["per_page"])
    return envelope(present(list(page.items)), page.meta())


@blp.route("/challenges/<id:challenge_id>")
@blp.response(200, s.envelope(s.Challenge))
def challenge(challenge_id: int) -> dict[str, Any]:
    """One challenge: its seats, their results so far, and its matches with their replays."""
    found = db.session.get(Challenge, challenge_id)
    if found is None:
        abort(404, description=f"no challenge {challenge_id}")
    return envelope(present([found])[0])


@blp.route("/challenges", methods=["POST"])
@blp.arguments(s.ChallengeBody)
@blp.response(201, s.envelope(s.Challenge))
@blp.alt_response(
    429,
    schema=s.ErrorEnvelope,
    description="Too Many Requests: the author has used up their challenges "
    "(`CHALLENGE_RATE_LIMIT`); the message says when the next is allowed",
    headers={"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}},
)
@blp.doc(security=[{"token": []}])
def create(body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Challenge chosen bots to an unrated match or series (needs a token).

    One entry per seat: a bot (playing its current version) or, for your own bots, any
    version that passed validation. At least one seat is yours. The matches are played
    ahead of ordinary ladder matches and never change a rating.
    """
    user = auth.writer()
    ladder = queries.ladder_by_slug(body["ladder"])
    if ladder is None:
        known = ", ".join(sorted(queries.ladder_slugs().values())) or "none yet"
        abort(404, description=f"no ladder {body['ladder']!r}; the ladders: {known}")
    entries = [service.Entry(e["bot"], e.get("version")) for e in body["entries"]]
    try:
        made = service.create(user, ladder, entries, body["deals"])
    except service.ChallengeLimit as exc:
        raise TooManyRequests(str(exc), retry_after=exc.retry_after) from None
    except service.ChallengeError as exc:
        abort(422, description=str(exc))
    return envelope(present([made])[0]), 201
