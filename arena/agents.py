"""Built-in in-process agents for tests, demos and benchmarks."""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.games.base import Action, State

Agent = Callable[[State, random.Random], Action]


def random_agent(state: State, rng: random.Random) -> Action:
    """A uniformly random legal action."""
    return rng.choice(state.legal_actions())


def greedy_agent(state: State, rng: random.Random) -> Action:
    """The game's own simple heuristic."""
    return state.game.greedy_action(state, rng)


AGENTS: dict[str, Agent] = {"random": random_agent, "greedy": greedy_agent}


def get_agent(name: str) -> Agent:
    try:
        return AGENTS[name]
    except KeyError:
        raise ValueError(f"no built-in agent {name!r}; agents: {', '.join(AGENTS)}") from None


def play_out(state: State, agents: list[Agent], rng: random.Random) -> list[Action]:
    """Play ``state`` to the end with one agent per seat; return the actions played."""
    actions: list[Action] = []
    while not state.is_terminal():
        action = agents[state.current_player()](state, rng)
        state.apply_action(action)
        actions.append(action)
    return actions
