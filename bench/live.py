"""Live spectating: one running match watched by 1, 10 and 100 spectators.

A real referee plays a match of Python sample bots (plain processes, a steady pace of
``--think-ms`` per move added by the referee's clock, as bots that think would) while the live
feed of ``web.services.live`` writes each step to Redis, and the site (gunicorn, as
``arena up`` runs it: gthread workers) streams it to N spectators reading the server-sent
events endpoint from another process. Measured:

- latency from the referee's step (the moment ``on_step`` hears of it) to a spectator's event,
  p50 and p99 over every (spectator, step), on the machine's monotonic clock;
- the match's own time per move, against the same match with no feed at all (the anchor),
  played alternately in the same run.

    .venv/bin/python bench/live.py [--moves 300] [--think-ms 10] [--spectators 1,10,100]

Also printed: the CPU microseconds per step and spectator of the site's processes (``web us``)
and of the spectators' own reading (``client us``), over the watched match.

Needs Redis (``ARENA_BENCH_REDIS_URL``, default ``redis://127.0.0.1:6379/15``; keys under a
fresh prefix). The database is SQLite in a temporary folder. Last line
``p99_ms=<worst p99> slowdown=<worst per-move ratio - 1>``; goals: under 250 ms and 5 %.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REDIS_URL = os.environ.get("ARENA_BENCH_REDIS_URL", "redis://127.0.0.1:6379/15")
GAME = "svoi-kozyri"
PLAYERS = 3
EVENT_ID = re.compile(rb"\nid: (\d+)\n")


# --- spectators (a process of their own) -----------------------------------------------------


def spectate(port: int, path: str, count: int, timeout: float) -> None:
    """Open ``count`` streams of ``path``; print each one's arrival times as JSON when done.

    A cheap reader, so that the spectators take little CPU from the match and the site: one
    thread and a selector for all the streams, and while the match runs only ``recv`` and the
    clock (each chunk kept with its arrival time); the events are parsed once it is over. Prints
    ``ready`` once every stream has its first line (the server holds it open), and last the
    arrival times and this process's own CPU seconds."""
    sel = selectors.DefaultSelector()
    chunks: list[list[tuple[float, bytes]]] = []
    waiting = count
    for k in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        sock.setblocking(False)
        chunks.append([])
        sel.register(sock, selectors.EVENT_READ, k)
    unready = set(range(count))
    deadline = time.monotonic() + timeout
    cpu_at_ready = 0.0
    clock, select = time.monotonic, sel.select
    while waiting and clock() < deadline:
        for key, _ in select(1.0):
            k = key.data
            chunk = key.fileobj.recv(65536)  # type: ignore[union-attr]
            if not chunk:  # refused or ended
                waiting -= 1
                unready.discard(k)
                sel.unregister(key.fileobj)
                key.fileobj.close()  # type: ignore[union-attr]
            else:
                chunks[k].append((clock(), chunk))
            if unready and k in unready and b"retry:" in b"".join(c for _, c in chunks[k]):
                unready.discard(k)
                if not unready:
                    cpu_at_ready = time.process_time()
                    print("ready", flush=True)
    seen = []
    for stream in chunks:
        ends, at = [], 0
        for _, chunk in stream:
            at += len(chunk)
            ends.append(at)
        whole = b"".join(chunk for _, chunk in stream)
        arrivals: dict[int, float] = {}
        for match in EVENT_ID.finditer(whole):
            which = bisect.bisect_left(ends, match.end())
            arrivals.setdefault(int(match.group(1)), stream[which][0])
        seen.append(arrivals)
    cpu = time.process_time() - cpu_at_ready
    print(json.dumps({"seen": seen, "cpu_s": cpu}), flush=True)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) used so far by process ``pid`` and its children now
    alive (gunicorn's workers), read from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for one in pids:
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


# --- the site ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def settings(folder: Path, prefix: str) -> dict[str, Any]:
    return {
        "DATABASE_URL": f"sqlite:///{folder / 'arena.db'}",
        "STORAGE_DIR": str(folder / "storage"),
        "REDIS_URL": REDIS_URL,
        "BROKER_PREFIX": prefix,
        "SECRET_KEY": "bench",
        "RATELIMIT_ENABLED": False,
        "LIVE_STREAMS": 110,  # gunicorn does not share streams evenly between its processes
        "LIVE_STREAMS_PER_CLIENT": 1000,  # every spectator here is 127.0.0.1
    }


def start_server(config: dict[str, Any], port: int) -> Any:
    env = dict(os.environ)
    for key, value in config.items():
        env[f"ARENA_{key}"] = "0" if value is False else str(value)
    command = [
        sys.executable, "-m", "gunicorn", "web:create_app()", "-b", f"127.0.0.1:{port}",
        "-w", "2", "-k", "gthread", "--threads", "128", "--log-level", "warning",
    ]  # fmt: skip
    server = subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
            return server
        except OSError:
            time.sleep(0.3)
    stop(server)
    raise SystemExit("gunicorn did not start")


def stop(process: Any) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# --- the match ---------------------------------------------------------------------------------


class Paced:
    """An ``on_step`` that adds ``think`` seconds per move (the bots' thinking) and, with a
    feed, hands the step to it, noting when each step was told."""

    def __init__(self, think: float, feed: Any) -> None:
        self.think, self.feed = think, feed
        self.told: dict[int, float] = {}
        self.index = 0

    def __call__(self, state: Any, step: Any) -> None:
        self.index += 1
        if self.feed is not None:
            self.told[self.index] = time.monotonic()
            self.feed.on_step(state, step)
        time.sleep(self.think)


def play(app: Any, match_id: int | None, moves: int, think: float) -> tuple[float, Paced]:
    """Play the match (with the live feed of ``match_id``, or none); seconds per move."""
    from arena.bots import load_bot
    from arena.games import make_game
    from arena.runner import TimeControl, run_match
    from sandbox import get_sandbox
    from web.services import live

    game = make_game(GAME, players=PLAYERS, params={"deals": max(1, moves // 60)})
    bots = [load_bot(ROOT / "sample_bots" / "python" / f"{GAME}-greedy")] * PLAYERS
    with app.app_context():
        feed = None if match_id is None else live.open_feed(match_id, game.config(), 7)
        paced = Paced(think, feed)
        started = time.monotonic()
        outcome = run_match(
            game, bots, 7, sandbox=get_sandbox("none"), on_step=paced, pin_cpu=False,
            time_control=TimeControl(init_s=10, move_s=2, bank_s=20),
        )  # fmt: skip
        elapsed = time.monotonic() - started
        if feed is not None:
            feed.close("finished")
    return elapsed / max(1, outcome.steps), paced


def running_match(app: Any) -> int:
    from web.extensions import db
    from web.models import Match, MatchStatus

    with app.app_context():
        match = Match(
            game_config={"game": GAME, "players": PLAYERS}, seed=7, status=MatchStatus.RUNNING
        )
        db.session.add(match)
        db.session.commit()
        return match.id


def watch(
    app: Any, server: Any, port: int, count: int, moves: int, think: float
) -> dict[str, float]:
    """One match followed by ``count`` spectators; latencies and time per move."""
    match_id = running_match(app)
    path = f"/api/v1/matches/{match_id}/live"
    groups = [min(25, count - k) for k in range(0, count, 25)]  # 25 streams per process
    command = [sys.executable, __file__, "--spectate", str(port), path]
    clients = [
        subprocess.Popen([*command, str(n)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for n in groups
    ]
    for client in clients:
        assert client.stdout is not None and client.stdout.readline().strip() == "ready"
    web_cpu = cpu_seconds(server.pid)
    per_move, paced = play(app, match_id, moves, think)
    web_cpu = cpu_seconds(server.pid) - web_cpu
    late = []
    client_cpu = 0.0
    for client in clients:
        out, _ = client.communicate(timeout=120)
        report = json.loads(out.splitlines()[-1])
        client_cpu += report["cpu_s"]
        for seen in report["seen"]:
            for index, told in paced.told.items():
                arrived = seen.get(str(index))
                if arrived is not None:
                    late.append((arrived - told) * 1000)
    expected = count * len(paced.told)
    if not late:
        raise SystemExit("no spectator received a frame (every stream refused?)")
    late.sort()
    return {
        "per_move": per_move,
        "p50": statistics.median(late),
        "p99": late[min(len(late) - 1, int(len(late) * 0.99))],
        "received": len(late) / expected,  # under 100 %: some streams were refused
        # CPU milliseconds per step and spectator: the site's processes, the clients' reading
        "web_us": web_cpu * 1e6 / max(1, expected),
        "client_us": client_cpu * 1e6 / max(1, expected),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=300, help="about how many moves a match has")
    parser.add_argument("--think-ms", type=float, default=10.0, help="each move's thinking")
    parser.add_argument("--spectators", default="1,10,100")
    parser.add_argument("--spectate", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.spectate:
        port, path, count = args.spectate
        spectate(int(port), path, int(count), timeout=600)
        return 0
    from flask_migrate import upgrade

    from web import create_app

    think = args.think_ms / 1000
    counts = [int(n) for n in args.spectators.split(",")]
    with tempfile.TemporaryDirectory(prefix="arena-bench-live-") as tmp:
        config = settings(Path(tmp), f"bench-live-{uuid.uuid4().hex[:8]}:")
        app = create_app(config)
        with app.app_context():
            upgrade()
        port = free_port()
        server = start_server(config, port)
        try:
            play(app, None, args.moves, think)  # warm up: imports, bots' first start
            print(f"{'spectators':>10} {'ms/move':>8} {'anchor':>8} {'ratio':>6} "
                  f"{'p50 ms':>7} {'p99 ms':>7} {'events':>7} "
                  f"{'web us':>7} {'client us':>9}")  # fmt: skip
            worst_p99 = worst_slowdown = 0.0
            for count in counts:
                # the anchor (no feed, nobody watching) played right before and after
                before, _ = play(app, None, args.moves, think)
                got = watch(app, server, port, count, args.moves, think)
                after, _ = play(app, None, args.moves, think)
                anchor = (before + after) / 2
                ratio = got["per_move"] / anchor
                worst_p99 = max(worst_p99, got["p99"])
                worst_slowdown = max(worst_slowdown, ratio - 1)
                print(
                    f"{count:>10} {got['per_move'] * 1000:>8.2f} {anchor * 1000:>8.2f} "
                    f"{ratio:>6.3f} {got['p50']:>7.1f} {got['p99']:>7.1f} "
                    f"{got['received']:>6.0%} {got['web_us']:>7.0f} {got['client_us']:>9.0f}",
                    flush=True,
                )
        finally:
            stop(server)
    print(f"p99_ms={worst_p99:.1f} slowdown={worst_slowdown:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
