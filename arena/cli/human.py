"""``arena play GAME --human SEAT``: a person plays one seat in the terminal against built-in
agents.

At the person's turn the table is drawn from that seat's own observation (never another seat's
hidden cards) and the legal actions are listed, numbered, in the game's own action text. The
other seats' moves are shown as that seat sees them (``Game.action_seen_by``), with the public
events they caused. ``q`` or end of input (Ctrl-D) resigns: the seat forfeits, the match stops
there and is still recorded, so its replay verifies like any other.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence

from rich.columns import Columns
from rich.console import Console
from rich.text import Text

from arena import __version__
from arena.agents import Agent
from arena.games.base import Action, State
from arena.render import action_text, render_table
from arena.replay import Outcome, Replay, ReplayRecorder, SeatInfo, Step, plain_outcome

HUMAN_NAME = "human"
"""The name the person's seat is shown and recorded under."""

RESIGNED_EXIT = 3
"""The exit code of ``arena play --human`` when the person resigns (``q``) or input ends."""

HELP = (
    "Type the number of an action and press Enter.\n"
    "t: draw the table again · ?: this help · q: resign (Ctrl-D too)"
)

Ask = Callable[[str], str]
"""Reads one line of the person's input after showing a prompt; raises ``EOFError`` at the end."""

StepHook = Callable[[State, Step], None]


class Resigned(Exception):
    """The person resigned (``q``) or their input ended."""


class HumanSeat:
    """The person's decisions: shows their seat's table and legal actions, reads a choice."""

    def __init__(self, console: Console, seat: int, names: Sequence[str], ask: Ask) -> None:
        self.console, self.seat, self.names, self.ask = console, seat, list(names), ask

    def __call__(self, state: State) -> Action:
        legal = state.legal_actions()
        self.show(state, legal)
        while True:
            try:
                answer = self.ask(f"your move [1-{len(legal)}, ? help, q resign]: ").strip()
            except EOFError:
                raise Resigned("input ended") from None
            choice = self.read(answer, len(legal))
            if choice is not None:
                return legal[choice]
            if answer == "t":
                self.show(state, legal)

    def show(self, state: State, legal: list[Action]) -> None:
        """The table from this seat's view, then the legal actions, numbered."""
        view = state.observation(self.seat)
        self.console.rule(Text(f"your turn (P{self.seat})", style="bold green"), align="left")
        self.console.print(render_table(view, self.names, viewer=self.seat))
        self.console.print(Text("legal actions:", style="bold"))
        items = [
            Text(f"{i:>2}) ").append(action_text(state.action_to_json(a)))
            for i, a in enumerate(legal, 1)
        ]
        self.console.print(Columns(items, padding=(0, 3)))

    def read(self, answer: str, count: int) -> int | None:
        """The 0-based index ``answer`` picks, or None after saying why it picks none."""
        if answer.lower() in ("q", "quit", "resign"):
            raise Resigned("resigned")
        if answer in ("?", "h", "help"):
            self.console.print(HELP)
            return None
        if answer == "t":
            return None
        if answer.isdigit() and 1 <= int(answer) <= count:
            return int(answer) - 1
        shown = answer if len(answer) <= 20 else answer[:20] + "…"
        self.console.print(
            Text(f"not a choice: {shown!r}; type a number from 1 to {count} (? for help)"),
            style="red",
        )
        return None


def play_human_match(
    state: State,
    human: HumanSeat,
    agents: Sequence[Agent],
    names: Sequence[str],
    rng: random.Random,
    on_step: StepHook | None = None,
) -> tuple[Replay, bool]:
    """Play ``state`` to its end (or to the person's resignation) and record it.

    Returns the replay and whether the person resigned; a resigned seat forfeits, so the
    unfinished match still verifies.
    """
    seats = [
        SeatInfo(
            name=name,
            kind="human" if seat == human.seat else "builtin",
            version=None if seat == human.seat else __version__,
        )
        for seat, name in enumerate(names)
    ]
    recorder = ReplayRecorder(state.game.config(), state.seed, seats)
    outcome: Outcome = plain_outcome(len(names))
    resigned = False
    while not state.is_terminal():
        seat, deal = state.current_player(), state.deal_index
        started = time.perf_counter()
        if seat == human.seat:
            try:
                action = human(state)
            except Resigned:
                resigned = True
                outcome["status"][seat] = "resigned"
                outcome["forfeited"][seat] = True
                break
        else:
            action = agents[seat](state, rng)
        elapsed = round((time.perf_counter() - started) * 1000, 3)
        wire = state.action_to_json(action)
        state.apply_action(action)
        recorder.record(seat, wire, deal, time_ms=elapsed)
        if on_step:
            on_step(state, recorder.steps[-1])
    return recorder.finish(state, outcome), resigned
