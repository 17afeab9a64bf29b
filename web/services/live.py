"""The live feed of a running match: written once per step by the worker, read by the site.

The worker (``Feed``) turns each step into the frames its readers may be sent, once: the public
frame (what any spectator sees: the public observation and each move as a spectator sees it
made, exactly what the frames API serves for a hidden match) and each seat's own frame (that
seat's observation and moves, for the seat's owner). A writer thread builds them and appends
them to one Redis stream per view, ``<prefix>live:<match id>:p`` (public) and ``...:s<seat>``,
so the referee never waits, and a reader is sent only its own view. A stream is bounded
(``LIVE_STREAM_LENGTH`` entries) and expires (``LIVE_STREAM_TTL`` seconds after the last
write); the entry of frame ``i`` has the id ``i-1``, so a reader resumes after any frame with
one ``XREAD``, and the end of an attempt is the entry ``<last frame>-2``.

The site streams what is there to each reader, from the public view's stream or the reader's
seat's (``web.services.livehub``: one reader thread per view and web process, shared by its
spectators): a watcher costs the worker nothing, and the site nothing but a wait. The feed
never carries the seed, the full view or another seat's hidden cards.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, NamedTuple

import orjson
import redis
from flask import current_app

from arena.games.base import Game, State

log = logging.getLogger(__name__)

END_STATUSES = ("finished", "given back")
"""What the end entry of an attempt says: its match finished, or the attempt gave it back."""

_STOP = object()


def stream_key(prefix: str, match_id: int, seat: int | None = None) -> str:
    """The Redis key of one view of match ``match_id``'s live feed: the public one, or seat
    ``seat``'s. Each view is a stream of its own, so a reader is sent only its frames."""
    return f"{prefix}live:{match_id}:" + ("p" if seat is None else f"s{seat}")


def _view(observation: dict[str, Any]) -> bytes:
    """An observation as the frames API gives it: JSON, without the growing histories."""
    from arena.replay import HISTORY_KEYS

    return orjson.dumps({k: v for k, v in observation.items() if k not in HISTORY_KEYS})


PRIVATE_STEP_KEYS = ("debug", "stderr")
"""Step keys only the owner of the step's seat reads."""


def event_for(
    event: dict[str, Any], game: Game, seat: int | None, owned: set[int], live: bool
) -> dict[str, Any]:
    """A frame's event: the action as the frame's viewer saw it made.

    A seat sees every move the game's rules make public, and of a secret move only its kind
    (``Game.action_seen_by``); so does a hidden match's spectator (``seat`` None, ``live``).
    """
    shown = dict(event)
    actor = event.get("seat")
    if actor not in owned:
        for key in PRIVATE_STEP_KEYS:
            shown[key] = None
    if (seat is None and not live) or actor == seat or "action" not in shown:
        return shown
    action = shown.pop("action")
    if isinstance(actor, int) and isinstance(action, dict):
        shown["action"] = game.action_seen_by(action, actor, seat)
    return shown


def _event(step: dict[str, Any] | None, game: Game, seat: int | None) -> bytes:
    if step is None:
        return b"null"
    owned = set() if seat is None else {seat}
    return orjson.dumps(event_for(step, game, seat, owned, True))


def entry_of(state: State, index: int, step: dict[str, Any] | None) -> dict[str, bytes]:
    """The stream entry of frame ``index`` (reached by ``step``): the public frame (``p``), as
    the frames API serves a hidden match's, and each seat's own frame (``s0``, ``s1``...)."""
    head = b'{"index":' + str(index).encode() + b',"event":'
    public = b',"public":' + _view(state.observation(None))
    fields = {"p": head + _event(step, state.game, None) + public + b"}"}
    for seat in range(state.game.players):
        own = b',"seat":' + _view(state.observation(seat)) + b"}"
        fields[f"s{seat}"] = head + _event(step, state.game, seat) + public + own
    return fields


class Feed:
    """The live feed one attempt of a match writes; ``on_step`` is a referee step callback.

    The referee's thread only queues each step; a writer thread re-plays the steps on a state
    of its own, builds the frames and appends them to the stream, whatever piled up meanwhile
    in one round trip. So the match waits for neither the frames nor Redis. Nothing here may
    stop the match: a Redis that fails is logged once and the feed goes quiet (readers fall back
    to the live replay file, ``web.services.play.LiveReplay``).
    """

    def __init__(self, client: redis.Redis, prefix: str, match_id: int, game: Game, seed: int):
        self.client, self.key = client, f"{prefix}live:{match_id}"
        views: list[int | None] = [None, *range(game.players)]
        self.keys = {"p" if v is None else f"s{v}": stream_key(prefix, match_id, v) for v in views}
        self.length = int(current_app.config["LIVE_STREAM_LENGTH"])
        self.ttl = int(current_app.config["LIVE_STREAM_TTL"])
        self.state = game.new_state(seed)
        self.index = 0
        self.pending: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.broken = False
        self.pending.put(("reset", None))  # a new attempt starts the feed afresh
        self.pending.put(("step", None))  # frame 0: the deal before any decision
        self.thread = threading.Thread(target=self._write, name=f"live-{match_id}", daemon=True)
        self.thread.start()

    def on_step(self, _state: State, step: dict[str, Any]) -> None:
        """Queue the step just applied (its status is final: ``Referee.play``)."""
        if not self.broken:
            self.pending.put(("step", dict(step)))

    def close(self, status: str | None, wait: float = 5.0) -> None:
        """Write the end of this attempt (``status``: one of ``END_STATUSES``) and stop; None
        writes no end (a result another attempt superseded: the feed is that attempt's now)."""
        if status is not None:
            self.pending.put(("end", status))
        self.pending.put(_STOP)
        self.thread.join(wait)

    def _write(self) -> None:
        try:
            while True:
                batch = [self.pending.get()]
                while not self.pending.empty():
                    batch.append(self.pending.get())
                commands = [self._command(*item) for item in batch if item is not _STOP]
                if commands and not self.broken:
                    self._send(commands)
                if batch[-1] is _STOP:
                    return
        finally:
            self.client.close()

    def _command(self, kind: str, value: Any) -> tuple[str, Any]:
        """What one queued item writes: ``(entry id, fields)``, or ``("reset", None)``."""
        if kind == "reset" or self.broken:
            return ("reset", None)
        if kind == "end":
            return (f"{self.index}-2", dict.fromkeys(self.keys, str(value).encode()))
        if value is not None:
            from arena.replay import apply_step

            problem = apply_step(self.state, value, self.index)
            if problem:  # cannot happen for a referee's step; the feed stops rather than lie
                self.broken = True
                log.error("%s: the live feed stopped: %s", self.key, problem)
                return ("reset", None)
            self.index += 1
        return (f"{self.index}-1", entry_of(self.state, self.index, value))

    def _send(self, commands: list[tuple[str, Any]]) -> None:
        try:
            pipe = self.client.pipeline(transaction=False)
            for entry_id, views in commands:
                if entry_id == "reset":
                    pipe.delete(*self.keys.values())
                    continue
                field = "end" if entry_id.endswith("-2") else "f"
                for view, data in views.items():
                    key = self.keys[view]
                    pipe.xadd(key, {field: data}, id=entry_id, maxlen=self.length, approximate=True)
            for key in self.keys.values():
                pipe.expire(key, self.ttl)
            pipe.execute()
        except (redis.RedisError, OSError) as exc:  # watching is a nicety: the match goes on
            self.broken = True
            log.warning("%s: the live feed stopped: %s", self.key, exc)


def open_feed(match_id: int, config: dict[str, Any], seed: int) -> Feed | None:
    """The feed of a match this worker starts playing; None without a Redis to write to."""
    from arena.games import make_game
    from web.services.queue import redis_client

    client = redis_client(str(current_app.config.get("REDIS_URL") or ""))
    if client is None:
        return None
    prefix = str(current_app.config.get("BROKER_PREFIX") or "")
    return Feed(client, prefix, match_id, make_game(**config), seed)


class Event(NamedTuple):
    """One server-sent event: ``name`` (frame, end or a heartbeat: None), its id and data."""

    name: str | None
    id: int | None
    data: bytes


def reader(url: str, wait: float) -> redis.Redis | None:
    """A Redis client for one stream, whose reads outlast a ``wait`` seconds' block; None if
    the site has no Redis (its readers poll instead)."""
    if url.startswith("redis+socket://"):
        path = url[len("redis+socket://") :]
        return redis.Redis(unix_socket_path=path, socket_timeout=wait + 10)
    if url.startswith(("redis://", "rediss://")):
        return redis.Redis.from_url(url, socket_timeout=wait + 10)
    return None


# --- the site: streams to readers ----------------------------------------------------------


class Busy(Exception):
    """Too many live streams are open (this client's, or this web process's)."""


class Slots:
    """Open live streams of this web process, overall and per client address.

    Each stream holds one of the web server's threads for as long as it is open, so their
    number must stay below the threads (``ARENA_WEB_THREADS``) with room for every other
    request; a client may hold only a few, so one reader cannot take them all.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: dict[str, int] = {}

    def take(self, client: str, most: int, per_client: int) -> None:
        """Count one more stream of ``client``; ``Busy`` if either bound is reached."""
        with self.lock:
            if sum(self.open.values()) >= most:
                raise Busy(f"this server follows {most} live matches at most; try again soon")
            if self.open.get(client, 0) >= per_client:
                raise Busy(f"at most {per_client} live streams per client")
            self.open[client] = self.open.get(client, 0) + 1

    def give(self, client: str) -> None:
        """A stream of ``client`` ended."""
        with self.lock:
            left = self.open.get(client, 0) - 1
            if left > 0:
                self.open[client] = left
            else:
                self.open.pop(client, None)

    def count(self) -> int:
        with self.lock:
            return sum(self.open.values())


slots = Slots()


def wire(event: Event) -> bytes:
    """One event as ``text/event-stream`` text (a heartbeat is a comment)."""
    if event.name is None:
        return b": live\n\n"
    head = b"event: " + event.name.encode() + b"\n"
    if event.name == "frame" and event.id is not None:
        head += b"id: " + str(event.id).encode() + b"\n"
    return head + b"data: " + event.data + b"\n\n"
