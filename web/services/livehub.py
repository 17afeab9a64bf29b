"""One reader of a live view per web process, shared by every spectator of it.

Each spectator of a running match used to hold its own Redis connection and block in its own
``XREAD``: with a hundred spectators every step woke a hundred readers, each parsing the same
entry. Here a web process follows each view (``web.services.live.stream_key``) with one thread
(a ``Channel``) that reads the stream once and keeps its entries in memory (as many as the
stream itself keeps, ``LIVE_STREAM_LENGTH``); a spectator's stream (``follow``) only waits on
the channel's condition and writes what is new to its socket.

Each entry is encoded for the wire once, by the channel's thread (``Channel.wires``), and
``follow_wire`` hands a spectator's stream every entry that is new to it as one block of bytes:
a hundred spectators then share one encoding per step, and each stream does one write per
wakeup, however many steps it has fallen behind.

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

from web.services.live import Event, wire

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
        self.cond = threading.Condition(threading.Lock())
        self.ids: list[EntryId] = []
        self.events: list[Event] = []
        self.wires: list[bytes] = []
        """Each event as ``text/event-stream`` bytes, encoded once for every spectator."""
        self.readers = 0
        self.idle_since = time.monotonic()
        self.ended = False
        self.failed: Exception | None = None

    def after(self, position: EntryId) -> tuple[list[EntryId], list[Event]]:
        """The entries after ``position`` (call with ``cond`` held)."""
        at = bisect.bisect_right(self.ids, position)
        return self.ids[at:], self.events[at:]

    def wire_after(self, position: EntryId) -> tuple[EntryId | None, bytes, bool]:
        """The last entry after ``position`` (None if none), the wire bytes of every entry
        after it, and whether they end the view (call with ``cond`` held)."""
        at = bisect.bisect_right(self.ids, position)
        stop = len(self.ids)
        if at == stop:
            return None, b"", False
        ended = False
        for k in range(at, stop):  # nothing after an end is sent, as in ``follow``
            if self.events[k].name == "end":
                stop, ended = k + 1, True
                break
        data = self.wires[at] if stop == at + 1 else b"".join(self.wires[at:stop])
        return self.ids[stop - 1], data, ended

    def run(self, client: redis.Redis) -> None:
        """Follow the view until it ends, fails, or has had no reader for ``LINGER_S``."""
        last = "0-0"
        batch = self.hub.batch_s
        told = 0.0
        try:
            while not self._done():
                answer: Any = client.xread(
                    {self.key: last}, count=READ_COUNT, block=self.hub.block_ms
                )
                if not answer:
                    continue
                last = self._add(answer[0][1])
                early = told + batch - time.monotonic()
                if early > 0 and not self.ended:
                    # The spectators were woken less than ``batch`` ago: let more steps
                    # come, and wake them once for all of them.
                    time.sleep(early)
                    more: Any = client.xread({self.key: last}, count=READ_COUNT)
                    if more:
                        last = self._add(more[0][1])
                with self.cond:
                    self.cond.notify_all()
                told = time.monotonic()
        except redis.RedisError as exc:
            with self.cond:
                self.failed = exc
                self.cond.notify_all()
        finally:
            client.close()
            self.hub.drop(self)

    def _add(self, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> str:
        ids, events = [], []
        for raw, fields in entries:  # parsed and encoded before taking the lock
            entry = _entry_id(raw)
            ids.append(entry)
            events.append(_event(entry, fields))
        wires = [wire(event) for event in events]
        with self.cond:
            self.ids += ids
            self.events += events
            self.wires += wires
            self.ended = self.ended or any(event.name == "end" for event in events)
            if len(self.ids) > self.keep:
                del self.ids[: -self.keep], self.events[: -self.keep], self.wires[: -self.keep]
        return entries[-1][0].decode()

    def _done(self) -> bool:
        with self.cond:
            if self.ended:
                return True
            return self.readers == 0 and time.monotonic() - self.idle_since > LINGER_S


class Hub:
    """The channels of one web process, by stream key."""

    def __init__(
        self,
        connect: Callable[[], redis.Redis],
        keep: int,
        block_s: float,
        batch_s: float = 0.0,
    ) -> None:
        self.connect = connect
        self.keep = keep
        self.block_ms = max(1, int(block_s * 1000))
        self.batch_s = batch_s
        """Spectators are woken at most once per ``batch_s`` seconds, for every new step."""
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


HEARTBEAT = wire(Event(None, None, b""))
OVER = wire(Event("end", None, b"over"))


def follow_wire(
    hub: Hub, key: str, since: int, wait: float, until: float, running: Callable[[], bool]
) -> Iterator[bytes]:
    """What ``follow`` gives, as the bytes of a ``text/event-stream``: each wakeup yields
    every new event at once, from the bytes the channel encoded once for all its spectators."""
    position: EntryId = (since, 1) if since >= 0 else (0, 0)
    channel = hub.join(key)
    cond = channel.cond
    try:
        news_at = time.monotonic()
        while (left := until - time.monotonic()) > 0:
            with cond:
                last, data, ended = channel.wire_after(position)
                if last is None and channel.failed is None and not channel.ended:
                    cond.wait(min(left, max(0.0, news_at + wait - time.monotonic())))
                    last, data, ended = channel.wire_after(position)
                failed = channel.failed
            if last is not None:
                position = last
                yield data
                if ended:
                    return
                news_at = time.monotonic()
            elif failed is not None:
                raise redis.RedisError(f"the live view stopped: {failed}")
            elif channel.ended or time.monotonic() - news_at >= wait:
                if channel.ended or not running():
                    yield OVER
                    return
                yield HEARTBEAT
                news_at = time.monotonic()
    finally:
        hub.leave(channel)


_hubs: dict[str, Hub] = {}
_hubs_lock = threading.Lock()


def hub_for(url: str, keep: int, block_s: float, batch_s: float = 0.0) -> Hub | None:
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

            hub = _hubs[url] = Hub(connect, keep, block_s, batch_s)
        return hub
