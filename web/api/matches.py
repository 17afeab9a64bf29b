"""API: matches (filtered, paginated), replays, per-step frames, and tournaments."""

from __future__ import annotations

from typing import Any

from flask import Response, abort
from flask_smorest import Blueprint

from web import auth
from web.api import envelope, queries, replays
from web.api import schemas as s
from web.api.present import match_json, tournament_json
from web.extensions import db
from web.models import Match, Tournament
from web.services import sealing
from web.services import tournaments as tournament_service

blp = Blueprint("api_matches", __name__, description="Matches, replays and tournaments")

IMMUTABLE = "max-age=31536000, immutable"


def match_filter(args: dict[str, Any]) -> queries.MatchFilter | None:
    """The filter the query arguments ask for; None if it names a ladder that does not exist."""
    ladder_id = None
    if args.get("ladder"):
        ladder = queries.ladder_by_slug(args["ladder"])
        if ladder is None:
            return None
        ladder_id = ladder.id
    return queries.MatchFilter(
        game=args.get("game"),
        bot_id=args.get("bot"),
        status=args.get("status"),
        ladder_id=ladder_id,
        tournament_id=args.get("tournament"),
        before=args.get("before"),
    )


@blp.route("/matches")
@blp.arguments(s.MatchArgs, location="query")
@blp.response(200, s.envelope(s.Match, many=True))
def matches(args: dict[str, Any]) -> dict[str, Any]:
    """Matches, newest first, filtered by game, bot, status, ladder or tournament."""
    flt = match_filter(args)
    if flt is None:
        abort(404, description=f"no ladder {args['ladder']!r}")
    page = queries.matches(flt, args["page"], args["per_page"])
    slugs = queries.ladder_slugs()
    hidden = sealing.hidden_ids(page.items)
    data = [match_json(m, slugs.get(m.ladder_id or 0), m.id in hidden) for m in page.items]
    return envelope(data, page.meta())


def _match_or_404(match_id: int) -> Match:
    found = queries.match(match_id)
    if found is None:
        abort(404, description=f"no match {match_id}")
    return found


@blp.route("/matches/<id:match_id>")
@blp.response(200, s.envelope(s.Match))
def match(match_id: int) -> dict[str, Any]:
    """One match: its seats, status and, once finished, places and seed."""
    found = _match_or_404(match_id)
    return envelope(match_json(found, queries.ladder_slugs().get(found.ladder_id or 0)))


@blp.route("/matches/<id:match_id>/replay")
@blp.response(200, s.ReplayDocument)
def replay(match_id: int) -> Response:
    """The replay file (format ``kozyri-arena-replay`` v1), not wrapped in the envelope.

    A finished match's replay is whole; debug and stderr text are kept only in the steps of
    seats the reader owns. A running match gives public information only (no seed; the moves of
    other seats as a spectator sees them made). So does a match whose deal group (mirrored
    rotations, a tournament table) is still being played, finished or not: it is sealed.
    """
    found = db.session.get(Match, match_id)
    if found is None:
        abort(404, description=f"no match {match_id}")
    reader = auth.reader()
    owned = auth.owned_seats(reader, found) if reader else set()
    try:
        served = replays.served_bytes(found, owned)
    except replays.NoReplay as exc:
        abort(404, description=str(exc))
    response = Response(served.body, mimetype="application/json")
    if served.live:
        response.headers["Cache-Control"] = "no-store"
    else:
        response.headers["Cache-Control"] = ("private, " if reader else "public, ") + IMMUTABLE
        response.headers["Vary"] = "Cookie, Authorization"
    return response


def frame_window(args: dict[str, Any]) -> range:
    """The frames a request asks for: after ``since``, or ``start`` to ``stop`` (bounded)."""
    if "since" in args:
        start = args["since"] + 1
        return range(start, start + s.MAX_FRAMES)
    start = args.get("start", 0)
    return range(start, args.get("stop", start + s.MAX_FRAMES))


@blp.route("/matches/<id:match_id>/frames")
@blp.arguments(s.FrameArgs, location="query")
@blp.response(200, s.envelope(s.FramePage))
def frames(args: dict[str, Any], match_id: int) -> Response:
    """What was on the table at each step: everything, one seat's view (``seat``), or public.

    One window of at most 500 frames per request: ``start`` to ``stop`` (the first 500 by
    default), or the frames after ``since`` for following a running match; ``total`` says how
    many frames there are so far. For a running match only public observations are given,
    plus the reader's own seats.
    """
    found = _match_or_404(match_id)
    seat = args.get("seat")
    owned = auth.owned_seats(auth.reader(), found)
    try:
        served = replays.served_frames(found, seat, owned, frame_window(args))
    except replays.NoReplay as exc:
        abort(404, description=str(exc))
    except IndexError as exc:
        abort(404, description=str(exc))
    except replays.NotYours as exc:
        abort(403, description=str(exc))
    except Exception as exc:  # a replay the engine cannot re-play (its rules changed since)
        abort(409, description=f"the replay cannot be re-played: {exc}")
    response = Response(served.body, mimetype="application/json")
    response.headers["Cache-Control"] = "no-store" if served.live else "private, max-age=3600"
    return response


@blp.route("/tournaments")
@blp.response(200, s.envelope(s.Tournament, many=True))
def tournaments() -> dict[str, Any]:
    """The latest tournaments."""
    return envelope([tournament_json(t, {}) for t in queries.tournaments()])


@blp.route("/tournaments/<id:tournament_id>")
@blp.response(200, s.envelope(s.Tournament))
def tournament(tournament_id: int) -> dict[str, Any]:
    """One tournament with its progress and standings."""
    found = db.session.get(Tournament, tournament_id)
    if found is None:
        abort(404, description=f"no tournament {tournament_id}")
    data = tournament_json(found, tournament_service.progress(found))
    if not data["standings"]:
        data["standings"] = tournament_service.standings(found)
    return envelope(data)
