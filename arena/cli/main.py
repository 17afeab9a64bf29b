"""Entry point of the ``arena`` command.

Each subcommand lives in its own module ``arena.cli.<name>`` exposing
``register(subparsers) -> None``, which adds its parser and sets ``func`` (taking the parsed
arguments and returning an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from arena import __version__

COMMANDS = (
    "play",
    "match",
    "tournament",
    "replay",
    "verify",
    "games",
    "submit",
    "fetch",
    "up",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena", description="Kozyri Arena: play, test and rank card-game bots."
    )
    parser.add_argument("--version", action="version", version=f"arena {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"arena.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"arena.cli.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
