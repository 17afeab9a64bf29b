"""``arena fetch``: download a server match's replay, to replay or verify it locally."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from arena.cli.remote import ServerError, request, server_url, token_of
from arena.replay import ReplayError, loads_replay, verify, write_replay
from arena.termtext import clean


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "fetch", help="download a finished match's replay from an arena server"
    )
    parser.add_argument("match_id", metavar="MATCH_ID", type=int, help="the match number")
    parser.add_argument("--server", help="server URL (ARENA_SERVER; default 127.0.0.1:8000)")
    parser.add_argument("--token", help="API token: includes your own seats' debug text")
    parser.add_argument("--out", type=Path, help="file to write (default match-<id>.json)")
    parser.add_argument(
        "--verify", action="store_true", help="re-simulate it and compare with what it records"
    )
    parser.add_argument(
        "--logs",
        action="store_true",
        help="also download the whole stderr log of each seat your bots held (needs --token): "
        "match-<id>-seat<k>.log next to the replay",
    )
    parser.set_defaults(func=run)


def _why_partial(data: bytes) -> str:
    """Why the server sent no whole replay: the match is running, or its deal group sealed."""
    try:
        doc = json.loads(data)
    except ValueError:
        return "not a replay"
    if isinstance(doc, dict) and doc.get("sealed"):
        return f"sealed: {clean(doc['sealed'])}"
    if isinstance(doc, dict) and doc.get("live"):
        return f"the match is still {clean(doc.get('status', 'being played'))}"
    return "is it still running?"


def run(args: argparse.Namespace) -> int:
    server = server_url(args.server)
    try:
        data = request(server, f"/matches/{args.match_id}/replay", token=token_of(args.token))
        replay = loads_replay(data)
    except ServerError as exc:
        print(f"arena fetch: {clean(exc)}", file=sys.stderr)
        return 1
    except ReplayError as exc:
        why = _why_partial(data)
        print(f"arena fetch: match {args.match_id}: {clean(exc)} ({why})", file=sys.stderr)
        return 1
    out = args.out or Path(f"match-{args.match_id}.json")
    write_replay(out, replay, indent=True)
    steps, seed = len(replay["steps"]), clean(replay["seed"])
    print(f"match {args.match_id}: {steps} steps, seed {seed} -> {clean(out)}")
    if args.logs and not _fetch_logs(server, args, len(replay["seats"]), out):
        return 1
    if not args.verify:
        return 0
    problems = verify(replay)
    for problem in problems:
        print(f"  {clean(problem)}")
    print(f"{clean(out)}: {'FAILED' if problems else 'OK (same seed, same result)'}")
    return 1 if problems else 0


def _fetch_logs(server: str, args: argparse.Namespace, seats: int, out: Path) -> bool:
    """Save the whole log of each seat the token's owner may read; False on a server error."""
    token = token_of(args.token)
    if not token:
        print("arena fetch: --logs needs your API token (--token or ARENA_TOKEN)", file=sys.stderr)
        return False
    saved = 0
    for seat in range(seats):
        path = f"/matches/{args.match_id}/seats/{seat}/log"
        try:
            text = request(server, path, token=token)
        except ServerError as exc:
            if exc.status == 404:  # not one of your seats, or the seat wrote nothing
                continue
            print(f"arena fetch: seat {seat}'s log: {clean(exc)}", file=sys.stderr)
            return False
        target = out.with_name(f"match-{args.match_id}-seat{seat}.log")
        target.write_bytes(text)
        saved += 1
        print(f"seat {seat}'s whole log, {len(text)} bytes -> {clean(target)}")
    if not saved:
        print(f"match {args.match_id}: no seat log of yours (none of its seats, or none wrote)")
    return True
