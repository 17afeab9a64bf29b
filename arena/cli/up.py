"""``arena up``: the whole platform on this machine (web, workers, scheduler, embedded broker).

The engine stays free of the service's dependencies: this command only starts
``python -m web.embedded`` in a child process and waits for it.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "up",
        help="start the platform locally (SQLite and an embedded broker under ./var)",
        description="Start the web server, a worker pool, the ladder scheduler and an embedded "
        "broker, with the sample bots on the ladders. Ctrl-C stops everything; running "
        "it again resumes. Set ARENA_DATABASE_URL and ARENA_REDIS_URL to use PostgreSQL "
        "and Redis instead.",
    )
    parser.add_argument("--var", default="var", help="state folder (default ./var)")
    parser.add_argument("--port", type=int, default=8000, help="web server port (default 8000)")
    parser.add_argument("--workers", type=int, default=2, help="match workers (default 2)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    command = [
        sys.executable, "-m", "web.embedded",
        "--var", args.var, "--port", str(args.port), "--workers", str(args.workers),
    ]  # fmt: skip
    child = subprocess.Popen(command)

    def forward(signum: int, _frame: object) -> None:
        # The child stops everything in order; this process only passes the request on.
        child.send_signal(signal.SIGTERM)

    previous = [signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)]
    try:
        return child.wait()
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
