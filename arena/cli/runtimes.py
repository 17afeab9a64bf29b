"""``arena runtimes``: the languages and programs a bot's commands can call, per sandbox."""

from __future__ import annotations

import argparse
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from arena.cli.errors import print_error
from arena.cli.tables import uncut
from arena.termtext import markup
from sandbox import BACKENDS, SandboxError
from sandbox.languages import LANGUAGES, LanguageStatus, folded, missing_install_command
from sandbox.runtimes import Found, list_languages, list_runtimes, runtimes_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "runtimes",
        help="list the languages, interpreters and compilers each sandbox offers to bots",
        description="List the languages with a starter kit and their version in each sandbox, "
        "then what a bot's run and build commands can call there: bwrap and none see this "
        "machine's programs, docker those of its runner image.",
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


def languages_table(statuses: dict[str, list[LanguageStatus]]) -> Table:
    """One row per language, one column per sandbox: the version there, or ``missing``."""
    table = Table(title="languages (bot.toml language)", header_style="bold")
    table.add_column("language")
    table.add_column("name")
    for backend in statuses:
        table.add_column(backend)
    for row, language in enumerate(LANGUAGES):
        cells = [_cell(listed[row]) for listed in statuses.values()]
        table.add_row(language.id, language.name, *cells)
    return uncut(table, "language")


def _cell(status: LanguageStatus) -> str:
    return markup(status.release or "") if status.available else "[yellow]missing[/]"


def print_missing(console: Console, statuses: dict[str, list[LanguageStatus]]) -> None:
    """Why each missing language is missing, and the command that adds it."""
    for backend, listed in statuses.items():
        for status in listed:
            if not status.available:
                console.print(f"{backend}: {status.id}: {markup(status.reason or '')}")
        install = missing_install_command(listed) if backend != "docker" else None
        if install is not None:
            console.print(f"{backend}: to add the missing ones, run:")
            console.print(folded(install), soft_wrap=True)
        elif backend == "docker" and not all(s.available for s in listed):
            console.print("docker: rebuild the runner image: bash scripts/ci-docker.sh")


def run(args: argparse.Namespace) -> int:
    backends = tuple(args.sandbox or BACKENDS)
    if args.json:
        print(orjson.dumps(runtimes_json(backends), option=orjson.OPT_INDENT_2).decode())
        return 0
    console = Console(highlight=False)
    found: dict[str, tuple[Found, ...]] = {}
    statuses: dict[str, list[LanguageStatus]] = {}
    for backend in backends:
        try:
            found[backend] = list_runtimes(backend)
            statuses[backend] = list_languages(backend)
        except SandboxError as exc:
            print_error(console, exc, "unavailable")
    if statuses:
        console.print(languages_table(statuses))
        print_missing(console, statuses)
    for backend, programs in found.items():
        console.print(table_of(backend, programs))
    console.print(
        "A bot's run command names one of these (python3, node...) or a program in its own "
        "folder (./bot), built by its build command; see docs/bots.md."
    )
    return 0 if found else 1
