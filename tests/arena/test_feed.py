"""Observations as the referee writes them: whole ones byte for byte as the plain encoding,
deltas that rebuild the whole one exactly, for every game, every seat and every step."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.feed import ObservationFeed
from arena.games import make_game
from arena.games.base import Game
from arena.protocol import DELTA, FULL, DealEnd, Encoded, Request, encode
from tests.arena import toy_game
from tests.golden import Case, case_id, game_cases, make_case

KIT = Path(__file__).resolve().parents[2] / "sample_bots" / "kit"
sys.path.insert(0, str(KIT / "python"))
from kozyri_bot import apply_delta  # noqa: E402

SEEDS = (1, 2)
"""A few seeds per game: every seat is checked at every step, so short matches suffice."""


def moves(game: Game, seed: int) -> Any:
    """A short match's states, after each move (the first before any): half greedy, half random
    play, so deals end in different ways."""
    state = game.new_state(seed)
    rng = random.Random(seed)
    yield state
    while not state.is_terminal():
        legal = state.legal_actions()
        greedy = rng.random() < 0.5
        state.apply_action(game.greedy_action(state, rng) if greedy else rng.choice(legal))
        yield state


def short_game(case: Case) -> Game:
    return make_case(case, deals=2)  # two deals: a new deal starts a new history


@pytest.mark.parametrize("case", game_cases(), ids=case_id)
def test_whole_observations_are_the_plain_encoding_byte_for_byte(case: Case) -> None:
    game = short_game(case)
    for seed in SEEDS:
        feeds = [ObservationFeed(FULL) for _ in range(game.players)]
        for step, state in enumerate(moves(game, seed)):
            for seat, feed in enumerate(feeds):
                body = feed.encode(state, seat)
                feed.commit()
                expected = orjson.dumps(state.observation(seat))
                assert body == expected, f"{case_id(case)} seed {seed} step {step} seat {seat}"


@pytest.mark.parametrize("case", game_cases(), ids=case_id)
def test_deltas_rebuild_the_whole_observation(case: Case) -> None:
    game = short_game(case)
    for seed in SEEDS:
        lost = random.Random(seed)
        feeds = [ObservationFeed(DELTA) for _ in range(game.players)]
        views: list[dict[str, Any]] = [{} for _ in range(game.players)]
        for step, state in enumerate(moves(game, seed)):
            for seat, feed in enumerate(feeds):
                delta = orjson.loads(feed.encode(state, seat))
                if step and lost.random() < 0.05:
                    continue  # never delivered: the next delta must not build on it
                feed.commit()
                apply_delta(views[seat], delta)
                where = f"{case_id(case)} seed {seed} step {step} seat {seat}"
                assert views[seat] == state.observation(seat), where
                assert orjson.dumps(views[seat], option=orjson.OPT_SORT_KEYS) == orjson.dumps(
                    state.observation(seat), option=orjson.OPT_SORT_KEYS
                ), where  # the same JSON, not only equal in Python (1 == True there)


def test_a_delta_carries_only_what_changed() -> None:
    game = make_game("svoi-kozyri", players=3)
    state = game.new_state(7)
    feed = ObservationFeed(DELTA)
    first = orjson.loads(feed.encode(state, 0))
    feed.commit()
    assert set(first) == {"set"} and first["set"] == state.observation(0)
    assert orjson.loads(feed.encode(state, 0)) == {}  # nothing happened since
    feed.commit()
    state.apply_action(state.legal_actions()[0])
    delta = orjson.loads(feed.encode(state, 0))
    assert delta["append"] == {"history": state.observation(0)["history"][-1:]}
    assert "history" not in delta["set"] and "game" not in delta["set"]
    assert len(orjson.dumps(delta)) < len(orjson.dumps(state.observation(0))) / 2


def test_a_game_without_split_observations_is_encoded_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    toy_game.register(monkeypatch)
    game = make_game(toy_game.NAME, players=2)
    full, delta = ObservationFeed(FULL), ObservationFeed(DELTA)
    view: dict[str, Any] = {}
    for state in moves(game, 3):
        assert state.observation_parts(0) is None
        assert full.encode(state, 0) == orjson.dumps(state.observation(0))
        apply_delta(view, orjson.loads(delta.encode(state, 0)))
        delta.commit()
        assert view == state.observation(0)


def test_messages_with_an_encoded_observation_are_the_same_lines() -> None:
    state = make_game("challenge").new_state(4)
    obs = state.observation(1)
    body = Encoded(orjson.dumps(obs))
    legal = state.legal_actions_json()
    whole = encode(Request(3, 0, obs, legal, 900, 100))
    assert encode(Request(3, 0, body, legal, 900, 100)) == whole
    assert encode(DealEnd(0, body)) == encode(DealEnd(0, obs))
    line = orjson.loads(encode(Request(3, 0, Encoded(b"{}"), legal, 900, 100, delta=True)))
    assert list(line) == ["type", "id", "deal", "delta", "legal_actions", "time_left_ms", "move_ms"]
    assert orjson.loads(encode(DealEnd(0, Encoded(b"{}"), delta=True)))["delta"] == {}


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown observation mode 'xml'"):
        ObservationFeed("xml")


JS_REBUILD = """
const { applyDelta } = require(process.argv[1]);
const lines = require("fs").readFileSync(0, "utf8").split("\\n").filter(Boolean);
const views = [{}, {}];
for (const line of lines) {
  const message = JSON.parse(line);
  applyDelta(views[message.seat], message.delta);
  process.stdout.write(JSON.stringify(views[message.seat]) + "\\n");
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("case", [("svoi-kozyri", None), ("svara", None)], ids=case_id)
def test_the_javascript_kit_rebuilds_the_whole_observation(case: Case) -> None:
    game = short_game(case)
    feeds = [ObservationFeed(DELTA) for _ in range(game.players)]
    expected, lines = [], []
    for state in moves(game, 5):
        for seat, feed in enumerate(feeds[:2]):
            lines.append(b'{"seat":%d,"delta":%s}' % (seat, feed.encode(state, seat)))
            feed.commit()
            expected.append(state.observation(seat))
    script = str(KIT / "js" / "kozyri_bot.js")
    out = subprocess.run(
        ["node", "-e", JS_REBUILD, script],
        input=b"\n".join(lines),
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    rebuilt = [json.loads(line) for line in out.splitlines()]
    assert rebuilt == expected
