"""``arena match`` for bot authors: failures explained, conversations logged, matches repeated."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli.main import main
from arena.replay import read_replay

SAMPLES = Path(__file__).resolve().parents[3] / "sample_bots"
GREEDY = str(SAMPLES / "python" / "svoi-kozyri-greedy")
HEURISTIC = str(SAMPLES / "python" / "svoi-kozyri-heuristic")


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def arena_match(*argv: str) -> int:
    return main(["match", *argv, "--sandbox", "none", "--quiet", "--no-build"])


def test_a_crash_is_named_and_its_traceback_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crash = str(SAMPLES / "broken" / "crash-mid-match")
    assert arena_match("svoi-kozyri", crash, GREEDY, "--deals", "1", "--replay",
                       str(tmp_path / "m.json")) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "crash (forfeit): the bot's process ended" in out
    assert "RuntimeError: crash-mid-match: deliberate crash" in out
    assert f"whole stderr: {tmp_path / 'm.seat0.log'}" in out


def test_a_timeout_is_told_apart_from_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    silent = str(SAMPLES / "broken" / "never-answers")
    argv = ["svoi-kozyri", silent, GREEDY, "--deals", "1", "--move-time", "0.05", "--bank", "0"]
    assert arena_match(*argv, "--replay", str(tmp_path / "m.json")) == 0
    out = capsys.readouterr().out
    assert "timeout (forfeit): no answer within the move time" in out
    assert "crash" not in out


def test_seat_log_keeps_the_whole_conversation(tmp_path: Path) -> None:
    replay = tmp_path / "m.json"
    assert arena_match("svoi-kozyri", GREEDY, HEURISTIC, "--deals", "1", "--seat-log", "1",
                       "--replay", str(replay)) == 0  # fmt: skip
    lines = (tmp_path / "m.seat1.wire.log").read_text().splitlines()
    assert lines[0].startswith('-> {"type":"hello"') and '"seat":1' in lines[0]
    assert lines[1].startswith('<- {"type":"ready"')
    assert lines[-1] == '-> {"type":"shutdown"}'
    answers = [line for line in lines if line.startswith('<- {"type":"action"')]
    assert len(answers) == sum(1 for s in read_replay(replay)["steps"] if s["seat"] == 1)
    assert not (tmp_path / "m.seat0.wire.log").exists()


def test_verbose_prints_every_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = tmp_path / "m.json"
    assert arena_match("svoi-kozyri", GREEDY, "builtin:greedy", "--deals", "1", "--verbose",
                       "--replay", str(replay)) == 0  # fmt: skip
    out = capsys.readouterr().out
    steps = read_replay(replay)["steps"]
    assert f"{len(steps):>5} d0 " in out and f"{len(steps) + 1:>5} d0 " not in out


def test_repeat_plays_a_saved_match_again(tmp_path: Path) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert arena_match("svoi-kozyri", GREEDY, HEURISTIC, "builtin:greedy", "--deals", "2",
                       "--param", "pickup_plain=2", "--replay", str(first)) == 0  # fmt: skip
    assert arena_match(GREEDY, HEURISTIC, "builtin:greedy", "--repeat", str(first),
                       "--replay", str(second)) == 0  # fmt: skip
    a, b = read_replay(first), read_replay(second)
    assert (a["game"], a["seed"]) == (b["game"], b["seed"])
    assert a["game"]["params"]["pickup_plain"] == 2 and a["final_hash"] == b["final_hash"]


def test_repeat_of_a_missing_replay_is_refused(tmp_path: Path) -> None:
    assert arena_match(GREEDY, "--repeat", str(tmp_path / "nowhere.json")) == 2
