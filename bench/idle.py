"""What an idle platform costs: ``arena up`` with only the house bots, its CPU summed over every
process it started (web, workers, beat, Redis, the bots), as a percentage of one core.

Two runs side by side, each on a fresh temporary state folder:

- **unthrottled** (the anchor): ``ARENA_SETTLED_SIGMA=0``, the ladders play without pause, as
  before the quiet idle; sampled from the first finished ladder match on;
- **quiet**: the ladders settle at once (``ARENA_SETTLED_SIGMA`` above the starting sigma, no
  placement matches), so each plays its first table and then one table per
  ``SETTLED_INTERVAL``. The bench waits until those first tables are done, then samples.

Each run samples for ``--seconds`` (120). A window shorter than the interval may hold no table,
so the quiet figure adds the tables' share: the CPU of the first round of tables (measured from
the start of that round until every ladder rested, less the idle rate over that time) spread
over ``--interval`` (600, the default ``SETTLED_INTERVAL``). The last line:

    idle_core_pct=<quiet, tables included> unthrottled_core_pct=<..> ratio=<quiet/unthrottled>

    .venv/bin/python bench/idle.py [--seconds 120] [--interval 600] [--games a,b]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")
START_LIMIT = 600.0  # s: migrations and the sample bots on a busy machine
SETTLE_LIMIT = 900.0  # s: the first round of tables


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _tree(root: int) -> Iterator[int]:
    tree, todo = _children(), [root]
    while todo:
        pid = todo.pop()
        yield pid
        todo.extend(tree.get(pid, []))


def cpu_seconds(root: int) -> float:
    """CPU time of ``root`` and every live descendant, with the children each has reaped (a bot
    process that ended is counted in its parent's ``cutime``/``cstime``, never twice)."""
    total = 0
    for pid in _tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile: its time moved to its parent
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / TICKS


class Platform:
    def __init__(self, games: str, extra: dict[str, str]) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="arena-idle-"))
        self.var = self.folder / "var"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.env.update(extra)
        if games:
            self.env["ARENA_DEMO_GAMES"] = games
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        arena = Path(sys.executable).parent / "arena"
        command = [str(arena), "up", "--var", str(self.var), "--port", str(self.port)]
        log = (self.folder / "up.log").open("wb")
        self.process = subprocess.Popen(
            command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder
        )
        deadline = time.monotonic() + START_LIMIT
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = (self.folder / "up.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"the platform did not start:\n{tail}")
            time.sleep(1)

    def _healthy(self) -> bool:
        try:
            url = f"http://127.0.0.1:{self.port}/healthz"
            with urllib.request.urlopen(url, timeout=5) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    def matches(self) -> tuple[int, int]:
        """(ladder matches finished, ladder matches queued or running)."""
        with sqlite3.connect(f"file:{self.var / 'arena.db'}?mode=ro", uri=True) as db:
            rows = db.execute(
                "SELECT status IN ('queued', 'running'), count(*) FROM matches"
                " WHERE kind = 'ladder' GROUP BY 1"
            ).fetchall()
        counts = {bool(open_): n for open_, n in rows}
        return counts.get(False, 0), counts.get(True, 0)

    def cpu(self) -> float:
        assert self.process is not None
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def sample(platform: Platform, seconds: float) -> tuple[float, int]:
    """Percent of one core over ``seconds``, and the ladder matches finished meanwhile."""
    done, cpu, wall = platform.matches()[0], platform.cpu(), time.monotonic()
    time.sleep(seconds)
    used, took = platform.cpu() - cpu, time.monotonic() - wall
    return 100.0 * used / took, platform.matches()[0] - done


def unthrottled(args: argparse.Namespace) -> float:
    platform = Platform(args.games, {"ARENA_SETTLED_SIGMA": "0"})
    try:
        platform.start()
        deadline = time.monotonic() + SETTLE_LIMIT
        while not platform.matches()[0]:  # the ladders are playing
            if time.monotonic() > deadline:
                raise SystemExit("no ladder match finished in time")
            time.sleep(1)
        pct, played = sample(platform, args.seconds)
    finally:
        platform.stop()
    print(f"unthrottled: {pct:.1f} % of a core over {args.seconds:g} s, {played} matches")
    return pct


def quiet(args: argparse.Namespace) -> float:
    settings = {
        "ARENA_SETTLED_SIGMA": "9",  # above the starting 8.33: settled from the start
        "ARENA_PLACEMENT_MATCHES": "0",
        "ARENA_SETTLED_INTERVAL": str(args.interval),
    }
    platform = Platform(args.games, settings)
    try:
        platform.start()
        cpu, wall = platform.cpu(), time.monotonic()
        deadline = wall + SETTLE_LIMIT
        while platform.matches()[1] or not platform.matches()[0]:
            if time.monotonic() > deadline:
                raise SystemExit("the first tables did not finish in time")
            time.sleep(1)
        round_cpu, round_wall = platform.cpu() - cpu, time.monotonic() - wall
        first = platform.matches()[0]
        pct, played = sample(platform, args.seconds)
    finally:
        platform.stop()
    tables = max(0.0, round_cpu - pct / 100.0 * round_wall)
    share = 100.0 * tables / args.interval
    print(
        f"quiet: first round {first} matches, {round_cpu:.1f} s CPU in {round_wall:.0f} s; "
        f"then {pct:.1f} % of a core over {args.seconds:g} s, {played} matches; "
        f"tables every {args.interval:g} s add {share:.1f} %"
    )
    return pct + share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="sampling window")
    parser.add_argument("--interval", type=float, default=600.0, help="SETTLED_INTERVAL, s")
    parser.add_argument("--games", default="", help="ladders (default: every game)")
    args = parser.parse_args()
    print(f"idle: {os.cpu_count()} cores, window {args.seconds:g} s, games {args.games or 'all'}")
    anchor = unthrottled(args)
    idle = quiet(args)
    print(
        f"idle_core_pct={idle:.1f} unthrottled_core_pct={anchor:.1f} "
        f"ratio={idle / anchor if anchor else float('nan'):.3f}"
    )


if __name__ == "__main__":
    main()
