"""``arena match`` for bot authors: failures explained, conversations logged, matches repeated."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli.main import main
from arena.cli.match import EXIT_FORFEIT, EXIT_REFUSED, EXIT_STRIKES
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
                       str(tmp_path / "m.json")) == EXIT_FORFEIT  # fmt: skip
    out = capsys.readouterr().out
    assert "crash (forfeit): the bot's process ended" in out
    assert "RuntimeError: crash-mid-match: deliberate crash" in out
    assert f"whole stderr: {tmp_path / 'm.seat0.log'}" in out


def test_a_timeout_is_told_apart_from_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    silent = str(SAMPLES / "broken" / "never-answers")
    argv = ["svoi-kozyri", silent, GREEDY, "--deals", "1", "--move-time", "0.05", "--bank", "0"]
    assert arena_match(*argv, "--replay", str(tmp_path / "m.json")) == EXIT_FORFEIT
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


def test_strikes_without_a_forfeit_exit_with_their_own_code(tmp_path: Path) -> None:
    illegal = str(SAMPLES / "broken" / "illegal-actions")
    argv = ["svoi-kozyri", illegal, GREEDY, "--deals", "1", "--max-strikes", "100000"]
    assert arena_match(*argv, "--replay", str(tmp_path / "m.json")) == EXIT_STRIKES


def test_options_may_stand_between_the_bots(tmp_path: Path) -> None:
    replay = tmp_path / "m.json"
    argv = ["match", "svoi-kozyri", GREEDY, "--no-build", "builtin:greedy", "--sandbox", "none",
            "--quiet", "--deals", "1", "--replay", str(replay), HEURISTIC]  # fmt: skip
    assert main(argv) == 0
    assert [seat["name"] for seat in read_replay(replay)["seats"]] == [
        "svoi-kozyri-greedy", "builtin:greedy", "svoi-kozyri-heuristic"
    ]  # fmt: skip


def test_an_existing_replay_file_is_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = tmp_path / "m.json"
    replay.write_text("mine")
    assert arena_match("svoi-kozyri", GREEDY, GREEDY, "--replay", str(replay)) == EXIT_REFUSED
    assert f"{replay} exists" in capsys.readouterr().out and replay.read_text() == "mine"
    argv = ["svoi-kozyri", GREEDY, GREEDY, "--deals", "1", "--replay", str(replay)]
    assert arena_match(*argv, "--overwrite") == 0
    assert read_replay(replay)["seats"]


def test_matches_in_the_same_second_get_their_own_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("time.strftime", lambda _format: "20260101-000000")
    for _ in range(3):
        assert arena_match("svoi-kozyri", GREEDY, GREEDY, "--deals", "1", "--seed", "5") == 0
    names = sorted(p.name for p in (tmp_path / "replays").glob("*.json"))
    assert names == [
        "svoi-kozyri-5-20260101-000000-2.json",
        "svoi-kozyri-5-20260101-000000-3.json",
        "svoi-kozyri-5-20260101-000000.json",
    ]


def test_the_repeat_line_keeps_the_options_that_matter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replay = tmp_path / "m.json"
    argv = ["svoi-kozyri", GREEDY, "builtin:greedy", "--deals", "1", "--move-time", "2.5"]
    assert arena_match(*argv, "--replay", str(replay)) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if "repeat this match" in s)
    again = line.split("repeat this match: ", 1)[1].split()
    assert again[:5] == ["arena", "match", "--repeat", str(replay), GREEDY]
    assert "--sandbox none" in " ".join(again) and "--move-time 2.5" in " ".join(again)
    assert main([*again[1:], "--quiet", "--replay", str(tmp_path / "again.json")]) == 0
    assert read_replay(tmp_path / "again.json")["seed"] == read_replay(replay)["seed"]


def test_a_glob_that_catches_other_games_bots_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bots = sorted(str(p) for p in (SAMPLES / "python").glob("svoi-kozyri-*"))
    assert len(bots) == 5
    assert arena_match("svoi-kozyri", *bots) == EXIT_REFUSED
    out = capsys.readouterr().out
    assert "svoi-kozyri-tricks-heuristic, svoi-kozyri-tricks-random do not list svoi-kozyri" in out


def test_a_bot_that_never_flushes_gets_a_hint_for_its_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unflushed = str(SAMPLES / "broken" / "unflushed")
    argv = ["challenge", unflushed, "builtin:greedy", "--init-time", "1"]
    argv += ["--replay", str(tmp_path / "m.json")]
    assert arena_match(*argv) == EXIT_FORFEIT
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "init_failure (forfeit): no ready after hello (timeout)" in out
    assert "output may still sit in a buffer" in out
    assert 'print(line, flush=True), or run it unbuffered: run = ["python3", "-u", "bot.py"]' in out


def test_a_missing_interpreter_is_the_headline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = tmp_path / "rb"
    bot.mkdir()
    (bot / "bot.toml").write_text(
        'name = "rb"\ngames = ["challenge"]\nlanguage = "other"\n'
        'run = ["kozyri-no-such-ruby", "bot.rb"]\n'
    )
    argv = ["challenge", str(bot), "builtin:greedy", "--replay", str(tmp_path / "m.json")]
    assert arena_match(*argv) == EXIT_FORFEIT
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if "init_failure (forfeit):" in line)
    assert "could not start: command not found: 'kozyri-no-such-ruby'" in first
    assert "no valid ready within the init time" not in first
    assert "arena runtimes" in out


def test_the_random_samples_play_a_seeded_match_the_same_way_twice(tmp_path: Path) -> None:
    bots = [str(SAMPLES / "python" / f"kozyr-boys-{k}") for k in ("random", "random", "heuristic")]
    for name in ("a.json", "b.json"):
        assert (
            arena_match("kozyr-boys", *bots, "--seed", "3", "--replay", str(tmp_path / name)) == 0
        )
    a, b = read_replay(tmp_path / "a.json"), read_replay(tmp_path / "b.json")
    assert [s["action"] for s in a["steps"]] == [s["action"] for s in b["steps"]]
    assert a["final_hash"] == b["final_hash"]
