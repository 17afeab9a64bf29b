"""The tables of ``arena`` at 80 columns: what a user must type is never cut."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.games import names

SAMPLES = Path(__file__).resolve().parents[3] / "sample_bots"
LONG = "newcomer-perl-greedy-with-a-rather-long-name"


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def long_named(tmp_path: Path) -> Path:
    bot = tmp_path / "bot"
    shutil.copytree(SAMPLES / "python" / "svoi-kozyri-greedy", bot)
    toml = bot / "bot.toml"
    toml.write_text(toml.read_text().replace('"svoi-kozyri-greedy"', f'"{LONG}"'))
    return bot


COMMANDS = ("repeat this match:", "replay:", "stderr of seat")
"""Lines that name files or commands to copy: printed whole, however wide the screen."""


def lines_of(out: str) -> list[str]:
    lines = out.splitlines()
    drawn = [line for line in lines if not line.startswith(COMMANDS)]
    assert all(len(line) <= 80 for line in drawn), max(drawn, key=len)
    assert "…" not in out
    return lines


def test_games_shows_every_game_id_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    lines = lines_of(capsys.readouterr().out)
    for name in names():
        assert any(line.split()[:1] == [name] for line in lines), name


def test_game_parameters_are_shown_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "svoi-kozyri-tricks"]) == 0
    lines = lines_of(capsys.readouterr().out)
    for param in ("target", "max_deals", "reveal", "blind", "teams"):
        assert any(line.split()[:1] == [param] for line in lines), param


def test_a_long_bot_name_stays_whole_in_a_match(
    long_named: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", "svoi-kozyri", str(long_named), "builtin:greedy", "builtin:random",
            str(SAMPLES / "broken" / "crash-mid-match"), "--sandbox", "none", "--quiet",
            "--deals", "1", "--replay", str(tmp_path / "m.json")]  # fmt: skip
    main(argv)
    lines = lines_of(capsys.readouterr().out)
    assert any(LONG in line for line in lines)
    assert any("broken-crash-mid-match" in line for line in lines)


def test_a_long_bot_name_stays_whole_in_the_standings(
    long_named: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tournament", "svoi-kozyri", str(long_named), "builtin:random",
            str(SAMPLES / "python" / "svoi-kozyri-heuristic"), "--players", "3", "--matches",
            "3", "--sandbox", "none", "--out", str(tmp_path / "t")]  # fmt: skip
    assert main(argv) == 0
    lines = lines_of(capsys.readouterr().out)
    assert any(line.split()[:2] == ["1", LONG] or LONG in line for line in lines)
    assert any("svoi-kozyri-heuristic" in line for line in lines)


def test_match_headers_are_never_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Three sample bots with names of 18 to 21 characters: at 80 columns a column gives way
    # rather than a header such as "strikes" breaking into "strike" and "s".
    bots = [str(SAMPLES / "python" / f"svoi-kozyri-{kind}") for kind in ("random", "heuristic")]
    argv = ["match", "svoi-kozyri", *bots, "builtin:greedy", "--sandbox", "none", "--quiet",
            "--deals", "1", "--seed", "1", "--replay", str(tmp_path / "m.json")]  # fmt: skip
    main(argv)
    lines = lines_of(capsys.readouterr().out)
    header = next(line for line in lines if line.split()[:2] == ["place", "seat"])
    assert "strikes" in header.split() and "status" in header.split()
