"""What a seat sees of another seat's move (``Game.action_seen_by``), game by game.

The rulebooks make almost every move public (a card to the pile or the trick, a bet, a pick-up,
a look); the secret ones are the trump choice of Svoi Kozyri tricks (known to the chooser and,
with teams, the partner) and the Kozyr Boys dealer's discard.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from arena.games import make_game, names
from arena.games.base import Game

SECRET_KINDS = {"svoi-kozyri-tricks": {"choose_trump"}, "kozyr-boys": {"discard"}}


def played_actions(game: Game, seed: int) -> list[tuple[int, dict[str, Any]]]:
    """Every (seat, wire action) of a match of random legal moves."""
    state = game.new_state(seed)
    rng = random.Random(seed)
    moves = []
    while not state.is_terminal():
        seat = state.current_player()
        action = rng.choice(state.legal_actions())
        moves.append((seat, state.action_to_json(action)))
        state.apply_action(action)
    return moves


@pytest.mark.parametrize("name", names())
def test_only_the_rulebooks_secret_moves_are_hidden(name: str) -> None:
    game = make_game(name)
    secret = SECRET_KINDS.get(name, set())
    kinds = set()
    for actor, action in played_actions(game, 3):
        kinds.add(action["type"])
        assert game.action_seen_by(action, actor, actor) == action, "a seat sees its own move"
        for viewer in [None, *range(game.players)]:
            if viewer == actor:
                continue
            seen = game.action_seen_by(action, actor, viewer)
            if action["type"] in secret:
                assert seen == {"type": action["type"], "secret": True}
            else:
                assert seen == action, f"{action} is public in {name}"
    assert secret <= kinds, "the match played every secret kind of move"


def test_a_team_trump_is_known_to_the_partner() -> None:
    game = make_game("svoi-kozyri-tricks", players=4, variant="teams")
    choice = {"type": "choose_trump", "suit": "H"}
    assert game.action_seen_by(choice, 1, 3) == choice
    assert game.action_seen_by(choice, 1, 0) == {"type": "choose_trump", "secret": True}
    assert game.action_seen_by(choice, 1, None) == {"type": "choose_trump", "secret": True}
