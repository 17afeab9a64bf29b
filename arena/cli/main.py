"""Entry point of the ``arena`` command.

Each subcommand lives in its own module ``arena.cli.<name>`` exposing
``register(subparsers) -> None``, which adds its parser and sets ``func`` (taking the parsed
arguments and returning an exit code). A subcommand whose parser sets the default
``intermixed=True`` takes its options anywhere among its positional arguments
(``arena match GAME BOT --no-build BOT``).
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
    "check",
    "fetch",
    "challenge",
    "up",
    "runtimes",
    "doctor",
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


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The parsed arguments; options may sit between the bots of an intermixed subcommand."""
    words = list(sys.argv[1:] if argv is None else argv)
    sub = _subparser(parser, words[0]) if words else None
    if sub is None or not sub.get_default("intermixed"):
        return parser.parse_args(words)
    args = sub.parse_intermixed_args(words[1:])
    args.command = words[0]
    return args


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser | None = action.choices.get(name)
            return found
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parse(parser, argv)
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
