"""What the referee has sent one seat of its observations, to send the next one cheaply.

A seat gets its observation whole with every request and ``deal_end`` (``full``, protocol v1's
default), or, if its bot asked for them in ``ready``, as deltas against the last one it was
sent (``delta``; ``docs/protocol.md``, "Observations as deltas"). Either way the feed encodes
each history event once and keeps the seat's history encoded, so a whole observation costs
about as much as a short one: only the rest of the observation (the ``head``, a few small
values) is encoded again each time.

A delta is an object with up to three members, each left out when empty:

- ``set``: keys whose value is new or changed, with the value;
- ``append``: list-valued keys that grew at the end, with the new items only;
- ``drop``: keys the observation no longer has.

Whether a value changed is decided on its encoded bytes, so a delta is exact in JSON terms
(``1`` and ``true`` differ) however the game builds its values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from arena.games.base import HISTORY, JSON, EventLog, State
from arena.protocol import FULL, OBSERVATION_MODES, Encoded

_dumps = orjson.dumps


class ObservationFeed:
    """One seat's observations as the referee writes them: whole or as deltas.

    ``message_body(state, seat)`` gives the next one, to be sent as a message's ``observation``
    (or ``delta``); ``commit()`` says it was delivered, so the next delta builds on it (a
    message the bot never got must not be the base of the next one).
    """

    def __init__(self, mode: str = FULL) -> None:
        if mode not in OBSERVATION_MODES:
            raise ValueError(f"unknown observation mode {mode!r}")
        self.mode = mode
        self._log: Sequence[Any] | None = None
        """The game's event list whose entries are encoded in ``_events``."""
        self._events = bytearray(b"[]")
        """The encoded entries of ``_log``: a JSON list, grown in place."""
        self._starts: list[int] = []
        """Where each encoded entry begins in ``_events``."""
        self._history: Encoded | None = Encoded(b"[]")
        """``_events`` ready to be written (None: not made since the last entry)."""
        self._sent: dict[str, bytes] = {}
        """The last delivered observation: each key's encoded value (history left out)."""
        self._sent_log: Sequence[Any] | None = None
        self._sent_count = 0
        """The event list and how many of its entries the last delivered observation had."""
        self._pending: tuple[dict[str, bytes], Sequence[Any] | None, int] | None = None

    def message_body(self, state: State, seat: int) -> JSON:
        """``seat``'s observation now, whole or as a delta against the last one delivered
        (``commit``); its history (and a delta's values) already encoded."""
        parts = state.observation_parts(seat)
        if parts is None:  # a game that does not split its observation: the slow, generic way
            head, log = state.observation(seat), None
        else:
            head, log = parts
            self._catch_up(log)
        if self.mode == FULL:
            if log is not None:
                head[HISTORY] = self._whole_history()
            return head
        return self._delta(head, log)

    def encode(self, state: State, seat: int) -> bytes:
        """``message_body`` as JSON text."""
        return _dumps(self.message_body(state, seat))

    def commit(self) -> None:
        """The observation last given reached the bot: later deltas build on it."""
        if self._pending is not None:
            self._sent, self._sent_log, self._sent_count = self._pending
            self._pending = None

    def _catch_up(self, log: EventLog) -> None:
        """Encode the entries of ``log`` not encoded yet (all of them if it is a new list)."""
        events = log.events
        starts = self._starts
        if events is not self._log:
            self._log = events
            self._events = bytearray(b"[]")
            starts = self._starts = []
        elif len(events) == len(starts):
            return
        self._history = None
        encoded = self._events
        to_json = log.to_json
        for event in events[len(starts) :]:
            if starts:
                encoded[-1] = 0x2C  # the closing bracket becomes a comma
            else:
                del encoded[-1]
            starts.append(len(encoded))
            encoded += _dumps(to_json(event))
            encoded.append(0x5D)  # ]

    def _whole_history(self) -> Encoded:
        if self._history is None:
            self._history = Encoded(bytes(self._events))
        return self._history

    def _delta(self, head: JSON, log: EventLog | None) -> JSON:
        if log is not None:
            del head[HISTORY]  # kept encoded apart
        sent = self._sent
        old_of = sent.get
        now = {key: _dumps(value) for key, value in head.items()}
        changed: JSON = {}
        grown: JSON = {}
        for key in [key for key, new in now.items() if old_of(key) != new]:
            new, old = now[key], old_of(key)
            if old is not None and len(new) > len(old) > 2 and _grown_list(old, new):
                grown[key] = Encoded(b"[" + new[len(old) :])
            else:
                changed[key] = Encoded(new)
        count = 0
        if log is not None:
            count = len(self._starts)
            self._history_delta(changed, grown, count)
        self._pending = (now, self._log if log is not None else None, count)
        delta: JSON = {}
        if changed:
            delta["set"] = changed
        if grown:
            delta["append"] = grown
        if not now.keys() >= sent.keys():
            delta["drop"] = [key for key in sent if key not in now]
        return delta

    def _history_delta(self, changed: JSON, grown: JSON, count: int) -> None:
        """Add the history's change since the last delivered observation to the delta."""
        if self._sent_log is not self._log:  # the first observation, or a new deal's list
            changed[HISTORY] = self._whole_history()
        elif count > self._sent_count:
            with memoryview(self._events) as encoded:
                grown[HISTORY] = Encoded(b"[" + encoded[self._starts[self._sent_count] :])


def _grown_list(old: bytes, new: bytes) -> bool:
    """Whether ``new`` encodes the non-empty list ``old`` encodes with items added at its end.

    ``old`` without its closing bracket ends with a whole item of the list; if ``new`` goes on
    from there with a comma, its first items are exactly ``old``'s.
    """
    end = len(old) - 1
    return old[0] == 0x5B and new[end] == 0x2C and new.startswith(old[:end])  # [ and ,
