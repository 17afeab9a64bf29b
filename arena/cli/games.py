"""``arena games``: the registered games, their table sizes, parameters and variants."""

from __future__ import annotations

import argparse
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from arena.cli.errors import print_error
from arena.cli.tables import uncut
from arena.games import game_class, names
from arena.games.base import JSON, ConfigError, GameSpec


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("games", help="list games, parameters and variants")
    parser.add_argument("game", nargs="?", help="show this game in detail")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def load_spec(name: str) -> GameSpec | None:
    """The spec of a registered game, or ``None`` if its module is not installed yet."""
    try:
        return game_class(name).spec
    except ModuleNotFoundError:
        return None


def bounds(param: JSON) -> str:
    parts = []
    if "minimum" in param or "maximum" in param:
        parts.append(f"{param.get('minimum', '')}..{param.get('maximum', '')}")
    if param.get("choices"):
        parts.append(" | ".join(str(c) for c in param["choices"]))
    return " ".join(parts)


def overview(console: Console) -> None:
    table = Table(title="Games", header_style="bold")
    for column in ("game", "title", "players", "variants"):
        table.add_column(column)
    for name in names():
        spec = load_spec(name)
        if spec is None:
            table.add_row(name, "[dim](not available)[/]", "", "")
            continue
        players = f"{spec.players_text()}{_default_players(spec)}"
        table.add_row(name, spec.title, players, ", ".join(spec.variants) or "—")
    console.print(uncut(table, "game"))


def _default_players(spec: GameSpec) -> str:
    fixed = spec.min_players == spec.max_players
    return "" if fixed else f" (default {spec.default_players})"


def detail(console: Console, spec: GameSpec) -> None:
    info = spec.describe()
    console.print(f"[bold]{spec.title}[/] ({spec.name})")
    console.print(f"players: {spec.players_text()}{_default_players(spec)}")
    console.print(f"rulebook: {spec.rulebook or '—'}")
    params = Table(title="Parameters", header_style="bold")
    for column in ("name", "kind", "default", "bounds", "meaning"):
        params.add_column(column)
    for p in info["params"]:
        default = orjson.dumps(p["default"]).decode()
        params.add_row(p["name"], p["kind"], default, bounds(p), p["doc"])
    console.print(uncut(params, "name"))
    variants = Table(title="Variants", header_style="bold")
    variants.add_column("variant")
    variants.add_column("settings")
    for name, settings in info["variants"].items():
        mark = " (default)" if name == spec.default_variant else ""
        variants.add_row(name + mark, settings_text(settings))
    console.print(uncut(variants, "variant"))


def settings_text(settings: JSON) -> str:
    """A variant's settings as ``name=value`` pairs (values as JSON), split between pairs rather
    than inside a name on a narrow terminal; ``(defaults)`` when it changes nothing."""
    pairs = [f"{key}={orjson.dumps(value).decode()}" for key, value in settings.items()]
    return ", ".join(pairs) or "(defaults)"


def as_json(game: str | None) -> JSON:
    if game:
        return game_class(game).spec.describe()
    specs = {name: load_spec(name) for name in names()}
    return {name: spec.describe() if spec else None for name, spec in specs.items()}


def run(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    try:
        if args.json:
            print(orjson.dumps(as_json(args.game), option=orjson.OPT_INDENT_2).decode())
        elif args.game:
            detail(console, game_class(args.game).spec)
        else:
            overview(console)
    except (ConfigError, ModuleNotFoundError) as exc:
        print_error(console, exc)
        return 2
    return 0
