"""``arena runtimes``: the interpreters and compilers a bot's commands can call, per sandbox."""

from __future__ import annotations

import argparse
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from arena.cli.errors import print_error
from arena.cli.tables import uncut
from sandbox import BACKENDS, SandboxError
from sandbox.runtimes import Found, list_runtimes, runtimes_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runtimes",
        help="list the interpreters and compilers each sandbox offers to bots",
        description="List what a bot's run and build commands can call in each sandbox: "
        "bwrap and none see this machine's programs, docker those of its runner image.",
    )
    parser.add_argument(
        "--sandbox",
        choices=list(BACKENDS),
        action="append",
        help="only this sandbox (repeatable; default: every one)",
    )
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def table_of(backend: str, found: tuple[Found, ...]) -> Table:
    table = Table(title=f"sandbox {backend}", header_style="bold")
    for column in ("command", "language", "kind", "version"):
        table.add_column(column)
    for item in found:
        table.add_row(item.command, item.language, item.kind, item.version)
    return uncut(table, "command")


def run(args: argparse.Namespace) -> int:
    backends = tuple(args.sandbox or BACKENDS)
    if args.json:
        print(orjson.dumps(runtimes_json(backends), option=orjson.OPT_INDENT_2).decode())
        return 0
    console = Console(highlight=False)
    usable = 0
    for backend in backends:
        try:
            found = list_runtimes(backend)
        except SandboxError as exc:
            print_error(console, exc, "unavailable")
            continue
        usable += 1
        console.print(table_of(backend, found))
    console.print(
        "A bot's run command names one of these (python3, node...) or a program in its own "
        "folder (./bot), built by its build command; see docs/bots.md."
    )
    return 0 if usable else 1
