"""``arena submit``: pack a bot folder, upload it to a server, and follow its validation."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from arena import checking
from arena.bots import ManifestError, load_bot
from arena.cli.remote import ServerError, get_json, multipart, request, server_url, token_of
from arena.termtext import clean, echo
from arena.uploads import MAX_UPLOAD_BYTES

SETTLED = frozenset({"active", "rejected", "retired"})
DEFAULT_WAIT_S = 300.0
STAGES = {
    "uploaded": "uploaded, waiting in the queue for a worker to build and self-test it",
    "building": "building: its build command runs in the sandbox",
    "validating": "self-test and validation match: checking that it speaks the protocol",
    "active": "active: it plays rated matches on the ladders of its games",
    "rejected": "rejected: it will not play (the reason follows)",
    "retired": "retired: another version plays (a newer one, or the one the owner chose on the "
    "bot's page, where this one can be chosen)",
}
"""What each version status means, in the words ``arena submit`` prints while it waits."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "submit", help="upload a bot folder to an arena server and wait for its validation"
    )
    parser.add_argument("bot_dir", metavar="BOT_DIR", nargs="?", help="folder with bot.toml")
    parser.add_argument("--server", help="server URL (ARENA_SERVER; default 127.0.0.1:8000)")
    parser.add_argument("--token", help="API token from your account page (ARENA_TOKEN)")
    parser.add_argument(
        "--wait",
        nargs="?",
        const="forever",
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="follow the build and validation for SECONDS (default 300; --wait alone: until "
        "it is active or rejected; --wait 0: do not wait)",
    )
    parser.set_defaults(func=run)


def pack(folder: Path) -> bytes:
    """A zip of the bot folder, as the server's own stages pack one (``arena.checking``)."""
    return checking.pack(folder)


def upload(server: str, token: str, name: str, data: bytes) -> dict[str, Any]:
    """Send the archive; the new version as the server describes it."""
    body, content_type = multipart({}, {"file": (f"{name}.zip", data)})
    try:
        answer = request(
            server, "/uploads", token=token, body=body, content_type=content_type, timeout=120
        )
    except ServerError as exc:
        cut = any(word in str(exc) for word in ("Broken pipe", "reset by peer"))
        if exc.status is None and cut:
            raise ServerError(
                f"{exc}: the server closed the connection while the upload "
                f"({checking.mib(len(data))}) was sent; it refuses uploads over its size "
                "limit without reading them"
            ) from None
        raise
    version: dict[str, Any] = json.loads(answer)["data"]
    return version


def wait_for(server: str, token: str, version: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Poll the version until it is active or rejected (or ``seconds`` pass), saying each new
    status as it comes. A 5xx or an unreachable server is retried with a growing pause (the
    upload is safe on the server); a refusal (4xx) ends the wait with ``ServerError``."""
    deadline = time.monotonic() + seconds
    delay, trouble = 0.5, 0.5
    say_status(version)
    while version["status"] not in SETTLED and time.monotonic() < deadline:
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        try:
            fresh: dict[str, Any] = get_json(server, f"/versions/{version['id']}", token)["data"]
        except ServerError as exc:
            if not exc.transient:
                raise
            trouble = min(trouble * 2, 30.0)
            status = clean(version["status"])
            print(f"server trouble ({clean(exc)}); still {status}, retrying in {trouble:g} s")
            delay = trouble
            continue
        if fresh["status"] != version["status"]:
            say_status(fresh)
        version, delay, trouble = fresh, min(delay * 1.5, 5.0), 0.5
    return version


def say_status(version: dict[str, Any]) -> None:
    status = version["status"]
    print(f"{time.strftime('%H:%M:%S')} {STAGES.get(status) or clean(status)}", flush=True)


def wait_and_folder(args: argparse.Namespace) -> tuple[float, Path]:
    """``--wait``'s seconds and the bot folder; ``--wait BOT_DIR`` (a bare ``--wait`` that took
    the folder as its value) is read as waiting without a limit. ``ValueError`` if unclear."""
    wait, folder = args.wait, args.bot_dir
    if isinstance(wait, str) and wait != "forever":
        try:
            wait = float(wait)
        except ValueError:
            if folder is not None:
                raise ValueError(f"--wait takes a number of seconds, not {wait!r}") from None
            wait, folder = "forever", wait
    if folder is None:
        raise ValueError("name the bot folder (the one with bot.toml)")
    seconds = math.inf if wait == "forever" else float(wait)
    if not seconds >= 0:
        raise ValueError(f"--wait takes a number of seconds >= 0, not {wait}")
    return seconds, Path(folder)


def run(args: argparse.Namespace) -> int:
    try:
        args.wait, args.bot_dir = wait_and_folder(args)
    except ValueError as exc:
        print(f"arena submit: {exc}", file=sys.stderr)
        return 2
    token = token_of(args.token)
    if not token:
        print("arena submit: an API token is needed (--token or ARENA_TOKEN)", file=sys.stderr)
        return 2
    try:
        manifest = load_bot(args.bot_dir)
    except ManifestError as exc:
        print(f"arena submit: {clean(exc)}", file=sys.stderr)
        return 2
    server = server_url(args.server)
    data = pack(args.bot_dir)
    if len(data) > MAX_UPLOAD_BYTES:
        refusal = checking.size_refusal(len(data), MAX_UPLOAD_BYTES)
        print(f"arena submit: not sent: {refusal} (packed, as zip)", file=sys.stderr)
        return 1
    try:
        version = upload(server, token, manifest.name, data)
        number, key = clean(version["number"]), clean(version["id"])
        print(f"uploaded {manifest.name} version {number} (version id {key})")
        if version.get("bot_id") is not None:
            # The bot id, not the version id, is what `arena challenge` and the API take.
            print(f"bot page: {server}/bots/{clean(version['bot_id'])}", flush=True)
        if args.wait > 0 and version["status"] not in SETTLED:
            version = wait_for(server, token, version, args.wait)
    except ServerError as exc:
        print(f"arena submit: {clean(exc)}", file=sys.stderr)
        return 1
    return report(version)


def report(version: dict[str, Any]) -> int:
    """Print where the version stands; 0 if active or still on its way, 1 if rejected."""
    status = clean(version["status"])
    print(f"status: {status}")
    if status == "rejected":
        print(f"reason: {clean(version.get('error'))}")
        for key in ("build_log", "validation_log"):
            if version.get(key):
                echo(f"--- {key.replace('_', ' ')}\n{str(version[key]).rstrip()}")
        return 1
    if status not in SETTLED:
        print(
            f"still {status}; follow it on the bot's page, or run again with --wait "
            "(alone: until it is active or rejected)"
        )
    return 0
