"""``arena match``: play one match between bot folders (and built-in agents) in real processes."""

from __future__ import annotations

import argparse
import random
import shlex
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from arena.agents import AGENTS
from arena.bots import BuildError, ManifestError, build_bot, flush_hint, load_bot
from arena.cli.errors import print_error
from arena.cli.play import build_game
from arena.cli.tables import fitted, uncut
from arena.games.base import ConfigError, Game, State
from arena.render import action_text, seat_label
from arena.replay import ReplayError, Step, read_replay, write_replay
from arena.runner import (
    BuiltinBot,
    Entrant,
    MatchOutcome,
    SeatReport,
    StepCallback,
    TimeControl,
    run_match,
)
from arena.termtext import clean, markup
from arena.termtext import console as safe_console
from sandbox import BACKENDS, Sandbox, SandboxError, default_sandbox_name, get_sandbox

BUILTIN_PREFIX = "builtin:"
TIME_DEFAULTS: dict[str, float] = {
    "init_time": 10.0,
    "move_time": 1.0,
    "bank": 30.0,
    "max_strikes": 3,
}
"""The time options' defaults; ``repeat_command`` repeats only the options that differ."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "match",
        help="play a match between bot folders",
        description="Play one match between bots, each a folder with bot.toml "
        f"(or {BUILTIN_PREFIX}random / {BUILTIN_PREFIX}greedy), and save its replay.",
    )
    parser.add_argument(
        "game", help="game name (see `arena games`); with --repeat, the first bot instead"
    )
    parser.add_argument(
        "bots", nargs="*", metavar="BOT_DIR", help="bot folders (or builtin:NAME), one per seat"
    )
    parser.add_argument("--seed", type=int, help="match seed (default: random, printed)")
    parser.add_argument(
        "--repeat",
        metavar="REPLAY",
        help="play the game, table size, parameters and seed of a saved replay (same deals)",
    )
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
        "--overwrite", action="store_true", help="replace an existing --replay FILE and its logs"
    )
    parser.add_argument(
        "--no-timeouts", action="store_true", help="wait for bots forever (to debug one)"
    )
    parser.add_argument("--init-time", type=float, metavar="S", help="seconds to say ready (10)")
    parser.add_argument("--move-time", type=float, metavar="S", help="free seconds per move (1)")
    parser.add_argument("--bank", type=float, metavar="S", help="match time bank in seconds (30)")
    parser.add_argument("--max-strikes", type=int, metavar="K", help="strikes before a forfeit (3)")
    parser.add_argument("--no-build", action="store_true", help="skip the bots' build commands")
    parser.add_argument("--quiet", action="store_true", help="no live progress")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="print every decision as it is made"
    )
    parser.add_argument(
        "--seat-log",
        action="append",
        type=int,
        default=[],
        metavar="SEAT",
        help="save every line sent to and received from SEAT's bot (<replay>.seatN.wire.log)",
    )
    parser.set_defaults(func=run, intermixed=True, **TIME_DEFAULTS)


EXIT_OK, EXIT_REFUSED, EXIT_STRIKES, EXIT_FORFEIT = 0, 2, 3, 4
"""Exit codes: every bot seat played cleanly; the command was refused before play (bad
input, no sandbox, a failed build); a seat got a strike (timeout, illegal action, invalid
output...) but finished; a seat forfeited (crash, init failure, too many strikes)."""


def exit_code(outcome: MatchOutcome) -> int:
    """``EXIT_FORFEIT`` if a seat forfeited, ``EXIT_STRIKES`` if one failed a move, else 0."""
    if any(report.forfeited for report in outcome.seats):
        return EXIT_FORFEIT
    if any(report.status != "ok" or report.strikes for report in outcome.seats):
        return EXIT_STRIKES
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    console = safe_console()
    try:
        repeated = apply_repeat(args) if args.repeat else None
        entrants = [load_entrant(spec) for spec in args.bots]
        if not entrants:
            raise ValueError("name at least one bot folder (or builtin:NAME)")
        game = _table(args, entrants)
        path = replay_path(args)
    except (ManifestError, ConfigError, ReplayError, OSError, ValueError) as exc:
        print_error(console, exc)
        return EXIT_REFUSED
    if repeated is not None:
        console.print(f"repeating {markup(args.repeat)}: seats were {markup(', '.join(repeated))}")
    seats = [entrants[i % len(entrants)] for i in range(game.players)]
    for bot in seats:
        if not isinstance(bot, BuiltinBot) and not bot.plays(game.name):
            console.print(f"[yellow]warning:[/] {bot.name} does not list {game.name} in bot.toml")
    sandbox = choose_sandbox(args.sandbox, console)
    if sandbox is None or (not args.no_build and not build_all(seats, console)):
        return EXIT_REFUSED
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    console.print(
        f"[bold]{game.name}[/] {game.players} players, seed {seed}, sandbox {sandbox.name}"
    )
    path = path or unique_path(default_replay_path(game.name, seed))
    path.parent.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        wire: dict[int, BinaryIO] = {
            seat: stack.enter_context(wire_log_path(path, seat).open("wb"))
            for seat in sorted(set(args.seat_log))
            if 0 <= seat < game.players
        }
        play = Play(game, seats, seed, sandbox, time_control(args), wire)
        outcome = play.run(console, quiet=args.quiet, verbose=args.verbose)
    console.print(fitted(console, result_table(outcome), "think s", "CPU s", "seat"))
    write_replay(path, outcome.replay)  # type: ignore[arg-type]
    report_files(console, outcome, path, sorted(wire), seats)
    again = repeat_command(args, path, sandbox.name)
    console.print(f"[dim]repeat this match: {escape(again)}[/]", soft_wrap=True)
    return exit_code(outcome)


def repeat_command(args: argparse.Namespace, replay: Path, sandbox: str) -> str:
    """The command that plays this match again: the replay, the bots, every option that
    changes how they play (the replay itself holds the game, parameters and seed)."""
    words = ["arena", "match", "--repeat", str(replay), *args.bots, "--sandbox", sandbox]
    for key, default in TIME_DEFAULTS.items():
        if getattr(args, key) != default:
            words += [f"--{key.replace('_', '-')}", f"{getattr(args, key):g}"]
    words += ["--no-timeouts"] if args.no_timeouts else []
    words += ["--no-build"] if args.no_build else []
    return shlex.join(words)


def replay_path(args: argparse.Namespace) -> Path | None:
    """``--replay FILE``, refused if it exists (unless ``--overwrite``); None for the default."""
    if not args.replay:
        return None
    path = Path(args.replay)
    if path.exists() and not args.overwrite:
        raise ValueError(
            f"{path} exists; name another --replay file, or pass --overwrite to replace it"
        )
    return path


def unique_path(path: Path) -> Path:
    """``path``, or ``<stem>-2.json``, ``-3``... when a file of that name is already there."""
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def report_files(
    console: Console, outcome: MatchOutcome, path: Path, wired: list[int], seats: list[Entrant]
) -> None:
    """Explain each failed seat, save the stderr logs, and say where every file is."""
    logs = write_stderr_logs(outcome, path)
    for seat, report in enumerate(outcome.seats):
        if report.status != "ok" or report.message:
            hint = failure_hint(report, seats[seat])
            console.print(failure_report(seat, report, logs.get(seat), hint))
    console.print(f"replay: {path}   (arena replay {path})")
    for seat, log in logs.items():
        console.print(f"stderr of seat {seat}: {log}")
    for seat in wired:
        console.print(f"conversation with seat {seat}: {wire_log_path(path, seat)}")


def apply_repeat(args: argparse.Namespace) -> list[str]:
    """Take game, table size, variant, parameters and seed from ``--repeat``'s replay.

    The positional game argument is then the first bot. Returns who sat where in that replay.
    """
    replay = read_replay(args.repeat)
    config = replay["game"]
    args.bots = [args.game, *args.bots]
    args.game, args.players, args.variant = config["game"], config["players"], config["variant"]
    recorded = [f"{k}={orjson.dumps(v).decode()}" for k, v in config["params"].items()]
    args.param = recorded + args.param  # --param and --deals given here still override
    if args.seed is None:
        args.seed = replay["seed"]
    return [f"{i}: {seat['name']}" for i, seat in enumerate(replay["seats"])]


def wire_log_path(replay: Path, seat: int) -> Path:
    """Where ``--seat-log`` saves a seat's conversation: ``<replay>.seatN.wire.log``."""
    return replay.with_name(f"{replay.name.removesuffix('.json')}.seat{seat}.wire.log")


FAILURE_HELP = {
    "timeout": "no answer within the move time and the bank (or it stopped reading its input)",
    "crash": "the bot's process ended (or closed stdout) during the match",
    "init_failure": "the bot did not start: no valid ready within the init time",
    "illegal_action": "it answered with an action that is not in legal_actions",
    "invalid_output": "it wrote a line to stdout that is not a protocol message",
    "output_flood": "it wrote a line over 64 KiB or too many lines at once",
}
"""What each failure status means, in the words a bot author needs."""

CRASH_TAIL_LINES = 20
"""Lines of stderr shown for a crashed bot (the whole log is saved beside the replay)."""


def failure_report(seat: int, report: SeatReport, log: Path | None, hint: str | None) -> Panel:
    """A seat that failed: the real cause first, what its status means, a hint for the usual
    mistake behind it, and for a crash the end of its stderr (usually the traceback)."""
    status = report.status.value
    lines = [headline(report)]
    if report.message and not _cause_first(report):
        lines.append(f"referee: {markup(report.message)}")
    elif report.message and status in FAILURE_HELP:
        lines.append(f"({status}: {FAILURE_HELP[status]})")
    if hint:
        lines.append(f"hint: {escape(hint)}")
    if status in ("crash", "init_failure") or (status != "ok" and report.stderr):
        tail = report.stderr.rstrip().splitlines()[-CRASH_TAIL_LINES:]
        lines.append("stderr (last lines):" if tail else "stderr: (empty)")
        lines.extend(f"  {markup(line)}" for line in tail)
    if log is not None:
        lines.append(f"whole stderr: {log}")
    style = "red" if report.forfeited else "yellow"
    return Panel("\n".join(lines), title=f"seat {seat}: {markup(report.name)}", border_style=style)


def _cause_first(report: SeatReport) -> bool:
    """A bot that did not start: the referee's words (``command not found: 'ruby'``) are the
    cause; the status's general meaning comes after them."""
    return report.status == "init_failure" and bool(report.message)


def headline(report: SeatReport) -> str:
    status = report.status.value
    first = f"[bold]{status}[/]" + (" (forfeit)" if report.forfeited else "")
    if _cause_first(report):
        return f"{first}: {markup(report.message or '')}"
    return f"{first}: {FAILURE_HELP[status]}" if status in FAILURE_HELP else first


def failure_hint(report: SeatReport, bot: Entrant) -> str | None:
    """The usual mistake behind a failure: a program missing from the sandbox, or answers
    left in an unflushed stdout buffer."""
    message = report.message or ""
    if "command not found" in message or "No such file" in message:
        return "`arena runtimes` lists the interpreters and compilers each sandbox has"
    silent = report.status == "timeout" or "(timeout)" in message
    if silent and not isinstance(bot, BuiltinBot):
        return flush_hint(bot)
    return None


def write_stderr_logs(outcome: MatchOutcome, replay: Path) -> dict[int, Path]:
    """Each bot seat's stderr (as kept by the runner) beside the replay: ``<replay>.seatN.log``."""
    logs = {}
    for seat, report in enumerate(outcome.seats):
        if report.stderr:
            log = replay.with_name(f"{replay.name.removesuffix('.json')}.seat{seat}.log")
            log.write_text(report.stderr, encoding="utf-8")
            logs[seat] = log
    return logs


def build_all(seats: list[Entrant], console: Console) -> bool:
    """Run each distinct bot's build command once; False (after saying why) if one fails."""
    built: set[Path] = set()
    for bot in seats:
        if isinstance(bot, BuiltinBot) or not bot.build or bot.path in built:
            continue
        console.print(f"building {bot.name}: {markup(' '.join(bot.build))}")
        try:
            build_bot(bot)
        except BuildError as exc:
            print_error(console, exc)
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


def _table(args: argparse.Namespace, entrants: list[Entrant]) -> Game:
    """The game with one seat per bot (or ``--players``); a table the bots cannot fill is
    refused with the bots that do not list the game named (a shell glob often catches them)."""
    if not args.players and len(entrants) > 1:
        args.players = len(entrants)
    try:
        return build_game(args)
    except ConfigError as exc:
        strangers = [
            bot.name
            for bot in entrants
            if not isinstance(bot, BuiltinBot) and not bot.plays(args.game)
        ]
        if not strangers:
            raise
        raise ConfigError(
            f"{exc}; of the bots given, {', '.join(strangers)} do not list {args.game} "
            "in bot.toml: leave them out"
        ) from exc


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
        print_error(console, exc)
        return None


def default_replay_path(game: str, seed: int) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("replays") / f"{game}-{seed}-{stamp}.json"


@dataclass(frozen=True)
class Play:
    """One ``arena match`` run: the match and how to watch it."""

    game: Game
    seats: list[Entrant]
    seed: int
    sandbox: Sandbox
    tc: TimeControl
    wire: dict[int, BinaryIO]

    def run(self, console: Console, quiet: bool, verbose: bool) -> MatchOutcome:
        """Play the match with a live progress line, or printing each decision."""
        if verbose:
            return self._match(DecisionPrinter(console, [clean(b.name) for b in self.seats]))
        with Progress(*PROGRESS_COLUMNS, console=console, disable=quiet, transient=True) as bar:
            return self._match(ProgressLine(bar, int(self.game.params.get("deals", 1))))

    def _match(self, on_step: StepCallback) -> MatchOutcome:
        return run_match(
            self.game,
            self.seats,
            self.seed,
            sandbox=self.sandbox,
            time_control=self.tc,
            on_step=on_step,
            transcripts=self.wire,
        )


PROGRESS_COLUMNS = (
    TextColumn("deal {task.completed}/{task.total}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("{task.fields[steps]} decisions {task.fields[last]}"),
    TimeElapsedColumn(),
)


class ProgressLine:
    """The live line: deals done, decisions made, the last problem."""

    def __init__(self, progress: Progress, deals: int) -> None:
        self.progress, self.deals, self.count = progress, deals, 0
        self.task = progress.add_task("match", total=deals, steps=0, last="")

    def __call__(self, state: State, step: Step) -> None:
        self.count += 1
        last = "" if step["status"] == "ok" else f"seat {step['seat']}: {step['status']}"
        done = self.deals if state.is_terminal() else state.deal_index
        self.progress.update(self.task, completed=done, steps=self.count, last=last)


class DecisionPrinter:
    """``--verbose``: one line per decision with its time, status and the bot's debug text."""

    def __init__(self, console: Console, names: list[str]) -> None:
        self.console, self.names, self.count = console, names, 0

    def __call__(self, state: State, step: Step) -> None:
        self.count += 1
        line = Text(f"{self.count:>5} d{step['deal']} ", style="dim")
        line.append(seat_label(step["seat"], self.names) + ": ").append(action_text(step["action"]))
        if step["time_ms"] is not None:
            line.append(f"  {step['time_ms']:.1f} ms", style="dim")
        if step["status"] != "ok":
            line.append(f"  {step['status']}", style="red")
        if step["debug"]:
            line.append(f"  # {clean(step['debug'])}", style="italic")
        self.console.print(line)


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
            markup(report.name) + (f"\n({markup(report.self_name)})" if report.self_name else ""),
            f"{outcome.result.scores[i]:g}",
            f"[{style}]{status}[/]",
            str(report.strikes),
            "-" if report.cpu_s is None else f"{report.cpu_s:.2f}",
            f"{report.think_s:.2f}",
        )
    return uncut(table, "bot")
