"""Golden replays: one greedy match per game and variant, recorded with a fixed seed.

The files ``tests/golden/<game>[-<variant>].json`` catch unintended rule changes: the golden test
re-plays each one and demands the same actions, result and final position. After a deliberate
rule change, regenerate them with ``python -m tests.golden`` (or ``python -m tests.golden GAME``)
and commit the new files with the change.

This module also enumerates the (game, variant) cases that the conformance test runs over.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from arena.agents import greedy_agent
from arena.games import game_class, make_game, names
from arena.games.base import ConfigError, Game, GameSpec
from arena.replay import Replay, agent_rng, record_builtin_match

GOLDEN_DIR = Path(__file__).resolve().parent
GOLDEN_SEED = 20260101

Case = tuple[str, str | None]


def load_spec(name: str) -> GameSpec | None:
    """A registered game's spec, or ``None`` while its module has not landed."""
    try:
        return game_class(name).spec
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("arena.games"):
            raise
        return None


def require_spec(name: str) -> GameSpec:
    """The game's spec; skip the test if its module does not exist yet.

    With ``ARENA_REQUIRE_ALL_GAMES=1`` (set in CI) a missing game is a failure instead.
    """
    spec = load_spec(name)
    if spec is None:
        message = f"game module for {name!r} does not exist yet"
        if os.environ.get("ARENA_REQUIRE_ALL_GAMES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return spec


def variants_of(spec: GameSpec | None) -> list[str | None]:
    """``None`` (the game's default setup) plus every named variant that is not the default."""
    if spec is None:
        return [None]
    return [None, *(v for v in spec.variants if v != spec.default_variant)]


def game_cases() -> list[Case]:
    """Every registered game with every one of its variants."""
    return [(name, variant) for name in names() for variant in variants_of(load_spec(name))]


def case_id(case: Case) -> str:
    """``svoi-kozyri`` or ``svoi-kozyri-classic``: also the golden file's stem."""
    name, variant = case
    return name if variant is None else f"{name}-{variant}"


def golden_path(case: Case) -> Path:
    return GOLDEN_DIR / f"{case_id(case)}.json"


LENGTH_PARAMS = ("deals", "max_deals", "rounds")
"""Parameters that set how many deals a match lasts."""


def short_params(spec: GameSpec, deals: int) -> dict[str, Any]:
    """Parameters that make a match about ``deals`` deals long (within each parameter's bounds)."""
    params: dict[str, Any] = {}
    for param in spec.params:
        if param.name in LENGTH_PARAMS and param.kind == "int":
            low = param.minimum if param.minimum is not None else 1
            high = param.maximum if param.maximum is not None else deals
            params[param.name] = min(max(deals, low), high)
    return params


def make_case(case: Case, deals: int, **extra: Any) -> Game:
    """The game of a case, shortened to about ``deals`` deals, with ``extra`` parameters."""
    name, variant = case
    spec = game_class(name).spec
    known = {p.name for p in spec.params}
    wanted = {k: v for k, v in extra.items() if k in known}
    try:
        return make_game(name, variant=variant, params={**short_params(spec, deals), **wanted})
    except ConfigError:
        # Some games pair their deals (seats swapped), so an odd count may be refused.
        params = {**short_params(spec, deals + 1), **wanted}
        return make_game(name, variant=variant, params=params)


def golden_replay(case: Case) -> Replay:
    """The greedy match of a case (three deals) with the golden seed, recorded without timings."""
    game = make_case(case, deals=3)
    agents = [greedy_agent] * game.players
    state = game.new_state(GOLDEN_SEED)
    seats = ["greedy"] * game.players
    return record_builtin_match(state, agents, seats, agent_rng(GOLDEN_SEED), timed=False)
