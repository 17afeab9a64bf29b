"""A game is a folder: one dropped in is a game everywhere, with no other file changed.

The toy game folder (``tests/fixtures/games/toy_high_card``) is found only through
``ARENA_GAMES_PATH``, as any game folder outside ``arena/games`` would be. Each command runs as a
separate ``arena`` process, the way a user runs it; the local match starts real bot processes.
The replay viewer and the site's ladders see it too: ``tests/web/browser/test_viewer.py`` and
``tests/web/test_game_folders.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena import games
from arena.replay import read_replay
from tests.arena.toy_game import GAMES_DIR, NAME

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 120


def arena(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``arena ARGV`` in a process of its own, with the toy game's folder on the search path."""
    env = {**os.environ, games.PATH_ENV: str(GAMES_DIR), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "arena.cli.main", *argv],
        cwd=cwd or ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )


def toy_bot(folder: Path, name: str) -> Path:
    """A Python bot for the toy game: it lays its first legal card."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ngames = ["{NAME}"]\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
    )
    (folder / "bot.py").write_text(
        "from kozyri_bot import Bot, run\n\n\n"
        "class First(Bot):\n"
        "    def choose(self, observation, legal_actions):\n"
        "        return 0\n\n\n"
        "run(First())\n"
    )
    return folder


def test_without_its_folder_on_the_path_the_toy_game_is_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(games.PATH_ENV, raising=False)
    assert NAME not in games.names()


def test_the_registry_finds_the_folder_after_the_built_in_games(toy: str) -> None:
    found = games.names()
    assert found[-1] == toy
    assert games.folder(toy) == GAMES_DIR / "toy_high_card"
    assert games.viewer_script(toy) == GAMES_DIR / "toy_high_card" / "viewer.js"
    assert games.part(toy, "terminal") is not None


def test_arena_games_lists_it() -> None:
    done = arena("games")
    assert done.returncode == 0, done.stderr
    assert NAME in done.stdout and "High card (test game)" in done.stdout


def test_arena_play_plays_it_with_its_own_table(tmp_path: Path) -> None:
    replay = tmp_path / "toy.json"
    done = arena("play", NAME, "--seed", "3", "--every", "1", "--replay", str(replay))
    assert done.returncode == 0, done.stderr
    assert f"╭─ {NAME}" in done.stdout
    assert "laid ranks:" in done.stdout, "the table line from the folder's terminal.py"
    assert "wins the deal" in done.stdout, "the event phrase from the folder's terminal.py"
    verified = arena("verify", str(replay))
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_local_match_runs_real_bot_processes(tmp_path: Path) -> None:
    first = toy_bot(tmp_path / "first", "toy-first")
    second = toy_bot(tmp_path / "second", "toy-second")
    replay = tmp_path / "match.json"
    done = arena(
        "match", NAME, str(first), str(second), "--sandbox", "none", "--seed", "5",
        "--quiet", "--replay", str(replay),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    played = read_replay(replay)
    assert played["game"]["game"] == NAME
    assert [s["name"] for s in played["seats"]] == ["toy-first", "toy-second"]
    assert played["steps"] and all(s["status"] == "ok" for s in played["steps"])
    assert arena("verify", str(replay)).returncode == 0
