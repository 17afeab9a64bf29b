"""``arena play``: watch built-in agents play a match in the terminal (or play one seat yourself,
``--human``: ``arena.cli.human``), and save its replay."""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.text import Text

from arena.agents import AGENTS, Agent, get_agent
from arena.cli.errors import print_error
from arena.cli.human import HUMAN_NAME, RESIGNED_EXIT, HumanSeat, play_human_match
from arena.games import game_class, make_game
from arena.games.base import ConfigError, Game, State
from arena.render import JSON, action_text, event_text, render_result, render_table, seat_label
from arena.replay import Step, agent_rng, record_builtin_match, write_replay


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "play", help="watch built-in agents play a match, or play a seat yourself"
    )
    parser.add_argument("game", help="game name (see `arena games`)")
    parser.add_argument("--players", type=int, help="table size (default: the game's)")
    parser.add_argument("--seed", type=int, help="match seed (default: random, printed)")
    parser.add_argument("--variant", help="named variant of the game")
    parser.add_argument(
        "--deals",
        type=int,
        help="match length in deals (a game that counts its length otherwise reads it its "
        "own way, e.g. as a cap or in whole rounds)",
    )
    parser.add_argument(
        "--param", action="append", default=[], metavar="K=V", help="set a game parameter"
    )
    parser.add_argument(
        "--agents",
        default="greedy",
        help=f"comma-separated agents, repeated over the seats ({', '.join(AGENTS)})",
    )
    parser.add_argument(
        "--human",
        type=non_negative(int),
        metavar="SEAT",
        help="play this seat yourself (0 is the first); the agents take the others",
    )
    parser.add_argument("--replay", metavar="FILE", help="save the replay here")
    parser.add_argument(
        "--delay", type=non_negative(float), default=0.0, help="seconds to pause per action"
    )
    parser.add_argument(
        "--every",
        type=non_negative(int),
        default=40,
        help="show the table every N actions (0: only at deal boundaries)",
    )
    parser.add_argument("--quiet", action="store_true", help="show only the result")
    parser.set_defaults(func=run)


def non_negative(kind: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: ``kind`` of the text, refused (one usage line) when below zero."""

    def convert(text: str) -> float:
        value = kind(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
        return value

    convert.__name__ = kind.__name__  # argparse names the type in its own refusals
    return convert


def parse_param(text: str) -> tuple[str, Any]:
    """``k=v`` with ``v`` read as JSON when it is JSON (``3``, ``true``, ``"x"``), else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ConfigError(f"--param wants KEY=VALUE, got {text!r}")
    try:
        return key.strip(), orjson.loads(raw)
    except orjson.JSONDecodeError:
        return key.strip(), raw


def build_game(args: argparse.Namespace) -> Game:
    """The game asked for on the command line."""
    params = dict(parse_param(p) for p in args.param)
    if args.deals is not None:
        params.update(game_class(args.game).length_params(args.deals))
    return make_game(args.game, players=args.players, params=params, variant=args.variant)


def seat_agents(spec: str, players: int) -> tuple[list[Agent], list[str]]:
    """The agents named in ``spec`` ("greedy,random"), cycled over ``players`` seats."""
    names = [n.strip() for n in spec.split(",") if n.strip()] or ["greedy"]
    seats = [names[i % len(names)] for i in range(players)]
    return [get_agent(n) for n in seats], seats


class Commentary:
    """Prints each decision and the public events it caused (a trick taken, a player out, a
    showdown...); at deal boundaries and every ``every`` actions, the table."""

    def __init__(
        self,
        console: Console,
        names: list[str],
        every: int,
        delay: float,
        start: JSON,
        viewer: int | None = None,
    ) -> None:
        self.console, self.names, self.every, self.delay = console, names, every, delay
        self.viewer = viewer  # a seat: show only what it sees (its observation), else everything
        self.count = 0
        self.deal = 0
        self.events_seen = len(start.get("history") or [])

    def __call__(self, state: State, step: Step) -> None:
        self.count += 1
        who = seat_label(step["seat"], self.names)
        self.console.print(f"[dim]{self.count:>4} d{step['deal']}[/] {who}: ", end="")
        game, action = state.game, step["action"]
        if self.viewer is not None:
            action = game.action_seen_by(action, step["seat"], self.viewer)
        self.console.print(action_text(action))
        view = state.full_view() if self.viewer is None else state.observation(self.viewer)
        new_deal = state.deal_index != self.deal
        for event in self.new_events(view, step, new_deal):
            self.console.print(Text("         ").append(event_text(event, self.names)))
        if new_deal or state.is_terminal() or (self.every and self.count % self.every == 0):
            self.deal = state.deal_index
            self.console.print(render_table(view, self.names, viewer=self.viewer))
        if self.delay:
            time.sleep(self.delay)

    def new_events(self, view: JSON, step: Step, new_deal: bool) -> list[JSON]:
        """The history events added since the last step, less the echo of the action itself."""
        history = view.get("history")
        if not isinstance(history, list):
            return []
        ended = deal_ending(view.get("last_deal")) if new_deal else []
        start = 0 if new_deal or len(history) < self.events_seen else self.events_seen
        self.events_seen = len(history)
        fresh = ended + [e for e in history[start:] if isinstance(e, dict)]
        kind = step["action"].get("type")
        for i, event in enumerate(fresh):
            if event.get("type") == kind and event.get("seat") == step["seat"]:
                return fresh[:i] + fresh[i + 1 :]
        return fresh


def deal_ending(last_deal: Any) -> list[JSON]:
    """The events that closed the previous deal (a showdown, the pot won), when the view keeps
    that deal's events: its trailing events that name nobody's action."""
    if not isinstance(last_deal, list):
        return []
    ending: list[JSON] = []
    for event in reversed(last_deal):
        if not isinstance(event, dict) or event.get("type") not in ("showdown", "win", "split"):
            break
        ending.insert(0, event)
    return ending


def prepare_replay_folder(path: str | None) -> None:
    """Create the replay's folder (as ``arena match`` does) before the match, not after it."""
    if not path:
        return
    folder = Path(path).absolute().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--replay {path}: cannot create {folder} ({exc.strerror})") from None


def run(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    try:
        game = build_game(args)
        agents, names = seat_agents(args.agents, game.players)
        if args.human is not None:
            names = human_names(names, args.human)
        prepare_replay_folder(args.replay)
    except (ConfigError, ValueError) as exc:
        print_error(console, exc)
        return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    state = game.new_state(seed)
    console.print(f"[bold]{game.spec.title}[/] {orjson.dumps(game.config()).decode()} seed {seed}")
    if args.human is not None:
        return run_human(console, args, state, agents, names)
    hook = None
    if not args.quiet:
        start = state.full_view()
        console.print(render_table(start, names))
        hook = Commentary(console, names, args.every, args.delay, start)
    replay = record_builtin_match(state, agents, names, agent_rng(seed), on_step=hook)
    console.print(render_result(replay["result"], names))
    deals = state.deal_index + 1
    console.print(
        f"{len(replay['steps'])} actions, {deals} deal{'' if deals == 1 else 's'}, seed {seed}"
    )
    if args.replay:
        write_replay(args.replay, replay)
        console.print(f"replay saved to {args.replay}")
    return 0


def human_names(names: list[str], seat: int) -> list[str]:
    """The seat names with the person's seat named ``you``; a seat off the table is refused."""
    if seat >= len(names):
        raise ValueError(f"--human {seat}: this table has seats 0 to {len(names) - 1}")
    return [HUMAN_NAME if i == seat else name for i, name in enumerate(names)]


def run_human(
    console: Console, args: argparse.Namespace, state: State, agents: list[Agent], names: list[str]
) -> int:
    """Play the match with the person in seat ``args.human``; 0 when it ends, ``RESIGNED_EXIT``
    when the person resigns or their input ends (the replay is saved either way)."""
    seat = args.human
    console.print(f"you play seat P{seat}; at your turn type an action's number (? for help)")
    start = state.observation(seat)
    hook = Commentary(console, names, 0, args.delay, start, viewer=seat)
    human = HumanSeat(console, seat, names, console.input)
    replay, resigned = play_human_match(state, human, agents, names, agent_rng(state.seed), hook)
    if resigned:
        console.print(f"\nyou resigned: P{seat} forfeits and the match stops here.")
    console.print(render_result(replay["result"], names))
    console.print(f"{len(replay['steps'])} actions, seed {state.seed}")
    if args.replay:
        write_replay(args.replay, replay)
        console.print(f"replay saved to {args.replay}")
    return RESIGNED_EXIT if resigned else 0
