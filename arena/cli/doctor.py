"""``arena doctor``: what this machine lacks to build, run and isolate bots of every language."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from arena.termtext import markup
from sandbox import backend_class
from sandbox.base import SandboxError
from sandbox.languages import LanguageStatus, folded, missing_install_command
from sandbox.runtimes import list_languages


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="say which bot languages and sandboxes this machine lacks, and how to add them",
        description="Check the sandboxes (bubblewrap, Docker) and the toolchain of every "
        "language with a starter kit, as bots see them, and print the one command that "
        "installs the missing toolchains. Exit status 1 if a language or sandbox is missing.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="ask this machine's PATH only, without starting programs inside bubblewrap",
    )
    parser.set_defaults(func=run)


def sandboxes(console: Console) -> bool:
    """Print whether each isolating sandbox can run here; True if bubblewrap can."""
    usable = True
    for name, purpose in (("bwrap", "uploaded and local bots"), ("docker", "the Docker backend")):
        reason = backend_class(name).available()
        if reason is None:
            console.print(f"sandbox {name}: ok ({purpose})")
        else:
            console.print(f"sandbox {name}: [yellow]unavailable[/]: {markup(reason)}")
            usable = usable and name != "bwrap"
    return usable


def languages(console: Console, backend: str) -> list[LanguageStatus]:
    """Print each language's version as bots in ``backend`` see it, or why it is missing."""
    statuses = list_languages(backend)
    console.print(f"languages, as bots see them in the {backend} sandbox:")
    for status in statuses:
        if status.available:
            console.print(f"  {status.id:<11} ok       {markup(status.release or '')}")
        else:
            console.print(f"  {status.id:<11} [yellow]missing[/]  {markup(status.reason or '')}")
    return statuses


def run(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    bwrap_ok = sandboxes(console)
    backend = "bwrap" if bwrap_ok and not args.quick else "none"
    try:
        statuses = languages(console, backend)
    except SandboxError as exc:
        console.print(f"[red]error:[/] {markup(str(exc))}")
        return 1
    install = missing_install_command(statuses)
    if install is None:
        console.print(f"All {len(statuses)} languages are ready.")
        return 0 if bwrap_ok else 1
    missing = sum(not s.available for s in statuses)
    console.print(f"{missing} of {len(statuses)} languages missing; install them with:")
    console.print(folded(install), soft_wrap=True)
    return 1
