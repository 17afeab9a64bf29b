"""A seat whose answers come from outside the referee's process: a person at a table.

The referee treats it as one more kind of seat. At its turn it builds the same request a bot
would get (the seat's own observation, the legal actions, the time left) as a ``Turn`` and
calls the seat's ``ask``, which waits at most ``Turn.wait_s`` seconds for the answer from
wherever it comes (the site, through Redis) and returns the index of the chosen legal action,
or None for no answer in time. No answer, or an index out of range, is handled exactly as a
bot that stops answering or answers wrong: the default action and a strike, and
``max_strikes`` strikes forfeit the seat. Its clock is its own (``move_s``, ``bank_s``): people
get more time than bots.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.render import action_text

JSON = dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """What a remote seat is asked at its turn: exactly what a bot's request carries, plus
    the actions' labels (as ``arena play --human`` prints them) and how long it may take."""

    seat: int
    request_id: int
    step: int
    """How many decisions were applied before this one (the frame the seat looks at)."""
    deal: int
    observation: JSON
    legal_actions: list[Any]
    labels: list[str]
    time_left_ms: int
    move_ms: int
    strikes: int
    max_strikes: int
    wait_s: float
    """The longest this turn may take: the free move time plus the bank left."""

    def to_json(self) -> JSON:
        return {
            "seat": self.seat,
            "request_id": self.request_id,
            "step": self.step,
            "deal": self.deal,
            "observation": self.observation,
            "legal_actions": self.legal_actions,
            "labels": self.labels,
            "time_left_ms": self.time_left_ms,
            "move_ms": self.move_ms,
            "strikes": self.strikes,
            "max_strikes": self.max_strikes,
        }


Ask = Callable[[Turn], int | None]
"""Waits for a remote seat's answer to ``Turn``: a legal action's index, or None (no answer)."""


@dataclass(frozen=True)
class RemoteSeat:
    """A seat played from outside (a person): its name, its clock and how it is asked."""

    name: str
    ask: Ask
    move_s: float = 30.0
    bank_s: float = 300.0


def labels(legal_actions: list[JSON]) -> list[str]:
    """Each legal action as the terminal names it (``beat J♣``)."""
    return [action_text(action).plain for action in legal_actions]
