"""``arena play GAME --human SEAT``, driven as a person would: the real console script on a real
pseudo-terminal of 80 columns, answering the listed actions."""

from __future__ import annotations

import fcntl
import io
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

from arena import games
from arena.cards import SUIT_SYMBOLS, SUITS
from arena.cli.human import HELP, RESIGNED_EXIT
from arena.cli.main import main
from arena.games.base import ConfigError
from arena.render import render_table
from arena.replay import Replay, initial_state, read_replay, simulate, verify

ARENA = str(Path(sys.executable).with_name("arena"))
WIDTH = 80
WAIT_S = 120.0
PROMPT = re.compile(r"your move \[1-(\d+), \? help, q resign\]: ")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
TURN = "your turn (P"

Answer = Callable[[int], bytes]
"""What the person types at the n-th prompt (counted from 0)."""


@dataclass
class Session:
    code: int
    screen: str  # what the terminal showed, colours taken out


def drive(args: list[str], answer: Answer) -> Session:
    """Run ``arena ARGS`` on an 80-column pseudo-terminal, typing ``answer(n)`` at prompt n."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, WIDTH, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(WIDTH)}
    process = subprocess.Popen(
        [ARENA, *args], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    seen, answered, deadline = b"", 0, time.monotonic() + WAIT_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the program ended and closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            prompts = len(PROMPT.findall(plain(seen)))
            while answered < prompts:
                os.write(master, answer(answered))
                answered += 1
        code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
    return Session(code, plain(seen))


def plain(raw: bytes) -> str:
    return ANSI.sub("", raw.decode("utf-8", "replace")).replace("\r\n", "\n").replace("\r", "")


def shown(card: str) -> str:
    """A wire card as the table draws it: ``TH`` as ``T♥``."""
    return card[0] + SUIT_SYMBOLS[SUITS.index(card[1])]


def cards_in(value: Any) -> set[str]:
    """Every wire-form card anywhere in a JSON value."""
    return set(re.findall(r"\b[5-9TJQKA][SHDC]\b", orjson.dumps(value).decode()))


def secrets_at_turns(replay: Replay, seat: int) -> Iterator[set[str]]:
    """At each of ``seat``'s decisions: the cards other seats hold privately that ``seat``'s own
    observation does not show (the cards its screen must not show then)."""
    state = initial_state(replay)
    for step in replay["steps"]:
        if step["seat"] == seat:
            others = set().union(
                *(state.private_cards(s) for s in range(state.game.players) if s != seat)
            )
            yield others - cards_in(state.observation(seat))
        state.apply_json(step["action"])


def turn_screens(screen: str) -> list[str]:
    """What the terminal showed at each of the person's turns: the table and the action list."""
    return [part.split("your move [")[0] for part in screen.split(TURN)[1:]]


def shortest(game: str) -> int:
    """The fewest deals ``--deals`` takes for ``game`` (a mirrored game plays them in pairs)."""
    for deals in range(1, 5):
        try:
            games.make_game(game, params=games.game_class(game).length_params(deals))
        except ConfigError:
            continue
        return deals
    raise AssertionError(f"{game} takes no --deals up to 4")


def play_args(game: str, replay: Path) -> list[str]:
    deals = str(shortest(game))
    return ["play", game, "--human", "0", "--deals", deals, "--seed", "3", "--replay", str(replay)]


@pytest.mark.parametrize("game", games.names())
def test_a_person_plays_a_whole_deal_of_each_game(game: str, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    session = drive(play_args(game, path), lambda n: b"1\n")
    assert session.code == 0, session.screen[-2000:]
    replay = read_replay(path)
    assert verify(replay) == []
    assert replay["seats"][0] == {"name": "human", "kind": "human", "version": None}
    human_turns = [s for s in replay["steps"] if s["seat"] == 0]
    screens = turn_screens(session.screen)
    assert len(screens) == len(human_turns) > 0
    for number, (seen, secrets) in enumerate(
        zip(screens, secrets_at_turns(replay, 0), strict=True)
    ):
        assert " 1) " in seen and "legal actions:" in seen
        leaked = [card for card in secrets if shown(card) in seen]
        assert not leaked, f"turn {number}: another seat's hidden {leaked} on screen:\n{seen}"
    assert "Result" in session.screen and "replay saved" in session.screen
    too_wide = [line for line in session.screen.splitlines() if len(line) > WIDTH]
    assert not too_wide


def test_the_check_for_hidden_cards_can_fail(tmp_path: Path) -> None:
    """At the person's first turn in Svoi Kozyri other seats hold hidden cards: the screen
    shows none of them, and the same table drawn from the full view would show them."""
    path = tmp_path / "m.json"
    session = drive(play_args("svoi-kozyri", path), lambda n: b"q\n")
    state = simulate(read_replay(path)).state  # the position the person resigned in
    assert state.current_player() == 0
    others = set().union(*(state.private_cards(s) for s in range(1, state.game.players)))
    secrets = others - cards_in(state.observation(0))
    assert secrets
    (seen,) = turn_screens(session.screen)
    assert not [card for card in secrets if shown(card) in seen]
    console = Console(width=WIDTH, record=True, file=io.StringIO())
    console.print(render_table(state.full_view(), viewer=0))
    assert [card for card in secrets if shown(card) in console.export_text()]


def test_bad_input_is_asked_again(toy: str, tmp_path: Path) -> None:
    answers = [b"0\n", b"abc\n", b"99\n", b"?\n", b"\n", b"1\n"]
    path = tmp_path / "m.json"
    session = drive(play_args(toy, path), lambda n: answers[n] if n < len(answers) else b"1\n")
    assert session.code == 0, session.screen[-2000:]
    assert "not a choice: '0'; type a number from 1 to" in session.screen
    assert "not a choice: 'abc'" in session.screen and "not a choice: '99'" in session.screen
    assert HELP.splitlines()[0] in session.screen
    first = read_replay(path)["steps"]
    assert verify(read_replay(path)) == [] and any(s["seat"] == 0 for s in first)


@pytest.mark.parametrize(("typed", "how"), [(b"q\n", "q"), (b"\x04", "end of input")])
def test_resigning_or_end_of_input_stops_cleanly(typed: bytes, how: str, tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    session = drive(play_args("svoi-kozyri", path), lambda n: b"1\n" if n == 0 else typed)
    assert session.code == RESIGNED_EXIT, (how, session.screen[-2000:])
    assert "you resigned: P0 forfeits and the match stops here." in session.screen
    assert "Traceback" not in session.screen
    replay = read_replay(path)
    assert verify(replay) == []
    assert replay["outcome"]["forfeited"][0] and replay["outcome"]["status"][0] == "resigned"
    assert sum(1 for s in replay["steps"] if s["seat"] == 0) == 1


def test_a_seat_off_the_table_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "challenge", "--human", "2"]) == 2
    assert "--human 2: this table has seats 0 to 1" in capsys.readouterr().out
