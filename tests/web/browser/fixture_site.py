"""A tiny HTTP site for browser tests of the viewer and the rating chart, without the database.

It serves ``web/static`` as the site does, a test page per replay hosting the viewer exactly as
the match page does, and the replay and frames of each replay in the shapes of the JSON API
(``/api/v1/matches/<id>/replay`` and ``/frames``), with the site's Content-Security-Policy, so a
script or style the real pages would block fails here too. Run it by hand to look at the viewer::

    .venv/bin/python -m tests.web.browser.fixture_site 8765
"""

from __future__ import annotations

import html
import mimetypes
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from arena.games import make_game, viewer_script
from arena.games.base import ConfigError, Game
from arena.replay import Checkpoints, Replay, frames, read_replay

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "web" / "static"
GOLDEN = ROOT / "tests" / "golden"
GAME_ADAPTERS = "js/viewer/games/"
"""Under ``/static``: each game's viewer adapter, from its folder (``web/views/viewer.py``)."""
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)

VIEWER_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/static/css/viewer.css">
<link rel="stylesheet" href="/static/css/fixture.css"></head>
<body><h1>{title}</h1>
<div id="replay-viewer" data-replay-url="/api/replays/{name}" data-frames-url="/api/frames/{name}"
 data-poll-ms="300"
 data-game="{game}" data-seats='{seats}' data-viewer-seat="{viewer_seat}"></div>
<p><label>A form field: <input id="notes" type="text"></label></p>
<script type="module" src="/static/js/viewer/main.js"></script>
</body></html>"""

CHART_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Rating chart</title>
<link rel="stylesheet" href="/static/css/fixture.css"></head>
<body><h1>Rating history</h1>
<div id="rating-chart" data-src="/api/ratings/{name}"><p>The server's drawing.</p></div>
<script type="module" src="/static/js/rating-chart.js"></script>
</body></html>"""


class FixtureSite:
    """Replays and rating histories by name, served over HTTP on a free loopback port."""

    def __init__(self) -> None:
        self.replays: dict[str, Replay] = {}
        self.ratings: dict[str, list[list[Any]]] = {}
        self.viewer_seats: dict[str, int | None] = {}
        self.live: dict[str, int] = {}
        """Replays still being played (or sealed): how many of their steps are played so far."""
        self.sealed: dict[str, str] = {}
        """Finished replays whose deal group is still played: what their page says of them."""
        self.lean: set[str] = set()
        """Replays whose frames are served without the history lists, which grow every step."""
        self._frames: dict[str, dict[int, Any]] = {}
        self._checkpoints: dict[str, Checkpoints] = {}
        self.requests: list[str] = []
        """The frame requests served, in order (path and query)."""
        self.refuse: dict[str, int] = {}
        """Replays whose next N window requests (more than one frame) get a 503, as from a busy
        server."""
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def add_golden(self, name: str) -> str:
        """Serve ``tests/golden/<name>.json`` under ``name``; return the viewer page's URL."""
        return self.add(name, read_replay(GOLDEN / f"{name}.json"))

    def add(self, name: str, replay: Replay, viewer_seat: int | None = None) -> str:
        self.replays[name] = replay
        self.viewer_seats[name] = viewer_seat
        self._frames.pop(name, None)
        kept = self._checkpoints[name] = Checkpoints(replay)
        for _ in kept.states():  # as the site keeps them for a finished match it has served
            pass
        return f"{self.url}/viewer/{name}"

    def frames(self, name: str, start: int, stop: int) -> list[Any]:
        """Frames ``start`` to ``stop - 1`` of a replay, built only when first asked for."""
        built = self._frames.setdefault(name, {})
        stop = min(stop, len(self.replays[name]["steps"]) + 1)
        missing = [i for i in range(start, stop) if i not in built]
        if missing:
            replay, kept = self.replays[name], self._checkpoints.get(name)
            for frame in frames(replay, missing[0], missing[-1] + 1, checkpoints=kept):
                built[frame["index"]] = frame
        return [built[i] for i in range(start, stop)]

    def start(self) -> FixtureSite:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def frame_for(frame: Any, seat: int | None, game: Game, live: bool = False) -> dict[str, Any]:
    """One frame as the API gives it: a spectator's (public while the match runs) or a seat's.

    A seat sees another seat's action as the game shows it (``Game.action_seen_by``), and so
    does the spectator of a running match.
    """
    event = dict(frame["event"]) if frame["event"] else None
    out: dict[str, Any] = {"index": frame["index"], "event": event, "public": frame["public"]}
    if seat is None and not live:
        out["spectator"] = frame["spectator"]
        out["seats"] = frame["seats"]
        return out
    if event is not None and event["seat"] != seat and "action" in event:
        event["action"] = game.action_seen_by(event["action"], event["seat"], seat)
    if seat is not None:
        out["seat"] = frame["seats"][seat]
    return out


MAX_WINDOW = 500


def frame_window(query: dict[str, list[str]]) -> range:
    """The window a frames request asks for, as the API reads it (``start``/``stop``, ``since``)."""
    if "since" in query:
        start = int(query["since"][0]) + 1
        return range(start, start + MAX_WINDOW)
    start = int(query.get("start", ["0"])[0])
    stop = int(query.get("stop", [str(start + MAX_WINDOW)])[0])
    if not 0 <= start < stop <= start + MAX_WINDOW:
        raise ValueError(f"bad window {start}..{stop}")
    return range(start, stop)


def _handler(site: FixtureSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests report what matters."""

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            path, query = parts.path, parse_qs(parts.query)
            try:
                self._route(path, query)
            except (KeyError, ValueError, IndexError, ConfigError):
                self._send(404, b"not found", "text/plain")

        def _route(self, path: str, query: dict[str, list[str]]) -> None:
            kind, _, name = path.strip("/").partition("/")
            if kind == "static":
                self._static(name)
            elif kind == "viewer":
                self._send(200, _viewer_page(site, name).encode(), "text/html; charset=utf-8")
            elif kind == "chart":
                page = CHART_PAGE.format(name=html.escape(name))
                self._send(200, page.encode(), "text/html; charset=utf-8")
            elif path.startswith("/api/replays/"):
                self._json(_replay_for(site, path.rsplit("/", 1)[1]))
            elif path.startswith("/api/frames/"):
                self._frames(path.rsplit("/", 1)[1], query)
            elif path.startswith("/api/ratings/"):
                self._json({"data": site.ratings[path.rsplit("/", 1)[1]]})
            else:
                raise KeyError(path)

        def _frames(self, name: str, query: dict[str, list[str]]) -> None:
            site.requests.append(self.path)
            seat = int(query["seat"][0]) if "seat" in query else None
            played = site.live.get(name)
            if played is not None and seat not in (None, site.viewer_seats.get(name)):
                self._send(403, b'{"error": {"message": "not your seat"}}', "application/json")
                return
            total = (len(site.replays[name]["steps"]) if played is None else played) + 1
            window = frame_window(query)
            if len(window) > 1 and site.refuse.get(name, 0) > 0:
                site.refuse[name] -= 1
                self._send(503, b'{"error": {"message": "busy"}}', "application/json")
                return
            every = site.frames(name, window.start, min(window.stop, total))
            game = make_game(**site.replays[name]["game"])
            shown = [frame_for(f, seat, game, played is not None) for f in every]
            if name in site.lean:
                shown = [_without_history(f) for f in shown]
            data = {"match_id": 1, "seat": seat, "live": played is not None, "total": total}
            self._json({"data": {**data, "frames": shown}})

        def _static(self, rel: str) -> None:
            target = (STATIC / rel).resolve()
            if rel == "css/fixture.css":
                self._send(200, b"body{font-family:sans-serif;margin:16px}", "text/css")
                return
            if rel.startswith(GAME_ADAPTERS):  # as the site serves them, from the game folders
                script = viewer_script(rel.removeprefix(GAME_ADAPTERS).removesuffix(".js"))
                if script is None:
                    raise KeyError(rel)
                self._send(200, script.read_bytes(), "text/javascript")
                return
            if STATIC not in target.parents or not target.is_file():
                raise KeyError(rel)
            kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
            if target.suffix == ".js":
                kind = "text/javascript"
            self._send(200, target.read_bytes(), kind)

        def _json(self, value: Any) -> None:
            self._send(200, orjson.dumps(value), "application/json")

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return Handler


HISTORY_KEYS = ("history", "last_deal", "earlier_rounds")


def _without_history(frame: dict[str, Any]) -> dict[str, Any]:
    def lean(view: Any) -> Any:
        return {k: v for k, v in view.items() if k not in HISTORY_KEYS}

    out = dict(frame)
    for key in ("public", "spectator", "seat"):
        if key in out:
            out[key] = lean(out[key])
    if "seats" in out:
        out["seats"] = [lean(v) for v in out["seats"]]
    return out


def _replay_for(site: FixtureSite, name: str) -> dict[str, Any]:
    """The replay document, or while the match runs its public part as the API serves it."""
    replay: dict[str, Any] = dict(site.replays[name])
    played = site.live.get(name)
    if played is None:
        return replay
    mine = site.viewer_seats.get(name)
    game = make_game(**replay["game"])
    steps = [
        s
        if s["seat"] == mine
        else {**s, "action": game.action_seen_by(s["action"], s["seat"], None)}
        for s in replay["steps"][:played]
    ]
    header = {k: replay[k] for k in ("format", "version", "engine", "game", "seats")}
    status = site.sealed.get(name)
    sealed = {"status": "finished", "sealed": status} if status else {"status": "running"}
    return {**header, "live": True, **sealed, "steps": steps}


def _viewer_page(site: FixtureSite, name: str) -> str:
    replay = site.replays[name]
    seat = site.viewer_seats.get(name)
    names = orjson.dumps([s["name"] for s in replay["seats"]]).decode()
    return VIEWER_PAGE.format(
        title=html.escape(f"Replay {name}"),
        name=html.escape(name),
        game=html.escape(str(replay["game"]["game"])),
        seats=html.escape(names, quote=False).replace("'", "&#39;"),
        viewer_seat="" if seat is None else seat,
    )


def main() -> None:
    """Serve every golden replay until interrupted (port from the command line, or 8765)."""
    site = FixtureSite()
    site.server.server_close()
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    site.server = ThreadingHTTPServer(("127.0.0.1", port), _handler(site))
    for path in sorted(GOLDEN.glob("*.json")):
        print(site.add_golden(path.stem))
    site.server.serve_forever()


if __name__ == "__main__":
    main()
