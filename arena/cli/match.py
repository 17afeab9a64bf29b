"""``arena match``: play one match between bot folders (and built-in agents) in real processes."""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.agents import AGENTS
from arena.bots import BuildError, ManifestError, build_bot, load_bot
from arena.cli.play import build_game
from arena.games.base import ConfigError, Game, State
from arena.replay import Step, write_replay
from arena.runner import BuiltinBot, Entrant, MatchOutcome, TimeControl, run_match
from sandbox import BACKENDS, Sandbox, SandboxError, default_sandbox_name, get_sandbox

BUILTIN_PREFIX = "builtin:"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "match",
        help="play a match between bot folders",
        description="Play one match between bots, each a folder with bot.toml "
        f"(or {BUILTIN_PREFIX}random / {BUILTIN_PREFIX}greedy), and save its replay.",
    )
    parser.add_argument("game", help="game name (see `arena games`)")
    parser.add_argument(
        "bots", nargs="+", metavar="BOT_DIR", help="bot folders (or builtin:NAME), one per seat"
    )
    parser.add_argument("--seed", type=int, help="match seed (default: random, printed)")
    parser.add_argument("--players", type=int, help="table size; the bots are repeated to fill it")
    parser.add_argument("--variant", help="named variant of the game")
    parser.add_argument("--deals", type=int, help="number of deals (sets the 'deals' parameter)")
    parser.add_argument(
        "--param", action="append", default=[], metavar="K=V", help="set a game parameter"
    )
    parser.add_argument(
        "--sandbox", choices=list(BACKENDS), help="bot isolation (default: bwrap if it runs here)"
    )
    parser.add_argument("--replay", metavar="FILE", help="replay file (default: under ./replays/)")
    parser.add_argument(
        "--no-timeouts", action="store_true", help="wait for bots forever (to debug one)"
    )
    parser.add_argument(
        "--init-time", type=float, default=10.0, metavar="S", help="seconds to say ready (10)"
    )
    parser.add_argument(
        "--move-time", type=float, default=1.0, metavar="S", help="free seconds per move (1)"
    )
    parser.add_argument(
        "--bank", type=float, default=30.0, metavar="S", help="match time bank in seconds (30)"
    )
    parser.add_argument(
        "--max-strikes", type=int, default=3, metavar="K", help="strikes before a forfeit (3)"
    )
    parser.add_argument("--no-build", action="store_true", help="skip the bots' build commands")
    parser.add_argument("--quiet", action="store_true", help="no live progress")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = Console()
    try:
        entrants = [load_entrant(spec) for spec in args.bots]
        game = build_game(args) if args.players else _game_for(args, len(entrants))
    except (ManifestError, ConfigError, ValueError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return 2
    seats = [entrants[i % len(entrants)] for i in range(game.players)]
    for bot in seats:
        if not isinstance(bot, BuiltinBot) and not bot.plays(game.name):
            console.print(f"[yellow]warning:[/] {bot.name} does not list {game.name} in bot.toml")
    sandbox = choose_sandbox(args.sandbox, console)
    if sandbox is None or (not args.no_build and not build_all(seats, console)):
        return 2
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    console.print(
        f"[bold]{game.name}[/] {game.players} players, seed {seed}, sandbox {sandbox.name}"
    )
    outcome = _play(game, seats, seed, sandbox, time_control(args), console, args.quiet)
    console.print(result_table(outcome))
    for report in outcome.seats:
        if report.message:
            console.print(f"[dim]{report.name}: {report.message}[/]")
    path = Path(args.replay or default_replay_path(game.name, seed))
    write_replay(path, outcome.replay)  # type: ignore[arg-type]
    console.print(f"replay: {path}   (arena replay {path})")
    for log in write_stderr_logs(outcome, path):
        console.print(f"stderr: {log}")
    return 0


def write_stderr_logs(outcome: MatchOutcome, replay: Path) -> list[Path]:
    """Each bot seat's stderr (as kept by the runner) beside the replay: ``<replay>.seatN.log``."""
    logs = []
    for seat, report in enumerate(outcome.seats):
        if report.stderr:
            log = replay.with_name(f"{replay.name.removesuffix('.json')}.seat{seat}.log")
            log.write_text(report.stderr, encoding="utf-8")
            logs.append(log)
    return logs


def build_all(seats: list[Entrant], console: Console) -> bool:
    """Run each distinct bot's build command once; False (after saying why) if one fails."""
    built: set[Path] = set()
    for bot in seats:
        if isinstance(bot, BuiltinBot) or not bot.build or bot.path in built:
            continue
        console.print(f"building {bot.name}: {' '.join(bot.build)}")
        try:
            build_bot(bot)
        except BuildError as exc:
            console.print(f"[red]error:[/] {exc}")
            return False
        built.add(bot.path)
    return True


def load_entrant(spec: str) -> Entrant:
    """A bot folder, or ``builtin:<agent>`` for an in-process agent."""
    if spec.startswith(BUILTIN_PREFIX):
        agent = spec.removeprefix(BUILTIN_PREFIX)
        if agent not in AGENTS:
            raise ValueError(f"no built-in agent {agent!r}; agents: {', '.join(AGENTS)}")
        return BuiltinBot(agent)
    return load_bot(spec)


def _game_for(args: argparse.Namespace, bots: int) -> Game:
    """The game with one seat per bot when that table size is allowed, else its default size."""
    if bots > 1:
        args.players = bots
    return build_game(args)


def time_control(args: argparse.Namespace) -> TimeControl:
    return TimeControl(
        init_s=args.init_time,
        move_s=args.move_time,
        bank_s=args.bank,
        max_strikes=args.max_strikes,
        timeouts=not args.no_timeouts,
    )


def choose_sandbox(name: str | None, console: Console) -> Sandbox | None:
    """The named sandbox, or the default isolating one; None (after saying why) if impossible."""
    name = name or default_sandbox_name()
    if name is None:
        console.print(
            "[red]error:[/] no isolating sandbox works here (bubblewrap is missing or cannot "
            "start). To run your own bots without isolation, pass [bold]--sandbox none[/]."
        )
        return None
    try:
        return get_sandbox(name)
    except (SandboxError, ImportError) as exc:
        console.print(f"[red]error:[/] {exc}")
        return None


def default_replay_path(game: str, seed: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("replays") / f"{game}-{seed}-{stamp}.json"


def _play(
    game: Game,
    seats: list[Entrant],
    seed: int,
    sandbox: Sandbox,
    tc: TimeControl,
    console: Console,
    quiet: bool,
) -> MatchOutcome:
    deals = int(game.params.get("deals", 1))
    columns = (
        TextColumn("deal {task.completed}/{task.total}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[steps]} decisions {task.fields[last]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, disable=quiet, transient=True) as progress:
        task = progress.add_task("match", total=deals, steps=0, last="")
        count = [0]

        def on_step(state: State, step: Step) -> None:
            count[0] += 1
            last = "" if step["status"] == "ok" else f"seat {step['seat']}: {step['status']}"
            done = deals if state.is_terminal() else state.deal_index
            progress.update(task, completed=done, steps=count[0], last=last)

        return run_match(game, seats, seed, sandbox=sandbox, time_control=tc, on_step=on_step)


def result_table(outcome: MatchOutcome) -> Table:
    """Place, bot, score, status, strikes and CPU time per seat, best first."""
    table = Table(title="Result")
    for column in ("place", "seat", "bot", "score", "status", "strikes", "CPU s", "think s"):
        table.add_column(column, justify="right" if column != "bot" else "left")
    order = sorted(range(len(outcome.seats)), key=lambda i: outcome.result.ranking[i])
    for i in order:
        report = outcome.seats[i]
        status = report.status.value + (" (forfeit)" if report.forfeited else "")
        style = "green" if report.status == "ok" else "red"
        table.add_row(
            str(outcome.result.ranking[i]),
            str(i),
            report.name + (f" ({report.self_name})" if report.self_name else ""),
            f"{outcome.result.scores[i]:g}",
            f"[{style}]{status}[/]",
            str(report.strikes),
            "-" if report.cpu_s is None else f"{report.cpu_s:.2f}",
            f"{report.think_s:.2f}",
        )
    return table
