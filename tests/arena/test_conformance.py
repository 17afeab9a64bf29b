"""The generic conformance test: every registered game and variant obeys the game API.

Thousands of playouts in total, mixing random and greedy agents over short matches. Every match
must terminate; only legal actions may be accepted (an illegal one raises ``IllegalActionError``
and leaves the state untouched); every legal action survives a JSON round trip; the seed decides
everything; a recorded replay verifies; cards are neither duplicated nor, where the game's zones
are known, lost; and no observation shows a card that another seat keeps private.

The expensive per-step checks run on the first ``DEEP`` matches of each case; the rest check the
cheap invariants only, to keep the whole test near a minute on two cores.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from arena.agents import Agent, greedy_agent, random_agent
from arena.games.base import JSON, TERMINAL, Game, IllegalActionError, State
from arena.replay import ReplayRecorder, SeatInfo, dumps_replay, loads_replay, verify
from tests.golden import Case, case_id, game_cases, make_case, require_spec

MATCHES = 120
"""Matches per (game, variant): with 21 cases that is over two thousand playouts."""
DEEP = 12
"""Matches per case that get the per-step checks."""
RANDOM_TURN_CAP = 300
"""``turn_cap`` for cases whose random play loops long (games without it ignore the value)."""
MAX_ACTIONS = 200_000
"""A match longer than this is taken as one that never ends."""

ZONES: dict[str, tuple[str, ...]] = {
    "svoi-kozyri": ("pile",),
    "challenge": ("pile",),
    "svoi-kozyri-tricks": ("trick", "tricks"),
    "kozyr-boys": ("trick", "tricks", "discards"),
}
"""Keys of ``full_view()`` that, with the hands, hold every card of a deal (so their total never
changes during a deal). Games not listed here are only checked for duplicated cards."""

PUBLIC_CONSTANTS: dict[str, tuple[str, ...]] = {"kozyr-boys": ("bowers",)}
"""Observation keys that name cards as rules (which cards are bowers), not where cards are."""

PAST_DEAL_KEYS = ("previous_history", "last_deal", "earlier_rounds", "deal_results")
"""Observation keys holding only deals or rounds already over: their cards have been dealt
again since, so a card named there says nothing about who holds it now."""

MALFORMED: list[Any] = [
    None,
    "pick_up",
    [],
    {},
    {"type": 7},
    {"type": "no-such-action"},
    {"type": "lead", "card": "ZZ"},
    {"type": "play", "card": 5},
    {"type": "raise", "amount": "lots"},
]
"""Wire actions no game can accept."""

CARD = re.compile(r"^[5-9TJQKA][SHDC]$")
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])([5-9TJQKA][SHDC])(?![A-Za-z0-9])")
"""A card anywhere in a dumped observation, also inside longer strings such as "TH 9C"."""


def cards_in(value: Any) -> list[str]:
    """Every wire-form card anywhere inside a JSON value."""
    if isinstance(value, str):
        return [value] if CARD.match(value) else []
    if isinstance(value, list):
        return [c for item in value for c in cards_in(item)]
    if isinstance(value, dict):
        return [c for item in value.values() for c in cards_in(item)]
    return []


def agents_for(index: int, players: int) -> list[Agent]:
    """Random, greedy, or a mix, in turn: random play explores, greedy play finishes deals."""
    if index % 3 == 0:
        return [random_agent] * players
    if index % 3 == 1:
        return [greedy_agent] * players
    return [random_agent if (seat + index) % 2 else greedy_agent for seat in range(players)]


class Checker:
    """The per-match invariants of one game."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.zones = ZONES.get(game.name)
        self.unchecked = (*PUBLIC_CONSTANTS.get(game.name, ()), *PAST_DEAL_KEYS)
        self.deal_sizes: dict[int, int] = {}

    def legal(self, state: State) -> list[int]:
        seat, legal = state.current_player(), state.legal_actions()
        assert 0 <= seat < self.game.players, f"bad seat to move {seat}"
        assert legal, "a live state must have legal actions"
        assert legal == sorted(set(legal)), "legal actions must be ascending and distinct"
        assert state.default_action() in legal, "the default action must be legal"
        return legal

    def json_round_trip(self, state: State, legal: list[int]) -> None:
        for action in legal:
            wire = orjson.loads(orjson.dumps(state.action_to_json(action)))
            assert isinstance(wire.get("type"), str), f"action {wire} lacks a type"
            assert state.action_from_json(wire) == action, f"{wire} does not parse back"

    def illegal_rejected(self, state: State, legal: list[int]) -> None:
        before = orjson.dumps(state.full_view(), option=orjson.OPT_SORT_KEYS)
        seat = state.current_player()
        gaps = [a for a in range(min(legal), max(legal)) if a not in legal][:2]
        for action in [-1, max(legal) + 1, *gaps]:
            with pytest.raises(IllegalActionError):
                state.apply_action(action)
        assert orjson.dumps(state.full_view(), option=orjson.OPT_SORT_KEYS) == before
        assert state.current_player() == seat and state.legal_actions() == legal

    def malformed_rejected(self, state: State) -> None:
        """Wire actions that cannot be parsed raise ``IllegalActionError``, never anything else."""
        for wire in MALFORMED:
            with pytest.raises(IllegalActionError):
                state.apply_json(wire)

    def privacy(self, state: State) -> None:
        players = self.game.players
        private = [state.private_cards(seat) for seat in range(players)]
        for viewer in [None, *range(players)]:
            hidden = set().union(*(p for s, p in enumerate(private) if s != viewer))
            if not hidden:
                continue
            view = {k: v for k, v in state.observation(viewer).items() if k not in self.unchecked}
            leaks = hidden.intersection(CARD_TOKEN.findall(orjson.dumps(view).decode()))
            who = "the spectator" if viewer is None else f"seat {viewer}"
            assert not leaks, f"{who} sees another seat's private cards {sorted(leaks)}"

    def conservation(self, state: State) -> None:
        view = state.full_view()
        hands = view.get("hands")
        if not isinstance(hands, list):
            return
        held = [card for hand in hands for card in hand]
        assert all(CARD.match(c) for c in held), f"bad card in hands {hands}"
        placed = held + [c for key in self.zones or () for c in cards_in(view.get(key))]
        assert len(placed) == len(set(placed)), f"a card is in two places: {sorted(placed)}"
        if self.zones is not None and placed:  # no cards yet: the deal waits for a choice
            expected = self.deal_sizes.setdefault(state.deal_index, len(placed))
            assert len(placed) == expected, f"deal {state.deal_index} lost or gained cards"

    def step(self, state: State, deep: bool) -> list[int]:
        legal = self.legal(state)
        if deep:
            self.json_round_trip(state, legal)
            self.illegal_rejected(state, legal)
            self.privacy(state)
            self.conservation(state)
        return legal

    def finished(self, state: State) -> None:
        assert state.current_player() == TERMINAL and state.legal_actions() == []
        result = state.result()
        players = self.game.players
        assert len(result.ranking) == len(result.scores) == players
        assert min(result.ranking) == 1 and max(result.ranking) <= players
        for place in result.ranking:
            better = sum(1 for other in result.ranking if other < place)
            assert place == better + 1, f"ranking {result.ranking} is not a competition ranking"
        orjson.dumps(result.to_json())
        self.privacy(state)
        self.conservation(state)


def play_match(game: Game, seed: int, agents: list[Agent], deep: bool) -> tuple[State, Any]:
    """Play one checked match; return the final state and its replay."""
    state = game.new_state(seed)
    assert state.full_view() == game.new_state(seed).full_view(), "the deal must follow the seed"
    checker = Checker(game)
    if deep:
        checker.malformed_rejected(state)
    seats = [SeatInfo(name=f"s{i}", kind="builtin", version=None) for i in range(game.players)]
    recorder = ReplayRecorder(game.config(), seed, seats)
    rng = random.Random(seed)
    for _ in range(MAX_ACTIONS):
        if state.is_terminal():
            break
        legal = checker.step(state, deep)
        seat, deal = state.current_player(), state.deal_index
        action = agents[seat](state, rng)
        assert action in legal, f"agent chose an illegal action {action}"
        recorder.record(seat, state.action_to_json(action), deal)
        state.apply_action(action)
    else:
        pytest.fail(f"{game} seed {seed} did not end within {MAX_ACTIONS} actions")
    checker.finished(state)
    return state, recorder.finish(state)


def case_games(case: Case) -> Iterator[tuple[int, Game, list[Agent]]]:
    """The matches to play for a case: (index, short game, agents)."""
    short = make_case(case, deals=1, turn_cap=RANDOM_TURN_CAP)
    longer = make_case(case, deals=3)
    for index in range(MATCHES):
        game = longer if index % 3 == 1 else short
        yield index, game, agents_for(index, game.players)


def check_determinism(game: Game, seed: int, agents: list[Agent], replay: Any) -> None:
    again = play_match(game, seed, agents, deep=False)[1]
    assert again["steps"] == replay["steps"] and again["final_hash"] == replay["final_hash"]


@pytest.mark.parametrize("case", game_cases(), ids=case_id)
def test_game_conforms(case: Case) -> None:
    require_spec(case[0])
    for index, game, agents in case_games(case):
        seed = 1000 * index + 17
        deep = index < DEEP
        _, replay = play_match(game, seed, agents, deep)
        if deep or index % 10 == 0:
            assert verify(loads_replay(dumps_replay(replay))) == []
        if index < 3:
            check_determinism(game, seed, agents, replay)


def test_checks_catch_a_leaky_observation(toy: str) -> None:
    from arena.games import make_game

    state = make_game(toy, players=2).new_state(1)
    checker = Checker(state.game)
    checker.privacy(state)
    leaky: JSON = {**state.observation(None), "hands": state.full_view()["hands"]}
    state.observation = lambda seat: leaky  # type: ignore[method-assign]
    with pytest.raises(AssertionError, match="sees another seat's private card"):
        checker.privacy(state)
