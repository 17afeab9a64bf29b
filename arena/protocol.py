"""The bot protocol, version 1: every wire payload between the referee and a bot.

One JSON object per line, UTF-8, on the bot's stdin (referee to bot) and stdout (bot to referee).
stderr is free for the bot's logs. ``docs/protocol.md`` is the bot author's reference and
``docs/schemas/`` holds a JSON Schema for each message; this module is the referee's side.

Referee to bot: ``hello``, ``request``, ``error``, ``deal_end``, ``match_end``, ``shutdown``.
Bot to referee: ``ready``, ``action``, ``error``.

A bot may ask in its ``ready`` for its observations as deltas (``observations: "delta"``): its
``request`` and ``deal_end`` then carry ``delta`` in place of ``observation``; ``arena.feed``
writes both forms.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

PROTOCOL_VERSION = 1
"""Bumped on any incompatible change; a bot announces the version it speaks in ``ready``."""

MAX_LINE_BYTES = 64 * 1024
"""Longest line a bot may send (newline excluded); a longer one is an output flood."""

MAX_DEBUG_CHARS = 1024
"""``debug`` text beyond this many characters is cut off (not an error)."""

MAX_NAME_CHARS = 64
"""A bot's self-chosen name in ``ready`` is cut to this length."""

JSON = dict[str, Any]

Encoded = orjson.Fragment
"""A JSON value already encoded, written as is inside a message."""

FULL = "full"
DELTA = "delta"
OBSERVATION_MODES = (FULL, DELTA)
"""How a seat gets its observations (``observations`` in ``ready``): whole (the default) or as
deltas against the last one it was sent."""


class ProtocolError(ValueError):
    """A line from a bot that is not a valid protocol message; the message says why."""


class LineTooLong(ProtocolError):
    """A bot sent more than ``MAX_LINE_BYTES`` without a newline."""


# --- referee to bot -------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeInfo:
    """The time control as a bot sees it, in milliseconds."""

    init_ms: int
    move_ms: int
    bank_ms: int
    timeouts: bool = True

    def to_json(self) -> JSON:
        return {
            "init_ms": self.init_ms,
            "move_ms": self.move_ms,
            "bank_ms": self.bank_ms,
            "timeouts": self.timeouts,
        }


@dataclass(frozen=True)
class Hello:
    """First message of a match: who and what the bot plays. Answer: ``ready``."""

    game: str
    players: int
    seat: int
    params: JSON
    variant: str | None
    time: TimeInfo
    name: str
    protocol: int = PROTOCOL_VERSION

    def to_json(self) -> JSON:
        return {
            "type": "hello",
            "protocol": self.protocol,
            "game": self.game,
            "players": self.players,
            "seat": self.seat,
            "params": self.params,
            "variant": self.variant,
            "time": self.time.to_json(),
            "name": self.name,
        }


@dataclass(slots=True)
class Request:
    """The bot's turn: its complete observation and the legal actions. Answer: ``action``.

    With ``delta`` the observation is a delta against the last one the bot was sent, under the
    key ``delta`` (a bot that asked for deltas in ``ready``). Not frozen, like ``ActionReply``:
    it is built for every move; treat it as read-only.
    """

    id: int
    deal: int
    observation: JSON | Encoded
    legal_actions: list[JSON] | list[Encoded]
    time_left_ms: int
    move_ms: int
    delta: bool = False

    def to_json(self) -> JSON:
        return {
            "type": "request",
            "id": self.id,
            "deal": self.deal,
            "delta" if self.delta else "observation": self.observation,
            "legal_actions": self.legal_actions,
            "time_left_ms": self.time_left_ms,
            "move_ms": self.move_ms,
        }


@dataclass(frozen=True)
class ErrorNotice:
    """The referee rejected the answer to request ``id`` and played the default action."""

    id: int
    status: str
    message: str
    strikes: int
    max_strikes: int

    def to_json(self) -> JSON:
        return {
            "type": "error",
            "id": self.id,
            "status": self.status,
            "message": self.message,
            "strikes": self.strikes,
            "max_strikes": self.max_strikes,
        }


@dataclass(frozen=True)
class DealEnd:
    """A deal is over; ``observation`` is the seat's view right after it."""

    deal: int
    observation: JSON | Encoded
    delta: bool = False
    """The observation is a delta, sent under the key ``delta`` (as in ``Request``)."""

    def to_json(self) -> JSON:
        key = "delta" if self.delta else "observation"
        return {"type": "deal_end", "deal": self.deal, key: self.observation}


@dataclass(frozen=True)
class MatchEnd:
    """The match is over: the result (forfeits applied) and this seat's place and status."""

    result: JSON
    place: int
    status: str

    def to_json(self) -> JSON:
        return {
            "type": "match_end",
            "result": self.result,
            "place": self.place,
            "status": self.status,
        }


@dataclass(frozen=True)
class Shutdown:
    """Exit now; the process is killed shortly after."""

    def to_json(self) -> JSON:
        return {"type": "shutdown"}


RefereeMessage = Hello | Request | ErrorNotice | DealEnd | MatchEnd | Shutdown


def encode(message: RefereeMessage) -> bytes:
    """One wire line (newline included) for ``message``."""
    return orjson.dumps(message.to_json(), option=orjson.OPT_APPEND_NEWLINE)


# --- bot to referee -------------------------------------------------------------------------


@dataclass(frozen=True)
class Ready:
    """A bot's answer to ``hello``."""

    protocol: int
    name: str | None = None
    observations: str = FULL
    """``full`` or ``delta``: how the bot wants its observations."""


@dataclass(slots=True)
class ActionReply:
    """A bot's answer to ``request``: an action by value or an index into ``legal_actions``.

    Not frozen, unlike the other messages: it is built once per move, and a frozen dataclass
    costs about a microsecond more to build. Treat it as read-only.
    """

    id: int | None = None
    action: JSON | None = None
    index: int | None = None
    debug: str | None = None


@dataclass(frozen=True)
class BotError:
    """The bot gives up on the current request (it is treated as invalid output)."""

    message: str = ""
    id: int | None = None


BotMessage = Ready | ActionReply | BotError


def decode_bot_message(line: bytes) -> BotMessage:
    """Parse one line from a bot; raise ``ProtocolError`` saying what is wrong."""
    if len(line) > MAX_LINE_BYTES:
        raise LineTooLong(f"line of {len(line)} bytes exceeds {MAX_LINE_BYTES}")
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON ({exc}): {_excerpt(line)}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"expected a JSON object, got {type(obj).__name__}: {_excerpt(line)}")
    kind = obj.get("type")
    decoder: _Decoder | None = _DECODERS.get(kind) if isinstance(kind, str) else None
    if decoder is None:
        known = ", ".join(_DECODERS)
        raise ProtocolError(f"unknown message type {kind!r} (a bot sends: {known})")
    return decoder(obj)


def _decode_ready(obj: JSON) -> Ready:
    version = obj.get("protocol")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ProtocolError("ready needs an integer 'protocol' (the version the bot speaks)")
    name = obj.get("name")
    if name is not None and not isinstance(name, str):
        raise ProtocolError("ready 'name' must be a string")
    mode = obj.get("observations", FULL)
    if not isinstance(mode, str) or mode not in OBSERVATION_MODES:
        wanted = " or ".join(repr(m) for m in OBSERVATION_MODES)
        raise ProtocolError(f"ready 'observations' must be {wanted}, got {_json_text(mode)}")
    return Ready(version, name[:MAX_NAME_CHARS] if name else None, mode)


def _decode_action(obj: JSON) -> ActionReply:
    index, request_id = obj.get("index"), obj.get("id")
    if (
        type(index) is int
        and "action" not in obj
        and (request_id is None or type(request_id) is int)
    ):
        debug = obj.get("debug")  # the usual answer, checked in as few steps as possible
        return ActionReply(request_id, None, index, None if debug is None else _debug_text(debug))
    has_action, has_index = "action" in obj, "index" in obj
    if has_action == has_index:
        raise ProtocolError("an action message needs exactly one of 'action' or 'index'")
    action = obj.get("action")
    if has_action and not isinstance(action, dict):
        raise ProtocolError(f"'action' must be a JSON object, got {_type_name(action)}")
    if has_index and not _is_int(index):
        raise ProtocolError(f"'index' must be an integer, got {_type_name(index)}")
    return ActionReply(_optional_id(obj), action, index, _debug_text(obj.get("debug")))


def _decode_error(obj: JSON) -> BotError:
    message = obj.get("message", "")
    if not isinstance(message, str):
        raise ProtocolError("error 'message' must be a string")
    return BotError(message=message[:MAX_DEBUG_CHARS], id=_optional_id(obj))


_Decoder = Callable[[JSON], BotMessage]
_DECODERS: dict[str, _Decoder] = {
    "ready": _decode_ready,
    "action": _decode_action,
    "error": _decode_error,
}


def _optional_id(obj: JSON) -> int | None:
    value = obj.get("id")
    if value is not None and not _is_int(value):
        raise ProtocolError(f"'id' must be an integer, got {_type_name(value)}")
    return value


def _debug_text(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"'debug' must be a string, got {_type_name(value)}")
    return value[:MAX_DEBUG_CHARS]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _json_text(value: Any, limit: int = 40) -> str:
    """``value`` as JSON for a message, cut to ``limit`` characters."""
    text = orjson.dumps(value).decode()
    return text if len(text) <= limit else text[:limit] + "..."


def _excerpt(line: bytes, limit: int = 80) -> str:
    text = line[:limit].decode("utf-8", "replace")
    return repr(text) + ("..." if len(line) > limit else "")


# --- the referee's line reader --------------------------------------------------------------


@dataclass
class LineReader:
    """Splits a byte stream into lines, refusing any line longer than ``limit`` bytes."""

    limit: int = MAX_LINE_BYTES
    _buffer: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> list[bytes]:
        """Add ``data``; return the complete lines (without newline) it finishes.

        Raises ``LineTooLong`` as soon as a line, finished or not, exceeds the limit.
        """
        if data and not self._buffer and data.find(b"\n") == len(data) - 1:  # one whole line
            if len(data) - 1 > self.limit:
                raise LineTooLong(f"line of {len(data) - 1} bytes exceeds {self.limit}")
            return [data[:-1].rstrip(b"\r")]
        self._buffer += data
        lines: list[bytes] = []
        start = 0
        while (end := self._buffer.find(b"\n", start)) >= 0:
            if end - start > self.limit:
                raise LineTooLong(f"line of {end - start} bytes exceeds {self.limit}")
            lines.append(bytes(self._buffer[start:end]).rstrip(b"\r"))
            start = end + 1
        del self._buffer[:start]
        if len(self._buffer) > self.limit:
            raise LineTooLong(f"over {self.limit} bytes without a newline")
        return lines

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line."""
        return len(self._buffer)
