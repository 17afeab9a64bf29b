"""``arena replay``: step through a replay in the terminal, as a spectator or from one seat."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.text import Text

from arena.cli.errors import print_error
from arena.games.base import JSON
from arena.render import action_text, event_text, render_result, render_table, seat_label
from arena.replay import Replay, ReplayError, read_replay, states
from arena.termtext import clean
from arena.termtext import console as safe_console
from arena.termtext import text as safe_text

HELP = "Enter/n next · p previous · NUMBER jump to step · q quit"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("replay", help="step through a replay in the terminal")
    parser.add_argument("file", help="replay file")
    parser.add_argument("--seat", type=int, help="show only what this seat saw")
    parser.add_argument("--step", type=int, default=0, help="start at this step")
    parser.add_argument(
        "--no-interactive", dest="interactive", action="store_false", help="print every step"
    )
    parser.set_defaults(func=run)


def collect_views(replay: Replay, seat: int | None) -> list[JSON]:
    """The view at every step: the seat's observation, or everything for a spectator."""
    views = []
    for state in states(replay):
        views.append(state.observation(seat) if seat is not None else state.full_view())
    return views


class Viewer:
    """Shows one step of a replay: the decision that led to it and the table after it."""

    def __init__(self, console: Console, replay: Replay, seat: int | None) -> None:
        self.console, self.replay, self.seat = console, replay, seat
        self.names = [clean(s["name"]) for s in replay["seats"]]
        self.views = collect_views(replay, seat)

    @property
    def last(self) -> int:
        return len(self.views) - 1

    def show(self, index: int) -> None:
        self.console.rule(f"step {index} / {self.last}")
        if index:
            self.show_step(index)
        self.console.print(render_table(self.views[index], self.names, viewer=self.seat))
        if index == self.last:
            self.console.print(render_result(self.replay["result"], self.names))

    def show_step(self, index: int) -> None:
        """The decision that led to view ``index``, as far as the viewing seat may know it."""
        step = self.replay["steps"][index - 1]
        own = self.seat is None or self.seat == step["seat"]
        line = Text(f"{seat_label(step['seat'], self.names)}: ")
        line.append(action_text(step["action"]) if own else self.public_events(index, step["seat"]))
        status = clean(step.get("status", "ok"))
        if own:
            timing = f"{step['time_ms']:.1f} ms" if step.get("time_ms") is not None else "untimed"
            line.append(f"  ({timing}, {status})", style="dim" if status == "ok" else "red")
        self.console.print(line)
        if own:
            for key in ("debug", "stderr"):
                if step.get(key):
                    shown = safe_text(step[key], lines=key == "stderr")
                    self.console.print(Text(f"{key}: ", style="dim").append(shown))

    def public_events(self, index: int, actor: int) -> Text:
        """What another seat's decision showed: the history events it added (its action itself
        may hold a secret, such as a chosen trump)."""
        before, after = self.views[index - 1].get("history"), self.views[index].get("history")
        if not isinstance(before, list) or not isinstance(after, list):
            return Text("(acted)", style="dim")
        added = after[len(before) :] if after[: len(before)] == before else after
        shown = [
            event_text({k: v for k, v in e.items() if (k, v) != ("seat", actor)}, self.names)
            for e in added
            if isinstance(e, dict)
        ]
        return Text("; ").join(shown) if shown else Text("(acted)", style="dim")


def next_index(command: str, index: int, last: int) -> int | None:
    """Where a command moves the viewer (``None`` to quit)."""
    command = command.strip().lower()
    if command in ("q", "quit", "exit"):
        return None
    if command in ("", "n"):
        return min(index + 1, last)
    if command == "p":
        return max(index - 1, 0)
    if command.isdigit():
        return min(int(command), last)
    return index


def interact(viewer: Viewer, index: int) -> None:
    viewer.console.print(f"[dim]{HELP}[/]")
    while True:
        viewer.show(index)
        try:
            command = input("> ")
        except EOFError:
            return
        moved = next_index(command, index, viewer.last)
        if moved is None:
            return
        index = moved


def run(args: argparse.Namespace) -> int:
    console = safe_console(highlight=False)
    try:
        replay = read_replay(args.file)
        players = replay["game"].get("players", len(replay["seats"]))
        if args.seat is not None and not 0 <= args.seat < players:
            raise ReplayError(f"no seat {args.seat}: seats are 0..{players - 1}")
        viewer = Viewer(console, replay, args.seat)
    except (OSError, ReplayError) as exc:
        print_error(console, exc)
        return 2
    start = min(max(args.step, 0), viewer.last)
    if args.interactive:
        interact(viewer, start)
    else:
        for index in range(start, viewer.last + 1):
            viewer.show(index)
    return 0
