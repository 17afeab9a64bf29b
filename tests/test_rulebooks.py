"""The rulebooks in ``seeds/`` are all a bot author reads: they must name every parameter and
variant the engine has, share one structure, and show observations the engine really sends."""

from __future__ import annotations

import random
import re
from pathlib import Path

import orjson
import pytest

from arena.games import game_class, names
from arena.games.base import GameSpec

ROOT = Path(__file__).resolve().parents[1]

SECTIONS = (
    "The match",
    "Termination",
    "Parameters and variants",
    "What a bot sees",
    "Actions",
    "Time limits and strikes",
    "Worked example",
)
"""The sections every rulebook ends with, in this order, after its own sections on the rules."""

PARAM_ROW = re.compile(r"^\| `([a-z_]+)` \|", re.MULTILINE)
JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.DOTALL)


def spec_of(game: str) -> GameSpec:
    return game_class(game).spec


def rulebook(game: str) -> str:
    return (ROOT / spec_of(game).rulebook).read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    assert match, f"no section {title!r}"
    return match.group(1)


GAMES = names()


@pytest.mark.parametrize("game", GAMES)
def test_every_parameter_and_variant_is_in_the_rulebook(game: str) -> None:
    spec, text = spec_of(game), rulebook(game)
    table = section(text, "Parameters and variants")
    documented = set(PARAM_ROW.findall(table))
    assert documented == {p.name for p in spec.params}, (
        "the parameter table and the GameSpec differ"
    )
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_]+)` \|.*$", table, re.M)}
    for param in spec.params:
        default = orjson.dumps(param.default).decode().replace(",", ", ")
        assert default in rows[param.name], f"{param.name}: default {default} not in its row"
        for bound in (param.minimum, param.maximum):
            assert bound is None or str(bound) in rows[param.name], f"{param.name}: bound {bound}"
    for variant in spec.variants:
        assert f"`{variant}`" in table, f"variant {variant!r} is not described"


@pytest.mark.parametrize("game", GAMES)
def test_rulebooks_share_one_structure(game: str) -> None:
    text = rulebook(game)
    titles = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert tuple(titles[-len(SECTIONS) :]) == SECTIONS
    assert "**Default action" in section(text, "Actions")
    assert "docs/protocol.md" in section(text, "Time limits and strikes")


def observed_key_sets(game: str, seed: int = 3) -> list[frozenset[str]]:
    """The key sets of the observations sent to the seat to move over a random match."""
    state = game_class(game)(**_small_match(game)).new_state(seed)
    rng = random.Random(seed)
    seen: list[frozenset[str]] = []
    while not state.is_terminal():
        keys = frozenset(state.observation(state.current_player()))
        if keys not in seen:
            seen.append(keys)
        state.apply_action(rng.choice(state.legal_actions()))
    return seen


def _small_match(game: str) -> dict[str, object]:
    # Random play makes the beating games' deals run to the turn cap: a low cap keeps them short.
    short = {
        "svara": {"deals": 30},
        "svoi-kozyri": {"deals": 2, "turn_cap": 100},
        "challenge": {"turn_cap": 100},
    }
    return {"params": short.get(game, {})}


@pytest.mark.parametrize("game", GAMES)
def test_example_observation_has_the_engines_keys(game: str) -> None:
    blocks = JSON_BLOCK.findall(section(rulebook(game), "What a bot sees"))
    assert blocks, "no example observation"
    example = orjson.loads(blocks[0])
    assert example["game"] == game
    assert frozenset(example) in observed_key_sets(game), sorted(example)
