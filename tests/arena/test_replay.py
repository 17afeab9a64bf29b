"""Replay format v1: recording, files, re-simulation, verification and forfeits."""

from __future__ import annotations

import copy
import gzip
from pathlib import Path

import orjson
import pytest

from arena.agents import greedy_agent, random_agent
from arena.games import make_game
from arena.games import names as registered_names
from arena.games.base import ConfigError, Game, Result
from arena.replay import (
    FORMAT,
    HISTORY_KEYS,
    Replay,
    ReplayError,
    ReplayRecorder,
    SeatInfo,
    agent_rng,
    apply_forfeits,
    frames,
    observation_at,
    read_replay,
    record_builtin_match,
    state_at,
    state_hash,
    verify,
    write_replay,
)


def play(game_name: str, seed: int = 7, players: int = 3, deals: int = 2) -> Replay:
    game = make_game(game_name, players=players, params={"deals": deals})
    agents = [greedy_agent, random_agent, random_agent][:players]
    names = ["greedy", "random", "random"][:players]
    return record_builtin_match(game.new_state(seed), agents, names, agent_rng(seed))


@pytest.fixture
def replay(toy: str) -> Replay:
    return play(toy)


def test_recorded_replay_has_the_v1_shape(replay: Replay) -> None:
    assert replay["format"] == FORMAT and replay["version"] == 1
    assert replay["game"]["game"] == "toy-high-card" and replay["game"]["players"] == 3
    assert len(replay["steps"]) == 3 * 3 * 2
    assert [s["seat"] for s in replay["steps"][:4]] == [0, 1, 2, 0]
    assert {s["deal"] for s in replay["steps"]} == {0, 1}
    assert replay["outcome"]["forfeited"] == [False] * 3
    assert sorted(replay["result"]["ranking"])[0] == 1
    assert len(replay["final_hash"]) == 64


def test_round_trip_through_a_file_is_exact(replay: Replay, tmp_path: Path) -> None:
    for name in ("match.json", "match.json.gz"):
        path = tmp_path / name
        write_replay(path, replay)
        assert read_replay(path) == replay
        assert verify(read_replay(path)) == []
    assert gzip.decompress((tmp_path / "match.json.gz").read_bytes())[:1] == b"{"
    assert {p.name for p in tmp_path.iterdir()} == {"match.json", "match.json.gz"}


def test_same_seed_same_replay(toy: str) -> None:
    a, b = play(toy, seed=3), play(toy, seed=3)
    assert [s["action"] for s in a["steps"]] == [s["action"] for s in b["steps"]]
    assert a["final_hash"] == b["final_hash"]
    assert play(toy, seed=4)["final_hash"] != a["final_hash"]


def test_read_rejects_wrong_format_and_version(replay: Replay, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(b"{not json")
    with pytest.raises(ReplayError, match="not JSON"):
        read_replay(path)
    path.write_bytes(orjson.dumps({"format": "something-else", "version": 1}))
    with pytest.raises(ReplayError, match="not a kozyri-arena-replay"):
        read_replay(path)
    path.write_bytes(orjson.dumps({**replay, "version": 2}))
    with pytest.raises(ReplayError, match="unsupported replay version 2"):
        read_replay(path)
    broken = {k: v for k, v in replay.items() if k != "final_hash"}
    path.write_bytes(orjson.dumps(broken))
    with pytest.raises(ReplayError, match="lacks final_hash"):
        read_replay(path)


def test_verify_rejects_a_changed_action(replay: Replay) -> None:
    state = state_at(replay, 4)
    held = state.private_cards(state.current_player())
    not_held = next(c for c in ("AS", "KS", "QS", "JS") if c not in held)
    for action in ({"type": "lay", "card": not_held}, {"type": "lay", "card": "ZZ"}, {}):
        bad = copy.deepcopy(replay)
        bad["steps"][4]["action"] = action
        problems = verify(bad)
        assert len(problems) == 1 and problems[0].startswith("step 4: illegal action")


def test_verify_rejects_a_legal_but_different_action(replay: Replay) -> None:
    state = state_at(replay, 0)
    first, other = state.legal_actions()[:2]
    recorded = state.action_from_json(replay["steps"][0]["action"])
    swapped = other if recorded == first else first
    bad = copy.deepcopy(replay)
    bad["steps"][0]["action"] = state.action_to_json(swapped)
    problems = verify(bad)
    assert problems, "a different first card must change the play or the final position"


def test_verify_rejects_changed_result_seed_and_seat(replay: Replay) -> None:
    bad = copy.deepcopy(replay)
    bad["result"]["scores"][0] += 1
    assert any(p.startswith("result differs") for p in verify(bad))
    bad = copy.deepcopy(replay)
    bad["seed"] += 1
    assert verify(bad) and verify(bad)[0].startswith("step")
    bad = copy.deepcopy(replay)
    bad["steps"][1]["seat"] = 2
    assert verify(bad) == ["step 1: recorded for seat 2 but seat 1 was to move"]
    bad = copy.deepcopy(replay)
    bad["final_hash"] = "0" * 64
    assert [p[:18] for p in verify(bad)] == ["final hash differs"]


def test_verify_rejects_truncated_and_extended_replays(replay: Replay) -> None:
    short = copy.deepcopy(replay)
    short["steps"].pop()
    assert verify(short) == [
        f"the match is not over after {len(short['steps'])} steps and nobody forfeited"
    ]
    long = copy.deepcopy(replay)
    long["steps"].append(long["steps"][-1])
    assert verify(long) == [f"step {len(replay['steps'])}: the match was already over"]


def test_verify_reports_an_unknown_game(replay: Replay) -> None:
    bad = copy.deepcopy(replay)
    bad["game"]["game"] = "no-such-game"
    assert verify(bad)[0].startswith("cannot rebuild the game")


def test_apply_forfeits_ranks_forfeited_seats_last() -> None:
    result = Result(ranking=(2, 1, 4, 2), scores=(5.0, 9.0, 0.0, 5.0))
    assert apply_forfeits(result, [False] * 4) is result
    out = apply_forfeits(result, [False, True, False, False])
    assert out.ranking == (1, 4, 3, 1)
    assert out.scores == result.scores and out.detail["forfeited"] == [1]
    assert apply_forfeits(result, [True, False, False, True]).ranking == (3, 1, 2, 3)
    assert apply_forfeits(result, [True] * 4).ranking == (1, 1, 1, 1)


def test_forfeit_is_recorded_and_verified(toy: str) -> None:
    game = make_game(toy, players=3, params={"deals": 1})
    state = game.new_state(1)
    seats = [SeatInfo(name=f"b{i}", kind="bot", version="1") for i in range(3)]
    recorder = ReplayRecorder(game.config(), 1, seats)
    while not state.is_terminal():
        seat, action = state.current_player(), state.default_action()
        status = "timeout" if seat == 0 else "ok"
        recorder.record(seat, state.action_to_json(action), state.deal_index, None, status)
        state.apply_action(action)
    outcome = {
        "status": ["timeout", "ok", "ok"],
        "forfeited": [True, False, False],
        "strikes": [3, 0, 0],
    }
    replay = recorder.finish(state, outcome)  # type: ignore[arg-type]
    assert replay["result"]["ranking"][0] == 3
    assert verify(replay) == []
    tampered = copy.deepcopy(replay)
    tampered["outcome"]["forfeited"] = [False, False, False]
    assert verify(tampered) and verify(tampered)[0].startswith("result differs")


def test_abandoned_match_with_forfeit_verifies(toy: str) -> None:
    game = make_game(toy, players=2, params={"deals": 1})
    state = game.new_state(5)
    seats = [
        SeatInfo(name="a", kind="bot", version=None),
        SeatInfo(name="b", kind="bot", version=None),
    ]
    recorder = ReplayRecorder(game.config(), 5, seats)
    action = state.legal_actions()[0]
    recorder.record(0, state.action_to_json(action), 0, 3.5, "ok", "thinking", None)
    state.apply_action(action)
    outcome = {"status": ["ok", "crash"], "forfeited": [False, True], "strikes": [0, 1]}
    replay = recorder.finish(state, outcome)  # type: ignore[arg-type]
    assert replay["result"]["ranking"] == [1, 2]
    assert verify(replay) == []


def test_frames_show_each_seat_only_its_own_hand(replay: Replay) -> None:
    shown = frames(replay, history=True)
    assert len(shown) == len(replay["steps"]) + 1
    assert shown[0]["event"] is None and shown[1]["event"] == replay["steps"][0]
    start = state_at(replay, 0)
    for seat, obs in enumerate(shown[0]["seats"]):
        assert obs["hand"] == sorted(start.private_cards(seat), key=obs["hand"].index)
        assert obs == observation_at(replay, 0, seat)
    assert "hand" not in shown[0]["public"] and "hands" not in shown[0]["public"]
    assert shown[0]["spectator"]["hands"] == [o["hand"] for o in shown[0]["seats"]]
    last = state_at(replay, len(replay["steps"]))
    assert state_hash(last) == replay["final_hash"]
    assert shown[-1]["spectator"] == orjson.loads(orjson.dumps(last.full_view()))


def test_frames_leave_out_history_unless_asked(replay: Replay) -> None:
    compact = frames(replay)
    full = frames(replay, history=True)
    assert all("history" in view for view in full[-1]["seats"])
    for frame in compact:
        for view in (frame["spectator"], frame["public"], *frame["seats"]):
            assert not set(HISTORY_KEYS) & set(view)
    trimmed = {k: v for k, v in full[-1]["seats"][0].items() if k not in HISTORY_KEYS}
    assert compact[-1]["seats"][0] == trimmed


def test_state_at_rejects_out_of_range_steps(replay: Replay) -> None:
    with pytest.raises(IndexError):
        state_at(replay, len(replay["steps"]) + 1)
    with pytest.raises(IndexError):
        state_at(replay, -1)


def test_untimed_recording_is_byte_stable(toy: str) -> None:
    game = make_game(toy, players=2)
    first, second = (
        record_builtin_match(
            game.new_state(9), [greedy_agent] * 2, ["g", "g"], agent_rng(9), timed=False
        )
        for _ in range(2)
    )
    assert orjson.dumps(first) == orjson.dumps(second)
    assert all(step["time_ms"] is None for step in first["steps"])


def test_recorded_and_golden_replays_match_the_documented_schema(replay: Replay) -> None:
    from jsonschema import Draft202012Validator

    root = Path(__file__).resolve().parents[2]
    schema = orjson.loads((root / "docs" / "schemas" / "replay.json").read_bytes())
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    validator.validate(orjson.loads(orjson.dumps(replay)))
    for path in sorted((root / "tests" / "golden").glob("*.json")):
        validator.validate(orjson.loads(path.read_bytes()))
    broken = orjson.loads(orjson.dumps(replay))
    broken["steps"][0]["status"] = "sleepy"
    assert not validator.is_valid(broken)


def test_frames_of_a_match_in_progress_need_only_game_seed_and_steps(replay: Replay) -> None:
    partial = {"game": replay["game"], "seed": replay["seed"], "steps": replay["steps"][:3]}
    shown = frames(partial)  # type: ignore[arg-type]
    assert [f["index"] for f in shown] == [0, 1, 2, 3]
    assert shown[3]["public"]["to_move"] == replay["steps"][3]["seat"]


def test_frames_come_in_windows(replay: Replay) -> None:
    everything = frames(replay)
    assert frames(replay, start=2, stop=5) == everything[2:5]
    assert frames(replay, start=len(everything) - 1) == everything[-1:]
    assert frames(replay, stop=1) == everything[:1]


@pytest.mark.parametrize("game_name", registered_names())
@pytest.mark.parametrize("seed", [3, 11])
def test_compact_frames_are_the_whole_views_less_their_history(game_name: str, seed: int) -> None:
    """The viewer's frames build each view without its history (``observation_parts``,
    ``full_view_parts``): at every step, for the spectator, the public and every seat, exactly
    the whole view with ``HISTORY_KEYS`` taken out."""
    players = min(make_game(game_name).spec.max_players, 4)
    game = short_game(game_name, players)
    agents = [random_agent] + [greedy_agent] * (game.players - 1)
    replay = record_builtin_match(
        game.new_state(seed), agents, ["p"] * game.players, agent_rng(seed)
    )
    compact = frames(replay)
    whole = frames(replay, history=True)
    assert len(compact) == len(whole) == len(replay["steps"]) + 1
    for lean, full in zip(compact, whole, strict=True):
        for key in ("spectator", "public"):
            assert lean[key] == {k: v for k, v in full[key].items() if k not in HISTORY_KEYS}
        for lean_seat, full_seat in zip(lean["seats"], full["seats"], strict=True):
            assert lean_seat == {k: v for k, v in full_seat.items() if k not in HISTORY_KEYS}


def short_game(game_name: str, players: int) -> Game:
    """The game with as few deals as it allows, where it counts deals."""
    for params in ({"deals": 1}, {"deals": 2}, {}):
        try:
            return make_game(game_name, players=players, params=params)
        except ConfigError:
            continue
    raise AssertionError(f"{game_name} cannot be made for {players} players")
