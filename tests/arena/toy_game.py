"""A tiny card game for testing engine plumbing (replays, rendering, CLI) on its own.

"High card": each seat is dealt ``hand`` cards from a 24-card pack; in turn each seat lays one card
face up; when hands are empty the seat whose laid cards add up to most ranks scores a point.
A match is ``deals`` deals; most points wins. Register it with ``register(monkeypatch)``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena import cards
from arena.games.base import (
    JSON,
    TERMINAL,
    Action,
    Game,
    GameSpec,
    IllegalActionError,
    Param,
    Result,
    State,
    deal_rng,
    ranking_from_scores,
)

NAME = "toy-high-card"


class HighCard(Game):
    spec = GameSpec(
        name=NAME,
        title="High card (test game)",
        min_players=2,
        max_players=4,
        default_players=2,
        params=(
            Param("deals", 2, "deals in a match", minimum=1, maximum=20),
            Param("hand", 3, "cards per seat", minimum=1, maximum=6),
        ),
        variants={"short": {"deals": 1, "hand": 1}, "duel": {"players": 2, "hand": 2}},
        rulebook="seeds/toy.md",
    )

    def new_state(self, seed: int) -> HighCardState:
        return HighCardState(self, seed)

    def greedy_action(self, state: State, rng: random.Random) -> Action:
        return max(state.legal_actions(), key=cards.rank_of)


class HighCardState(State):
    def __init__(self, game: HighCard, seed: int) -> None:
        self.game = game
        self.seed = seed
        self._deal = 0
        self.points = [0] * game.players
        self.history: list[JSON] = []
        self.finished = False
        self._start_deal()

    def _start_deal(self) -> None:
        pack = cards.pack(24)
        deal_rng(self.seed, self._deal).shuffle(pack)
        n, size = self.game.players, self.game.params["hand"]
        self.hands = [sorted(pack[i * size : (i + 1) * size]) for i in range(n)]
        self.laid: list[list[int]] = [[] for _ in range(n)]
        self.to_move = self._deal % n

    def current_player(self) -> int:
        return TERMINAL if self.is_terminal() else self.to_move

    def legal_actions(self) -> list[Action]:
        return [] if self.is_terminal() else list(self.hands[self.to_move])

    def apply_action(self, action: Action) -> None:
        if action not in self.legal_actions():
            raise IllegalActionError(f"not a legal card: {action!r}")
        seat = self.to_move
        self.hands[seat].remove(action)
        self.laid[seat].append(action)
        self.history.append({"type": "lay", "seat": seat, "card": cards.to_str(action)})
        self.to_move = (seat + 1) % self.game.players
        if not any(self.hands):
            self._end_deal()

    def _end_deal(self) -> None:
        totals = [sum(cards.rank_of(c) for c in laid) for laid in self.laid]
        winner = totals.index(max(totals))
        self.points[winner] += 1
        self.history.append({"type": "deal_won", "seat": winner})
        if self._deal + 1 < self.game.params["deals"]:
            self._deal += 1
            self._start_deal()
        else:
            self.finished = True

    def is_terminal(self) -> bool:
        return self.finished

    def result(self) -> Result:
        return Result(ranking_from_scores(self.points), tuple(float(p) for p in self.points))

    def _public(self) -> JSON:
        return {
            "game": NAME,
            "deal": self._deal,
            "to_move": self.current_player(),
            "hand_counts": [len(h) for h in self.hands],
            "laid": [cards.strs(laid) for laid in self.laid],
            "scores": list(self.points),
            "history": list(self.history),
        }

    def observation(self, seat: int | None) -> JSON:
        view = self._public()
        if seat is not None:
            view["hand"] = cards.strs(self.hands[seat])
        return view

    def full_view(self) -> JSON:
        return {**self._public(), "hands": [cards.strs(h) for h in self.hands]}

    def action_to_json(self, action: Action) -> JSON:
        return {"type": "lay", "card": cards.to_str(action)}

    def action_from_json(self, obj: Any) -> Action:
        if not isinstance(obj, dict) or obj.get("type") != "lay":
            raise IllegalActionError(f"expected a lay action, got {obj!r}")
        try:
            return cards.parse(obj.get("card"))
        except cards.CardError as exc:
            raise IllegalActionError(str(exc)) from None

    def default_action(self) -> Action:
        return self.legal_actions()[0]

    def private_cards(self, seat: int) -> set[str]:
        return set(cards.strs(self.hands[seat]))

    @property
    def deal_index(self) -> int:
        return self._deal


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the toy game known to the registry for one test."""
    from arena import games

    monkeypatch.setitem(games._GAMES, NAME, f"{__name__}:HighCard")
