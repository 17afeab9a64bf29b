"""The game API every game implements (the shape of OpenSpiel's Game/State/observer).

A ``Game`` is an immutable rules object: the number of players and the resolved parameters. It is
described by a declarative ``GameSpec`` (parameters with defaults and bounds, named variants). A
``State`` is one match in progress: a series of deals played by the same seats. States are mutable
and advance with ``apply_action``; everything random comes from the match seed through
``deal_rng``, so (config, seed, actions) always replays the same match.

Actions are small ints inside the engine (fast to enumerate and compare) and JSON objects on the
wire (``action_to_json`` / ``action_from_json``). Observations are JSON-able dicts holding only
what one seat may know.
"""

from __future__ import annotations

import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

Action = int
JSON = dict[str, Any]

TERMINAL = -1
"""``current_player()`` of a finished match."""


class GameError(Exception):
    """Base class of the engine's errors."""


class ConfigError(GameError):
    """Bad players, parameters or variant for a game."""


class IllegalActionError(GameError):
    """An action that is not legal in the current state, or that cannot be parsed."""


@dataclass(frozen=True)
class Param:
    """One declared game parameter.

    ``kind`` is "int", "bool", "str" or "json" (any JSON value; the game checks it).
    An ``int`` parameter may also accept the words listed in ``choices`` (``"all"``, say).
    """

    name: str
    default: Any
    doc: str
    kind: str = "int"
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[Any, ...] = ()

    def check(self, value: Any) -> Any:
        """Return ``value`` if it fits this parameter, else raise ``ConfigError``."""
        if self.choices and value in self.choices:
            return value
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "str": isinstance(value, str),
            "json": True,
        }[self.kind]
        if self.kind == "str" and self.choices:
            ok = False
        if not ok:
            raise ConfigError(f"parameter {self.name!r} must be {self._wanted()}, got {value!r}")
        if self.kind == "int":
            if self.minimum is not None and value < self.minimum:
                raise ConfigError(f"parameter {self.name!r} must be >= {self.minimum}, got {value}")
            if self.maximum is not None and value > self.maximum:
                raise ConfigError(f"parameter {self.name!r} must be <= {self.maximum}, got {value}")
        return value

    def _wanted(self) -> str:
        """What values fit, in words: "one of 'seat', 'choose'" or "int or 'all'"."""
        words = ", ".join(repr(c) for c in self.choices)
        if self.kind == "str" and self.choices:
            return f"one of {words}"
        return f"{self.kind} or {words}" if self.choices else self.kind

    def describe(self) -> JSON:
        d: JSON = {"name": self.name, "kind": self.kind, "default": self.default, "doc": self.doc}
        if self.minimum is not None:
            d["minimum"] = self.minimum
        if self.maximum is not None:
            d["maximum"] = self.maximum
        if self.choices:
            d["choices"] = list(self.choices)
        return d


@dataclass(frozen=True)
class GameSpec:
    """What a game is called, who can play it, and its parameters and named variants.

    A variant is a named set of parameter values; the key ``"players"`` in a variant fixes the
    table size. ``default_variant`` names the variant used when none is asked for.
    """

    name: str
    title: str
    min_players: int
    max_players: int
    default_players: int
    params: tuple[Param, ...]
    variants: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    default_variant: str | None = None
    rulebook: str = ""

    def players_text(self) -> str:
        """The table sizes in words: "2" or "2-4"."""
        if self.min_players == self.max_players:
            return str(self.min_players)
        return f"{self.min_players}-{self.max_players}"

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params)
        raise ConfigError(f"{self.name} has no parameter {name!r} (parameters: {known})")

    def describe(self) -> JSON:
        return {
            "name": self.name,
            "title": self.title,
            "min_players": self.min_players,
            "max_players": self.max_players,
            "default_players": self.default_players,
            "params": [p.describe() for p in self.params],
            "variants": {k: dict(v) for k, v in self.variants.items()},
            "default_variant": self.default_variant,
            "rulebook": self.rulebook,
        }


@dataclass(frozen=True)
class Result:
    """The outcome of a match: a place per seat (1 is best; tied seats share a place)."""

    ranking: tuple[int, ...]
    scores: tuple[float, ...]
    detail: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {"ranking": list(self.ranking), "scores": list(self.scores), "detail": self.detail}


def ranking_from_scores(scores: Sequence[float], higher_is_better: bool = True) -> tuple[int, ...]:
    """Standard competition ranking: ``[5, 9, 9, 1]`` (higher better) → ``(3, 1, 1, 4)``."""
    sign = -1 if higher_is_better else 1
    keyed = [sign * s for s in scores]
    return tuple(1 + sum(1 for other in keyed if other < mine) for mine in keyed)


def secret_action(action: JSON) -> JSON:
    """What others see of a secret move: its kind only, marked ``"secret": true``."""
    return {"type": action.get("type"), "secret": True}


def deal_rng(seed: int, deal_index: int) -> random.Random:
    """The chance source of one deal: a PRNG seeded by (match seed, deal index).

    Seeding per deal rather than per match means a deal's cards do not depend on how earlier
    deals were played, which is what mirrored deals (same cards, seats rotated) need.
    """
    return random.Random(f"kozyri-arena:{seed}:{deal_index}")


def shuffle(rng: random.Random, items: list[Any]) -> None:
    """Shuffle ``items`` in place into exactly the order ``rng.shuffle(items)`` gives, leaving
    ``rng`` in the same state.

    ``random.Random.shuffle`` draws each index through a method call; here the same draw (the
    same ``getrandbits`` calls, the same rejection of values past the bound) is inlined, with the
    bounds and bit counts of a pack's length worked out once. Dealing takes about half the time.
    Replays depend on the order: a test holds the two equal.
    """
    steps = _SHUFFLE_STEPS.get(len(items))
    if steps is None:
        steps = tuple((i, i + 1, (i + 1).bit_length()) for i in range(len(items) - 1, 0, -1))
        if len(items) <= 64:
            _SHUFFLE_STEPS[len(items)] = steps
    getrandbits = rng.getrandbits
    for i, bound, bits in steps:
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]


_SHUFFLE_STEPS: dict[int, tuple[tuple[int, int, int], ...]] = {}
"""Per list length (packs are short), each step's index, draw bound and bits."""


class Game(ABC):
    """Immutable rules: the table size and resolved parameters. Subclasses set ``spec``."""

    spec: ClassVar[GameSpec]

    def __init__(
        self,
        players: int | None = None,
        params: Mapping[str, Any] | None = None,
        variant: str | None = None,
    ) -> None:
        spec = self.spec
        variant = variant if variant is not None else spec.default_variant
        values: dict[str, Any] = {p.name: p.default for p in spec.params}
        fixed_players: int | None = None
        if variant is not None:
            if variant not in spec.variants:
                names = ", ".join(spec.variants) or "none"
                raise ConfigError(f"{spec.name} has no variant {variant!r} (variants: {names})")
            for key, value in spec.variants[variant].items():
                if key == "players":
                    fixed_players = int(value)
                else:
                    values[key] = value
        for key, value in (params or {}).items():
            values[key] = spec.param(key).check(value)
        n = players if players is not None else (fixed_players or spec.default_players)
        if fixed_players is not None and n != fixed_players:
            raise ConfigError(f"variant {variant!r} of {spec.name} is for {fixed_players} players")
        if not spec.min_players <= n <= spec.max_players:
            raise ConfigError(f"{spec.name} is for {spec.players_text()} players, not {n}")
        self.players: int = n
        self.variant: str | None = variant
        self.params: Mapping[str, Any] = MappingProxyType(values)
        self.validate()

    def validate(self) -> None:
        """Check parameter combinations; raise ``ConfigError``. Override where needed."""

    @property
    def name(self) -> str:
        return self.spec.name

    def config(self) -> JSON:
        """Everything needed to rebuild this game: ``make_game(**config)``."""
        return {
            "game": self.spec.name,
            "players": self.players,
            "variant": self.variant,
            "params": dict(self.params),
        }

    @abstractmethod
    def new_state(self, seed: int) -> State:
        """A new match with the first deal already dealt from ``deal_rng(seed, 0)``."""

    @abstractmethod
    def greedy_action(self, state: State, rng: random.Random) -> Action:
        """The built-in simple heuristic agent's choice in ``state``."""

    @classmethod
    def length_params(cls, deals: int) -> JSON:
        """The parameters that make a match last ``deals`` deals (``arena play --deals``).

        Most games count deals in a ``deals`` parameter; a game that counts its length another
        way overrides this (and raises ``ConfigError`` for a length it cannot play).
        """
        return {"deals": deals}

    def action_seen_by(self, action: JSON, actor: int, viewer: int | None) -> JSON:
        """What ``viewer`` (a seat, or None for a spectator) sees of ``actor``'s ``action``.

        ``action`` is the wire form. Most moves are made in the open (a card to the pile or the
        trick, a bet, a pick-up): the viewer sees the action itself, the default. A game whose
        rulebook makes some moves secret overrides this and gives ``secret_action(action)``
        for them, to every viewer the rulebook keeps in the dark.
        """
        return action

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        # A Game is immutable, so a cloned State shares it (its params proxy cannot be copied).
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config()!r})"


HISTORY = "history"
"""The observation key holding a deal's public events (every game has it)."""


@dataclass(frozen=True, slots=True)
class EventLog:
    """The list behind an observation's ``history``, for encoding it one new event at a time.

    ``events`` is the game's own list: it only grows (entries are appended, never changed or
    removed) until the game replaces it with a new list object (a new deal, a new round).
    ``to_json(event)`` is the wire form of one entry as the observation's ``history`` has it.
    """

    events: Sequence[Any]
    to_json: Callable[[Any], JSON]


class State(ABC):
    """One match in progress. Mutable; ``clone()`` for a copy."""

    game: Game
    seed: int
    fixed_action_json: ClassVar[bool] = False
    """True when ``action_to_json`` depends on the action alone (and the game's parameters),
    never on the position: the referee then encodes each action once per match."""

    @abstractmethod
    def current_player(self) -> int:
        """The seat to act, or ``TERMINAL``."""

    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """The legal actions of the seat to act, ascending; empty when terminal."""

    @abstractmethod
    def apply_action(self, action: Action) -> None:
        """Play ``action`` for the seat to act; raise ``IllegalActionError`` if it is not legal."""

    @abstractmethod
    def is_terminal(self) -> bool:
        """True when the whole match (all deals) is over."""

    @abstractmethod
    def result(self) -> Result:
        """The match result; only valid when terminal."""

    @abstractmethod
    def observation(self, seat: int | None) -> JSON:
        """What ``seat`` may know now, complete enough to play from alone.

        ``seat=None`` is a spectator who sees only public information.
        """

    def observation_parts(self, seat: int | None) -> tuple[JSON, EventLog] | None:
        """``observation(seat)`` with ``None`` in place of its ``history``, and the log that
        ``history`` lists, so the referee encodes each event once; or ``None`` (the default),
        and the referee encodes ``observation(seat)`` whole every time.

        The values in the returned dict must be fresh or never changed afterwards: the referee
        keeps the last one it sent to compare the next with.
        """
        return None

    @abstractmethod
    def full_view(self) -> JSON:
        """Everything, hidden cards included: for finished replays and tests, never for bots."""

    def full_view_parts(self) -> JSON | None:
        """``full_view()`` with ``None`` in place of its ``history`` (the viewer's frames leave
        the history out, and building it costs a step as much as the rest of the view); or
        ``None`` (the default): build ``full_view()`` whole."""
        return None

    @abstractmethod
    def action_to_json(self, action: Action) -> JSON:
        """The wire form of ``action`` (e.g. ``{"type": "lead", "card": "9C"}``)."""

    @abstractmethod
    def action_from_json(self, obj: Any) -> Action:
        """Parse a wire action; raise ``IllegalActionError`` with a clear message if malformed.

        Parsing does not check legality: ``apply_action`` does.
        """

    @abstractmethod
    def default_action(self) -> Action:
        """The rulebook's canonical default, played for a seat that times out or errs."""

    @abstractmethod
    def private_cards(self, seat: int) -> set[str]:
        """Cards (wire form) that ``seat`` holds and no other seat may know about now."""

    @property
    @abstractmethod
    def deal_index(self) -> int:
        """0-based index of the deal in play (or of the last deal, once terminal)."""

    def legal_actions_json(self) -> list[JSON]:
        return [self.action_to_json(a) for a in self.legal_actions()]

    def apply_json(self, obj: Any) -> Action:
        """Parse and apply a wire action; return the engine action."""
        action = self.action_from_json(obj)
        self.apply_action(action)
        return action

    def clone(self) -> State:
        return copy.deepcopy(self)
