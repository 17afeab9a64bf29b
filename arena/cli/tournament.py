"""``arena tournament``: a local round robin or Swiss tournament between bot folders."""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.bots import load_bot
from arena.cli.errors import print_error
from arena.cli.match import build_all, load_entrant, unique_path
from arena.cli.tables import fitted, uncut
from arena.games import game_class
from arena.games.base import GameError
from arena.runner import SeatStatus
from arena.termtext import console as safe_console
from arena.termtext import markup
from arena.tournament import (
    FORMATS,
    MatchRecord,
    Standing,
    Tournament,
    TournamentSpec,
    entry_names,
    load_summary,
)
from sandbox import BACKENDS, SandboxError, default_sandbox_name

ERROR_COLUMNS = tuple(str(s) for s in SeatStatus if s is not SeatStatus.OK)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "tournament",
        help="play a local tournament between bots and print the standings",
        description=(
            "Play a round robin or Swiss tournament between bot folders (or builtin:random, "
            "builtin:greedy). Replays and tournament.json, enough to play it all again, are "
            "written to --out."
        ),
    )
    p.add_argument("game", nargs="?", metavar="GAME", help="game name (see `arena games`)")
    p.add_argument(
        "bots", nargs="*", metavar="BOT_DIR", help="bot folders; repeat one to seat copies"
    )
    p.add_argument("--format", choices=FORMATS, default="round-robin")
    p.add_argument("--matches", type=int, default=12, help="matches in all (default 12)")
    p.add_argument("--mirrored", action="store_true", help="replay each deal with seats rotated")
    p.add_argument("--jobs", type=int, default=1, help="matches played in parallel")
    p.add_argument("--seed", type=int, default=0, help="tournament seed; every match seed follows")
    p.add_argument("--players", type=int, help="table size (default: the game's)")
    p.add_argument("--variant", help="named rules variant")
    p.add_argument(
        "--param", action="append", default=[], metavar="K=V", help="game parameter (repeatable)"
    )
    p.add_argument("--sandbox", choices=sorted(BACKENDS), help="default: bwrap if available")
    p.add_argument("--out", type=Path, help="output folder (default ./tournaments/<game>-<seed>)")
    p.add_argument("--no-timeouts", action="store_true", help="never time a bot out (debugging)")
    p.add_argument("--no-build", action="store_true", help="skip the bots' build commands")
    p.add_argument(
        "--include-unlisted",
        action="store_true",
        help="also seat bots whose bot.toml does not list the game (left out by default)",
    )
    p.add_argument(
        "--again",
        type=Path,
        metavar="TOURNAMENT_JSON",
        help="play the tournament of a tournament.json again (--sandbox may override)",
    )
    p.set_defaults(func=run, intermixed=True)


def run(args: argparse.Namespace) -> int:
    err = safe_console(stderr=True)
    out = args.out
    try:
        spec = _spec(args)
        out = _out_folder(out, spec)
        tournament = Tournament(spec, entry_names(spec.bots), out, jobs=max(1, args.jobs))
        warnings = tournament.check()
    except (ValueError, GameError, SandboxError) as exc:
        print_error(err, exc)
        return 2
    for warning in warnings:
        print_error(err, warning, "warning")
    if not args.no_build and not build_all([load_entrant(s) for s in spec.bots], err):
        return 2
    out.mkdir(parents=True, exist_ok=True)
    rows = _play(tournament, err)
    console = safe_console()
    if not console.is_terminal and "COLUMNS" not in os.environ:  # a pipe or a file: no width
        console = safe_console(width=160)
    table = standings_table(rows, tournament.players)
    console.print(fitted(console, table, "mu", "sigma", "avg", "played"))
    summary = tournament.write_summary()
    err.print(
        f"replays and summary in {out} (again: arena tournament --again {summary})", soft_wrap=True
    )
    return 0


def _out_folder(given: Path | None, spec: TournamentSpec) -> Path:
    """``--out``, refused if it holds a tournament already; by default a fresh folder
    ``tournaments/<game>-<seed>`` (``-2``, ``-3``... when that one is taken)."""
    if given is None:
        return unique_path(Path("tournaments") / f"{spec.game}-{spec.seed}")
    if given.exists() and any(given.iterdir()):
        raise ValueError(f"{given} is not empty; name another --out folder (or delete it)")
    return given


def _spec(args: argparse.Namespace) -> TournamentSpec:
    if args.again is not None:
        again = load_summary(args.again)
        return replace(again, sandbox=args.sandbox) if args.sandbox else again
    if not args.game or len(args.bots) < 2:
        raise ValueError("give a GAME and at least two BOT_DIRs (or --again TOURNAMENT_JSON)")
    bots = args.bots if args.include_unlisted else _listing(args.game, args.bots)
    if len(bots) < 2:
        raise ValueError(f"fewer than two of the given bots list {args.game} in their bot.toml")
    sandbox = args.sandbox or default_sandbox_name()
    if sandbox is None:
        raise ValueError("no isolating sandbox here; pass --sandbox none for your own bots only")
    return TournamentSpec(
        game=args.game,
        bots=tuple(_source(b) for b in bots),
        format=args.format,
        matches=args.matches,
        mirrored=args.mirrored,
        seed=args.seed,
        players=args.players or _table_for(args.game, len(bots)),
        variant=args.variant,
        params=dict(_param(p) for p in args.param),
        sandbox=sandbox,
        timeouts=not args.no_timeouts,
    )


def _table_for(game: str, bots: int) -> int | None:
    """Without ``--players``: the game's default table, or one seat per bot when there are
    fewer bots than that and the game allows such a table (None: the game's default)."""
    try:
        spec = game_class(game).spec
    except (ModuleNotFoundError, GameError):
        return None  # the game's own check names the problem
    if spec.min_players <= bots < spec.default_players:
        Console(stderr=True).print(f"{bots} bots: tables of {bots} (--players to change)")
        return bots
    return None


def _param(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"--param wants KEY=VALUE, not {text!r}")
    try:
        return key, orjson.loads(value)
    except orjson.JSONDecodeError:
        return key, value


def _listing(game: str, bots: list[str]) -> list[str]:
    """The bots that list ``game`` in their manifest; say which others are left out and why.

    A shell glob such as ``sample_bots/python/*`` names bots of every game; seating a bot in a
    game it was not written for only measures its crashes.
    """
    err = Console(stderr=True)
    kept = []
    for source in bots:
        if source.startswith("builtin:"):
            kept.append(source)
            continue
        bot = load_bot(source)
        if bot.plays(game):
            kept.append(source)
        else:
            listed = ", ".join(bot.games) or "none"
            err.print(f"left out {bot.name}: it plays {listed}, not {game} (--include-unlisted)")
    return kept


def _source(bot: str) -> str:
    return bot if bot.startswith("builtin:") else str(Path(bot).resolve())


def _play(tournament: Tournament, err: Console) -> list[Standing]:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task(tournament.spec.format, total=tournament.total_matches())

        def advance(record: MatchRecord) -> None:
            progress.advance(task)

        return tournament.run(advance)


def standings_table(rows: list[Standing], players: int) -> Table:
    """The standings as a rich table: places read 1st/2nd/..., errors count per seat status."""
    table = Table(title="Standings")
    places_heading = "/".join(_ordinal(p) for p in range(1, players + 1))
    table.add_column("#", justify="right")
    table.add_column("bot")
    for heading in ("rating", "mu", "sigma", "played", places_heading, "avg", "points"):
        table.add_column(heading, justify="right")
    table.add_column("errors")
    for rank, row in enumerate(rows, start=1):
        places = "/".join(str(row.places[i]) for i in range(min(players, len(row.places))))
        errors = ", ".join(f"{s} {row.errors[s]}" for s in ERROR_COLUMNS if row.errors.get(s))
        table.add_row(
            str(rank),
            markup(row.name),
            f"{row.score:.2f}",
            f"{row.rating.mu:.2f}",
            f"{row.rating.sigma:.2f}",
            str(row.matches),
            places,
            f"{row.average_place:.2f}",
            f"{row.points:g}",
            errors or "-",
        )
    return uncut(table, "bot")


def _ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th') }"
