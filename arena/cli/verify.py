"""``arena verify``: re-simulate replays and report any difference from what they record."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arena.replay import ReplayError, read_replay, verify
from arena.termtext import clean


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("verify", help="re-simulate replays and check them")
    parser.add_argument("replays", nargs="+", metavar="REPLAY", help="replay files")
    parser.set_defaults(func=run)


def check_file(path: str) -> list[str]:
    """The differences found in one replay file (an unreadable file is one difference)."""
    try:
        replay = read_replay(path)
    except ReplayError as exc:
        # The heading line already names the file.
        return [str(exc).removeprefix(f"{Path(path)}: ")]
    return verify(replay)


def run(args: argparse.Namespace) -> int:
    failed = 0
    for path in args.replays:
        problems = check_file(path)
        if problems:
            failed += 1
            print(f"{path}: FAILED")
            for problem in problems:
                print(f"  {clean(problem)}")
        else:
            print(f"{path}: OK")
    return 1 if failed else 0
