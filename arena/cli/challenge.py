"""``arena challenge``: ask a server for an unrated match or series between chosen bots, and
follow it to its results."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any

from arena.cli.remote import ServerError, get_json, request, server_url, token_of
from arena.termtext import clean

DONE = frozenset({"finished", "failed"})


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "challenge",
        help="challenge chosen bots on a server to an unrated match or series",
        description="Queue an unrated match or series on a server between chosen bots (one "
        "SEAT per seat of the ladder; at least one of them yours) and print its results. It "
        "plays ahead of the ladders and never changes a rating.",
    )
    parser.add_argument("ladder", metavar="LADDER", help="ladder slug, e.g. challenge-2p-standard")
    parser.add_argument(
        "seats",
        metavar="SEAT",
        nargs="+",
        help="a bot id (the version it plays now), or BOT:VERSION for a version of your own bot",
    )
    parser.add_argument(
        "--deals", type=int, default=1, help="deals to play (on a mirrored ladder each in every "
        "seat rotation; default 1)"
    )  # fmt: skip
    parser.add_argument("--server", help="server URL (ARENA_SERVER; default 127.0.0.1:8000)")
    parser.add_argument("--token", help="API token from your account page (ARENA_TOKEN)")
    parser.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="follow the matches for SECONDS (default 600; 0: queue and return)",
    )
    parser.set_defaults(func=run)


def entries(seats: list[str]) -> list[dict[str, int]]:
    """``["12", "15:3"]`` as the API's entries; ``ValueError`` naming a seat that is not one."""
    made = []
    for seat in seats:
        bot, _, version = seat.partition(":")
        if not _digits(bot) or (version and not _digits(version)) or seat.endswith(":"):
            raise ValueError(f"{seat!r} is not a seat: give a bot id, or BOT:VERSION")
        entry = {"bot": int(bot)}
        if version:
            entry["version"] = int(version)
        made.append(entry)
    return made


def _digits(text: str) -> bool:
    """Whether ``text`` is a number in ASCII digits (``str.isdigit`` also takes ``²``)."""
    return text.isascii() and text.isdigit()


def run(args: argparse.Namespace) -> int:
    token = token_of(args.token)
    if not token:
        print("arena challenge: an API token is needed (--token or ARENA_TOKEN)", file=sys.stderr)
        return 2
    try:
        body = {"ladder": args.ladder, "entries": entries(args.seats), "deals": args.deals}
        if not args.wait >= 0 or math.isinf(args.wait):
            raise ValueError(f"--wait takes a number of seconds >= 0, not {args.wait}")
    except ValueError as exc:
        print(f"arena challenge: {exc}", file=sys.stderr)
        return 2
    server = server_url(args.server)
    try:
        answer = request(
            server,
            "/challenges",
            token=token,
            body=json.dumps(body).encode(),
            content_type="application/json",
        )
        challenge: dict[str, Any] = json.loads(answer)["data"]
        print(f"challenge {clean(challenge['id'])} queued: {len(challenge['matches'])} matches")
        print(f"  {server}/challenges/{clean(challenge['id'])}")
        challenge = follow(server, token, challenge, args.wait)
    except ServerError as exc:
        print(f"arena challenge: {clean(exc)}", file=sys.stderr)
        return 1
    return report(server, challenge)


def follow(server: str, token: str, challenge: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Poll the challenge until all its matches are done (or ``seconds`` pass), printing a line
    each time its matches move on, so a long wait behind other matches is not silent."""
    deadline = time.monotonic() + seconds
    delay = 1.0
    shown = progress(challenge)
    while challenge["status"] not in DONE and time.monotonic() < deadline:
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        challenge = get_json(server, f"/challenges/{challenge['id']}", token)["data"]
        delay = min(delay * 1.5, 5.0)
        if progress(challenge) != shown:
            shown = progress(challenge)
            print(f"{time.strftime('%H:%M:%S')} {shown}", flush=True)
    return challenge


def progress(challenge: dict[str, Any]) -> str:
    """How many of the challenge's matches are in each state, e.g. ``1 running, 3 queued``."""
    counts: dict[str, int] = {}
    for match in challenge["matches"]:
        status = clean(match["status"])
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


def report(server: str, challenge: dict[str, Any]) -> int:
    """Print the standings and each match's replay; 0 unless every match failed."""
    status = clean(challenge["status"])
    print(f"status: {status}")
    for row in challenge["standings"]:
        average = row["average_place"]
        numeric = isinstance(average, (int, float))
        place = f"{average:.2f}" if numeric else "-" if average is None else clean(average)
        # The bot on its own line: a long name (up to 64 characters) never pushes the figures
        # past an 80-column terminal's edge.
        print(f"  {clean(row['bot'])} v{clean(row['version'])} ({clean(row['owner'])})")
        print(
            f"      {clean(row['wins'])} wins of {clean(row['matches'])}, average place {place}, "
            f"{clean(row['errors'])} with errors"
        )
    for match in challenge["matches"]:
        replay = f"  replay {server}{clean(match['replay_url'])}" if match["replay_url"] else ""
        print(f"  match {clean(match['id'])}: {clean(match['status'])}{replay}")
    if status not in DONE:
        print("still playing: follow it on its page, or run `arena challenge` with a longer --wait")
    return 1 if status == "failed" else 0
