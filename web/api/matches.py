"""API: matches (filtered, paginated), replays, per-step frames, and tournaments."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
import redis
from flask import Response, abort, current_app, request
from flask_smorest import Blueprint
from sqlalchemy import select
from werkzeug.exceptions import ServiceUnavailable

from web import auth
from web.api import envelope, error_payload, queries, replays
from web.api import schemas as s
from web.api.present import match_json, tournament_json
from web.extensions import db
from web.models import Match, Tournament
from web.services import live as live_feed
from web.services import livehub, sealing
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


@blp.route("/matches/<id:match_id>/live")
@blp.arguments(s.LiveArgs, location="query")
@blp.response(200, content_type="text/event-stream")
@blp.alt_response(503, schema=s.ErrorEnvelope, description="too many live streams open")
def live(args: dict[str, Any], match_id: int) -> Response:
    """A running match as it is played: server-sent events, one ``frame`` per step.

    Each frame is what the frames API gives for a running match (public observations and moves
    as a spectator sees them made), or with ``seat`` that seat's own view, for its owner only.
    An ``end`` event says the match (or this attempt at it) is over: the whole replay is then
    asked for as usual. A comment is sent as a heartbeat while nothing happens. A client may
    hold a few streams at once and a server a bounded number (503 with Retry-After beyond);
    a stream lasts some minutes at most and resumes after the ``Last-Event-ID`` it last had.
    """
    found = _match_or_404(match_id)
    seat = args.get("seat")
    if seat is not None:
        if not 0 <= seat < len(found.seats):
            abort(404, description=f"match {match_id} has no seat {seat}")
        if seat not in auth.owned_seats(auth.reader(), found):
            abort(403, description=f"seat {seat} of match {match_id} is not yours")
    since = _last_event_id(args.get("since", -1))
    config = current_app.config
    wait = float(config["LIVE_HEARTBEAT"])
    hub = livehub.hub_for(
        str(config.get("REDIS_URL") or ""),
        int(config["LIVE_STREAM_LENGTH"]),
        wait,
        float(config["LIVE_BATCH"]),
    )
    if hub is None:
        abort(404, description="this server has no live feed: follow the frames API instead")
    address = request.remote_addr or "?"
    try:
        live_feed.slots.take(
            address, int(config["LIVE_STREAMS"]), int(config["LIVE_STREAMS_PER_CLIENT"])
        )
    except live_feed.Busy as exc:
        return _busy(str(exc))
    over = found.status not in sealing.PENDING
    db.session.rollback()  # hold no database connection while the stream is open
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def running() -> bool:
        with app.app_context():
            status = db.session.scalar(select(Match.status).where(Match.id == match_id))
            db.session.remove()
        return status in sealing.PENDING

    def stream() -> Iterator[bytes]:
        try:
            yield b"retry: 3000\n\n"
            if over:
                yield live_feed.wire(live_feed.Event("end", None, b"over"))
                return
            prefix = str(config.get("BROKER_PREFIX") or "")
            key = live_feed.stream_key(prefix, match_id, seat)
            until = time.monotonic() + float(config["LIVE_STREAM_SECONDS"])
            yield from livehub.follow_wire(hub, key, since, wait, until, running)
        except redis.RedisError:
            return  # the browser reconnects, or falls back to polling
        finally:
            live_feed.slots.give(address)

    response = Response(stream(), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"  # a proxy in front must not hold events back
    return response


def _last_event_id(since: int) -> int:
    """Where a stream resumes: after the browser's ``Last-Event-ID``, else after ``since``."""
    raw = request.headers.get("Last-Event-ID", "")
    return int(raw) if raw.isdigit() and len(raw) < 9 else since


def _busy(message: str) -> Response:
    body = error_payload(ServiceUnavailable(description=message))
    response = Response(orjson.dumps(body), status=503, mimetype="application/json")
    response.headers["Retry-After"] = "30"
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
