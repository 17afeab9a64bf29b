"""Starter kit for Kozyri Arena bots in Python (standard library only).

Subclass ``Bot``, implement ``choose`` and call ``run(MyBot())``. The kit speaks protocol v1 for
you: it answers ``hello`` with ``ready``, turns every ``request`` into a call to ``choose`` and
sends the answer, and exits on ``shutdown``. It asks the referee for observations as deltas (only
what changed since the last one, much less to read in a long deal) and rebuilds the whole
observation from them, so ``choose`` sees exactly what the referee would send whole; set
``observations = "full"`` on your bot to be sent every observation whole instead. stdout
belongs to the protocol: log with ``log()``, which writes to stderr. On the platform your bot
is frozen between its turns (threads and child processes too): do all thinking inside
``choose``, and measure time from the request.

    from kozyri_bot import Bot, run

    class First(Bot):
        def choose(self, observation, legal_actions):
            return 0          # an index into legal_actions, or one of its action objects

    run(First())
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

PROTOCOL_VERSION = 1
SUITS = "SHDC"
RANKS = "56789TJQKA"

Card = tuple[int, str]
"""A parsed card: (rank 5..14, suit letter)."""


def log(*parts: Any) -> None:
    """Write a line to stderr (the referee keeps it with the match log and the replay)."""
    print(*parts, file=sys.stderr, flush=True)


def parse_card(text: str) -> Card:
    """``"TH"`` -> ``(10, "H")``; the ace is rank 14."""
    return RANKS.index(text[0]) + 5, text[1]


def rank(card: str) -> int:
    return RANKS.index(card[0]) + 5


def suit(card: str) -> str:
    return card[1]


def beats(card: str, top: str, trump: str | None) -> bool:
    """Does ``card`` beat ``top`` for a player whose own trump suit is ``trump``?

    A higher card of the same suit beats; any card of one's own trump beats a card of another
    suit; a card of one's own trump is beaten only by a higher card of that suit.
    """
    if suit(card) == suit(top):
        return rank(card) > rank(top)
    return trump is not None and suit(card) == trump


def pack(lowest_rank: int = 6) -> list[str]:
    """Every card from ``lowest_rank`` up to the ace, in all four suits (36 cards from 6)."""
    return [r + s for s in SUITS for r in RANKS[lowest_rank - 5 :]]


def next_seat(observation: dict[str, Any]) -> int:
    """The next seat clockwise after yours that is still in play (``active``, if given)."""
    seat, players = observation["seat"], len(observation["hand_counts"])
    active = observation.get("active") or [True] * players
    for step in range(1, players):
        other = (seat + step) % players
        if active[other]:
            return other
    return seat


class Bot:
    """Override ``choose``; the other hooks are optional."""

    name: str | None = None
    """Sent in ``ready``; shown next to the manifest name."""
    observations = "delta"
    """How the referee sends observations: ``delta`` (the kit rebuilds each one) or ``full``."""

    def __init__(self) -> None:
        self.hello: dict[str, Any] = {}
        self.seat = 0
        self.debug: str | None = None
        self.rng = random.Random()
        """Your random numbers: seeded from your seat and the first position you are asked
        about, so the same deal brings the same moves (a repeated match plays the same)."""
        self._seeded = False
        self._observation: dict[str, Any] = {}

    def on_hello(self, hello: dict[str, Any]) -> None:
        """The match starts: game, params, players, your seat, the time limits."""

    def choose(self, observation: dict[str, Any], legal_actions: list[dict[str, Any]]) -> Any:
        """Return an index into ``legal_actions`` or one of its action objects."""
        raise NotImplementedError

    def on_error(self, message: dict[str, Any]) -> None:
        """The referee rejected an answer (timeout, illegal...) and played the default action."""
        log("referee:", message.get("status"), message.get("message"))

    def on_deal_end(self, message: dict[str, Any]) -> None:
        """A deal is over; ``message["observation"]`` is your view right after it."""

    def on_match_end(self, message: dict[str, Any]) -> None:
        """The match is over; ``message["place"]`` is your place (1 is best)."""


def apply_delta(observation: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Bring ``observation`` (the last one received, or ``{}``) up to date with ``delta``, in
    place: keys in ``drop`` go, keys in ``set`` take their new value, lists in ``append`` grow
    by the items given."""
    for key in delta.get("drop", ()):
        observation.pop(key, None)
    observation.update(delta.get("set", {}))
    for key, items in delta.get("append", {}).items():
        observation[key].extend(items)
    return observation


def _observation(bot: Bot, message: dict[str, Any]) -> dict[str, Any]:
    """The whole observation a ``request`` or ``deal_end`` carries, whole or as a delta.

    The bot gets a copy (its top-level lists and objects too), so changing it in ``choose``
    cannot spoil the kit's own copy, which the next delta builds on.
    """
    if "delta" in message:
        apply_delta(bot._observation, message["delta"])
    else:
        bot._observation = message["observation"]
    return {
        key: value.copy() if isinstance(value, (list, dict)) else value
        for key, value in bot._observation.items()
    }


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _answer(bot: Bot, request: dict[str, Any]) -> dict[str, Any]:
    bot.debug = None
    observation = request["observation"] = _observation(bot, request)
    if not bot._seeded:
        bot.rng.seed(json.dumps([bot.seat, observation], sort_keys=True))
        bot._seeded = True
    choice = bot.choose(observation, request["legal_actions"])
    reply: dict[str, Any] = {"type": "action", "id": request["id"]}
    if isinstance(choice, int) and not isinstance(choice, bool):
        reply["index"] = choice
    else:
        reply["action"] = choice
    if bot.debug:
        reply["debug"] = str(bot.debug)
    return reply


def handle(bot: Bot, message: dict[str, Any]) -> bool:
    """React to one referee message; False when the bot should exit."""
    kind = message.get("type")
    if kind == "hello":
        bot.hello, bot.seat = message, message["seat"]
        bot.on_hello(message)
        ready: dict[str, Any] = {"type": "ready", "protocol": PROTOCOL_VERSION}
        if bot.name:
            ready["name"] = bot.name
        if bot.observations != "full":
            ready["observations"] = bot.observations
        _send(ready)
    elif kind == "request":
        _send(_answer(bot, message))
    elif kind == "error":
        bot.on_error(message)
    elif kind == "deal_end":
        message["observation"] = _observation(bot, message)
        bot.on_deal_end(message)
    elif kind == "match_end":
        bot.on_match_end(message)
    elif kind == "shutdown":
        return False
    return True


def run(bot: Bot) -> None:
    """The protocol loop: read one JSON line at a time from stdin until shutdown or EOF."""
    for line in sys.stdin:
        if line.strip() and not handle(bot, json.loads(line)):
            break
