"""``arena check BOT_DIR``: the server's upload stages run locally, with its verdict.

The stages are ``arena.checking``'s, the very functions the server calls on an upload: pack the
folder as ``arena submit`` sends it, read and check the manifest, unpack, build in the sandbox,
the protocol self-test, and a validation match against the sample bots. The exit status is 0
only when the server would make the bot active, so an author's CI can run it.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from arena.checking import Settings, Verdict, check_folder
from arena.termtext import clean
from arena.uploads import MAX_UPLOAD_BYTES, UnpackLimits

WIDTH = 80


def register(subparsers: Any) -> None:
    defaults = Settings()
    parser = subparsers.add_parser(
        "check",
        help="run the server's upload checks on a bot folder locally (exit 0: it would pass)",
        description="Run what the server runs on an upload (unpack and manifest checks, the "
        "build in the sandbox, the protocol self-test, a validation match against the sample "
        "bots) and print what the bot's page would show. Exit status 0 only when the server "
        "would make the bot active. The defaults are the server's.",
    )
    parser.add_argument("bot_dir", metavar="BOT_DIR", help="folder with bot.toml")
    parser.add_argument(
        "--sandbox", default=defaults.sandbox, help="sandbox (default: the server's, bwrap)"
    )
    parser.add_argument("--build-timeout", type=float, default=defaults.build_timeout, metavar="S")
    parser.add_argument(
        "--selftest-timeout", type=float, default=defaults.selftest_timeout, metavar="S"
    )
    parser.add_argument(
        "--move-timeout",
        type=float,
        default=defaults.move_s,
        metavar="S",
        help="seconds per move in the validation match",
    )
    parser.add_argument(
        "--time-bank", type=float, default=defaults.bank_s, metavar="S", help="time bank"
    )
    parser.add_argument(
        "--max-upload-mib",
        type=float,
        default=MAX_UPLOAD_BYTES / 2**20,
        metavar="MIB",
        help="the server's upload size limit",
    )
    parser.add_argument(
        "--no-validation-match",
        action="store_true",
        help="stop after the self-test (a server configured without validation matches)",
    )
    parser.set_defaults(func=run)


def settings_of(args: argparse.Namespace) -> Settings:
    return Settings(
        sandbox=args.sandbox,
        upload_max_bytes=int(args.max_upload_mib * 2**20),
        limits=UnpackLimits(),
        build_timeout=args.build_timeout,
        selftest_timeout=args.selftest_timeout,
        move_s=args.move_timeout,
        bank_s=args.time_bank,
        validation_match=not args.no_validation_match,
    )


def run(args: argparse.Namespace) -> int:
    folder = Path(args.bot_dir)
    if not folder.is_dir():
        print(f"arena check: {clean(folder)} is not a folder", file=sys.stderr)
        return 2
    try:
        from sandbox import SandboxUnavailable

        verdict = check_folder(folder, settings_of(args), say=lambda line: say(line))
    except SandboxUnavailable as exc:
        print(f"arena check: the sandbox cannot run here: {clean(exc)}", file=sys.stderr)
        return 2
    show(verdict)
    return 0 if verdict.accepted else 1


def say(line: str) -> None:
    print(f"... {line}", flush=True)


def show(verdict: Verdict) -> None:
    """What the bot's page would show, in at most ``WIDTH`` columns."""
    print()
    name = clean(verdict.name) if verdict.name else "(no manifest read)"
    print(wrapped(f"bot: {name}"))
    if verdict.games:
        print(wrapped("games: " + ", ".join(clean(g) for g in verdict.games)))
    if verdict.accepted:
        print("status: active (the server would accept this bot)")
    else:
        print(f"status: rejected at the {verdict.stage} stage")
        print(wrapped(f"reason: {clean(verdict.error)}", indent="  "))
    for title, log in (
        ("build log", verdict.build_log),
        ("validation log", verdict.validation_log),
    ):
        if log.strip():
            print(f"--- {title}")
            print(wrapped(clean(log.rstrip(), lines=True), indent="  "))


def wrapped(text: str, indent: str = "") -> str:
    """``text`` (already cleaned) with every line folded to ``WIDTH`` columns."""
    out = []
    for line in text.splitlines() or [""]:
        out.extend(
            textwrap.wrap(
                line,
                WIDTH,
                subsequent_indent=indent,
                break_long_words=True,
                replace_whitespace=False,
            )
            or [""]
        )
    return "\n".join(out)
