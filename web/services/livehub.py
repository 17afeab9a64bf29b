"""One reader of a live view per web process, shared by every spectator of it.

Each spectator of a running match used to hold its own Redis connection and block in its own
``XREAD``: with a hundred spectators every step woke a hundred readers, each parsing the same
entry. Here a web process follows each view (``web.services.live.stream_key``) with one thread
(a ``Channel``) that reads the stream once and keeps its entries in memory (as many as the
stream itself keeps, ``LIVE_STREAM_LENGTH``); a spectator's stream (``follow``) only waits on
the channel's condition and writes what is new to its socket.

What a spectator is sent is unchanged: the entries after the one it last had (resuming after
``Last-Event-ID``), a heartbeat after ``wait`` seconds without news (asking ``running()``
then, since a worker that died writes no end), and the end. A channel stops once its view has
ended or nobody has read it for ``LINGER_S`` seconds; a Redis failure ends every stream of the
channel (browsers reconnect, or poll).
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis

from web.services.live import Event

LINGER_S = 5.0
"""How long a channel with no reader keeps following its view (a reconnecting browser)."""
READ_COUNT = 500
"""Entries asked for per ``XREAD``."""

EntryId = tuple[int, int]


def _entry_id(raw: bytes) -> EntryId:
    first, _, second = raw.decode().partition("-")
    return int(first), int(second or 0)


def _event(entry: EntryId, fields: dict[bytes, bytes]) -> Event:
    if b"end" in fields:
        return Event("end", entry[0], fields[b"end"])
    return Event("frame", entry[0], fields.get(b"f", b"null"))


class Channel:
    """One view followed by one thread; its entries so far, in order."""

    def __init__(self, hub: Hub, key: str, keep: int) -> None:
        self.hub = hub
        self.key = key
        self.keep = keep
        self.cond = threading.Condition()
        self.ids: list[EntryId] = []
        self.events: list[Event] = []
        self.readers = 0
        self.idle_since = time.monotonic()
        self.ended = False
        self.failed: Exception | None = None

    def after(self, position: EntryId) -> tuple[list[EntryId], list[Event]]:
        """The entries after ``position`` (call with ``cond`` held)."""
        at = bisect.bisect_right(self.ids, position)
        return self.ids[at:], self.events[at:]

    def run(self, client: redis.Redis) -> None:
        """Follow the view until it ends, fails, or has had no reader for ``LINGER_S``."""
        last = "0-0"
        try:
            while not self._done():
                answer: Any = client.xread(
                    {self.key: last}, count=READ_COUNT, block=self.hub.block_ms
                )
                if answer:
                    last = self._add(answer[0][1])
        except redis.RedisError as exc:
            with self.cond:
                self.failed = exc
                self.cond.notify_all()
        finally:
            client.close()
            self.hub.drop(self)

    def _add(self, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> str:
        with self.cond:
            for raw, fields in entries:
                entry = _entry_id(raw)
                self.ids.append(entry)
                self.events.append(_event(entry, fields))
                self.ended = self.ended or b"end" in fields
            if len(self.ids) > self.keep:
                del self.ids[: -self.keep], self.events[: -self.keep]
            self.cond.notify_all()
        return entries[-1][0].decode()

    def _done(self) -> bool:
        with self.cond:
            if self.ended:
                return True
            return self.readers == 0 and time.monotonic() - self.idle_since > LINGER_S


class Hub:
    """The channels of one web process, by stream key."""

    def __init__(self, connect: Callable[[], redis.Redis], keep: int, block_s: float) -> None:
        self.connect = connect
        self.keep = keep
        self.block_ms = max(1, int(block_s * 1000))
        self.lock = threading.Lock()
        self.channels: dict[str, Channel] = {}

    def join(self, key: str) -> Channel:
        """The channel of ``key`` (started if needed), with one more reader counted."""
        with self.lock:
            channel = self.channels.get(key)
            if channel is None:
                channel = Channel(self, key, self.keep)
                self.channels[key] = channel
                thread = threading.Thread(
                    target=channel.run, args=(self.connect(),), name=f"live {key}", daemon=True
                )
                thread.start()
            with channel.cond:
                channel.readers += 1
            return channel

    def leave(self, channel: Channel) -> None:
        with channel.cond:
            channel.readers -= 1
            if channel.readers == 0:
                channel.idle_since = time.monotonic()

    def drop(self, channel: Channel) -> None:
        """Forget a channel whose thread stopped (a later reader starts a new one)."""
        with self.lock:
            if self.channels.get(channel.key) is channel:
                del self.channels[channel.key]


def follow(
    hub: Hub, key: str, since: int, wait: float, until: float, running: Callable[[], bool]
) -> Iterator[Event]:
    """The events after frame ``since`` of the view at ``key``, as ``live.follow`` gives them,
    read through the process's shared channel. ``redis.RedisError`` if the channel failed."""
    position: EntryId = (since, 1) if since >= 0 else (0, 0)
    channel = hub.join(key)
    try:
        news_at = time.monotonic()
        while (left := until - time.monotonic()) > 0:
            with channel.cond:
                ids, events = channel.after(position)
                if not ids and channel.failed is None and not channel.ended:
                    channel.cond.wait(min(left, max(0.0, news_at + wait - time.monotonic())))
                    ids, events = channel.after(position)
                failed = channel.failed
            for entry, event in zip(ids, events, strict=True):
                position = entry
                yield event
                if event.name == "end":
                    return
            if ids:
                news_at = time.monotonic()
            elif failed is not None:
                raise redis.RedisError(f"the live view stopped: {failed}")
            elif channel.ended or time.monotonic() - news_at >= wait:
                if channel.ended or not running():
                    yield Event("end", None, b"over")
                    return
                yield Event(None, None, b"")
                news_at = time.monotonic()
    finally:
        hub.leave(channel)


_hubs: dict[str, Hub] = {}
_hubs_lock = threading.Lock()


def hub_for(url: str, keep: int, block_s: float) -> Hub | None:
    """This process's hub for the Redis at ``url``; None if the site has no Redis."""
    from web.services.live import reader

    probe = reader(url, block_s)
    if probe is None:
        return None
    probe.close()
    with _hubs_lock:
        hub = _hubs.get(url)
        if hub is None:

            def connect() -> redis.Redis:
                client = reader(url, block_s)
                assert client is not None
                return client

            hub = _hubs[url] = Hub(connect, keep, block_s)
        return hub
