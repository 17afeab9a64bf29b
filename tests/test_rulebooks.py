"""The rulebooks in ``seeds/`` are all a bot author reads: they must name every parameter and
variant the engine has, share one structure, and show observations the engine really sends.

Each rulebook's example observation is generated from a real match named in a marker comment;
after a deliberate change to what bots see, ``python -m tests.test_rulebooks`` rewrites them."""

from __future__ import annotations

import random
import re
from pathlib import Path

import orjson
import pytest

from arena.games import game_class, make_game, names
from arena.games.base import JSON, GameSpec

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

EXAMPLE = re.compile(
    r"<!-- example: (?P<spec>\{.*?\}) -->\n```json\n(?P<obs>.*?)```\n\n"
    r"Its legal actions: `(?P<legal>.*?)`\.",
    re.DOTALL,
)
"""An example observation: how to reach it (a marker), the observation and its legal actions."""
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
        described = rows[param.name].split("|")[
            3
        ]  # the bounds are told in the words, not the default
        for bound in (param.minimum, param.maximum):
            told = bound is None or re.search(rf"(?<![\d.]){bound}(?![\d.])", described)
            assert told, f"{param.name}: bound {bound} not in {described.strip()!r}"
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


# ----- example observations, generated from the engine ----------------------------------------


def example_state(game: str, spec: JSON) -> tuple[JSON, list[JSON]]:
    """The observation and legal actions of the seat to move in a match after the wire actions
    ``spec["moves"]`` (if any), then ``spec["actions"]`` greedy ones (``spec`` also names
    ``players``, ``seed`` and optionally ``variant``)."""
    state = make_game(game, players=spec["players"], variant=spec.get("variant")).new_state(
        spec["seed"]
    )
    for move in spec.get("moves", []):
        state.apply_action(state.action_from_json(move))
    rng = random.Random(spec["seed"])
    for _ in range(spec.get("actions", 0)):
        state.apply_action(state.game.greedy_action(state, rng))
    seat = state.current_player()
    return state.observation(seat), [state.action_to_json(a) for a in state.legal_actions()]


def compact(value: object) -> str:
    return orjson.dumps(value).decode().replace('":', '": ').replace(",", ", ")


def format_observation(obs: JSON) -> str:
    """One key per line; lists of objects or lists one item per line, to keep examples readable."""
    lines = []
    for key, value in obs.items():
        if isinstance(value, list) and value and all(isinstance(v, dict | list) for v in value):
            inner = ",\n   ".join(compact(v) for v in value)
            lines.append(f'"{key}": [\n   {inner}]')
        else:
            lines.append(f'"{key}": {compact(value)}')
    return "{" + ",\n ".join(lines) + "}\n"


def render_example(game: str, spec_text: str) -> str:
    obs, legal = example_state(game, orjson.loads(spec_text))
    return (
        f"<!-- example: {spec_text} -->\n```json\n{format_observation(obs)}```\n\n"
        f"Its legal actions: `{compact(legal)}`."
    )


@pytest.mark.parametrize("game", GAMES)
def test_example_observation_is_the_engines_own(game: str) -> None:
    match = EXAMPLE.search(section(rulebook(game), "What a bot sees"))
    assert match, "no generated example (run: python -m tests.test_rulebooks)"
    obs, legal = example_state(game, orjson.loads(match["spec"]))
    assert orjson.loads(match["obs"]) == obs, "regenerate: python -m tests.test_rulebooks"
    assert orjson.loads(match["legal"]) == legal


def regenerate() -> None:
    """Rewrite every rulebook's example from the engine (after a deliberate change)."""
    for game in GAMES:
        path = ROOT / spec_of(game).rulebook
        text = path.read_text(encoding="utf-8")
        new = EXAMPLE.sub(lambda m, g=game: render_example(g, m["spec"]), text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: example regenerated")


if __name__ == "__main__":
    regenerate()
