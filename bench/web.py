"""How fast the site answers with a full database: the ladder page and the replay API.

Fills a separate PostgreSQL database with 1,000 bots and 100,000 finished 4-seat matches (every
seat rated, so 400,000 rating changes) by bulk COPY, serves the app with gunicorn on 127.0.0.1,
and loads it at 32 concurrent connections for a bounded time with wrk (Debian's package) or, if
wrk is missing, a small threaded Python generator. A static file served by the same server is
the floor. Prints p50 and p99 per target; last line ``ratio=<ladder p99 / static p99>``.

    .venv/bin/python bench/web.py [--duration 10] [--connections 32] [--keep]

The database is ``arena_bench_web`` next to ``ARENA_BENCH_DATABASE_URL`` (default: the local
``test`` database's server); it is made again on every run and dropped unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADMIN_URL = os.environ.get(
    "ARENA_BENCH_DATABASE_URL", "postgresql+psycopg://root@127.0.0.1:5432/test"
)
DB_NAME = "arena_bench_web"
GAME, PLAYERS = "svoi-kozyri", 4


# --- the database -----------------------------------------------------------------------------


def bench_url() -> str:
    from sqlalchemy.engine import make_url

    return make_url(ADMIN_URL).set(database=DB_NAME).render_as_string(hide_password=False)


def recreate_database() -> str:
    from sqlalchemy import create_engine, text

    engine = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{DB_NAME}"'))
    engine.dispose()
    return bench_url()


def drop_database() -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)'))
    engine.dispose()


def app_config(url: str, storage: Path) -> dict[str, Any]:
    return {
        "DATABASE_URL": url,
        "STORAGE_DIR": str(storage),
        "SECRET_KEY": "bench",
        "RATELIMIT_ENABLED": False,
    }


def migrate_and_seed(url: str, storage: Path) -> tuple[str, int]:
    """Migrate, create the ladder and store one replay; (ladder slug, replay's relative path)."""
    from flask_migrate import upgrade

    from web import create_app
    from web.extensions import db
    from web.services import ladders

    app = create_app(app_config(url, storage))
    with app.app_context():
        upgrade()
        ladder = ladders.get_or_create_ladder(GAME, players=PLAYERS)
        db.session.commit()
        slug, ladder_id = ladder.slug, ladder.id
        replay_rel = store_replay(storage)
        db.engine.dispose()
    return slug, fill(url, ladder_id, replay_rel)


def store_replay(storage: Path) -> str:
    import orjson

    from arena.agents import greedy_agent
    from arena.games import make_game
    from arena.replay import record_builtin_match
    from web.storage import Storage

    state = make_game(GAME, players=PLAYERS).new_state(7)
    names = [f"bot{i}" for i in range(PLAYERS)]
    replay = record_builtin_match(state, [greedy_agent] * PLAYERS, names, random.Random(7))
    store = Storage(storage)
    return store.relative(store.put_replay(orjson.dumps(replay)))


def _psycopg_dsn(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def fill(
    url: str, ladder_id: int, replay_rel: str, bots: int = 1000, matches: int = 100_000
) -> int:
    """Bulk-load bots, versions, ratings, matches, seats and rating changes; the match count."""
    import psycopg

    rng = random.Random(1)
    started = time.perf_counter()
    with psycopg.connect(_psycopg_dsn(url)) as conn, conn.cursor() as cur:
        _copy_people(cur, bots)
        _copy_ratings(cur, ladder_id, bots, rng)
        _copy_matches(cur, ladder_id, replay_rel, bots, matches, rng)
        for table in ("users", "bots", "bot_versions", "ratings", "matches", "match_seats",
                      "rating_changes"):  # fmt: skip
            cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT max(id) FROM {table}))")  # fmt: skip
        conn.commit()
        cur.execute("ANALYZE")
    print(f"filled {bots} bots and {matches} matches in {time.perf_counter() - started:.1f}s")
    return matches


def _copy_people(cur: Any, bots: int) -> None:
    now = datetime(2026, 1, 1)
    with cur.copy("COPY users (id, username, is_admin, is_house, created_at) FROM STDIN") as copy:
        for u in range(1, bots // 10 + 1):
            copy.write_row((u, f"author{u}", False, False, now))
    with cur.copy(
        "COPY bots (id, owner_id, name, status, consecutive_failures, failed_matches, created_at) "
        "FROM STDIN"
    ) as copy:
        for b in range(1, bots + 1):
            copy.write_row((b, (b - 1) // 10 + 1, f"bot-{b:04d}", "active", 0, 0, now))
    with cur.copy(
        "COPY bot_versions (id, bot_id, number, sha256, status, manifest, games, language, "
        "trusted, build_log, validation_log, created_at) FROM STDIN"
    ) as copy:
        for b in range(1, bots + 1):
            copy.write_row((b, b, 1, "0" * 64, "active", "{}", json.dumps([GAME]), "python",
                            False, "", "", now))  # fmt: skip


def _copy_ratings(cur: Any, ladder_id: int, bots: int, rng: random.Random) -> None:
    now = datetime(2026, 3, 1)
    with cur.copy(
        "COPY ratings (id, bot_id, ladder_id, mu, sigma, games, updated_at, last_played_at) "
        "FROM STDIN"
    ) as copy:
        for b in range(1, bots + 1):
            copy.write_row((b, b, ladder_id, rng.gauss(25, 3), rng.uniform(0.8, 3), 400, now, now))


def _copy_matches(
    cur: Any, ladder_id: int, replay_rel: str, bots: int, matches: int, rng: random.Random
) -> None:
    config = json.dumps({"game": GAME, "players": PLAYERS, "variant": None, "params": {}})
    start = datetime(2026, 1, 1)
    seat_id = change_id = 0
    result = json.dumps({"ranking": [1, 2, 3, 4], "scores": [0, 0, 0, 0], "detail": {}})
    with (
        cur.copy(
            "COPY matches (id, kind, ladder_id, game_config, seed, rated, status, attempts, "
            "max_attempts, result, outcome, replay_path, created_at, queued_at, started_at, "
            "finished_at, worker) FROM STDIN"
        ) as mcopy,
    ):
        for m in range(1, matches + 1):
            when = start + timedelta(seconds=m * 60)
            mcopy.write_row((m, "ladder", ladder_id, config, m, True, "finished", 1, 3, result,
                             "{}", replay_rel, when, when, when, when, "bench"))  # fmt: skip
    with cur.copy(
        "COPY match_seats (id, match_id, seat, bot_id, bot_version_id, status, place, strikes) "
        "FROM STDIN"
    ) as scopy:
        for m in range(1, matches + 1):
            rng.seed(m)
            for seat, bot in enumerate(rng.sample(range(1, bots + 1), PLAYERS)):
                seat_id += 1
                scopy.write_row((seat_id, m, seat, bot, bot, "ok", seat + 1, 0))
    with cur.copy(
        "COPY rating_changes (id, match_id, bot_id, ladder_id, place, mu_before, sigma_before, "
        "mu_after, sigma_after, created_at) FROM STDIN"
    ) as ccopy:
        for m in range(1, matches + 1):
            rng.seed(m)
            when = start + timedelta(seconds=m * 60)
            for seat, bot in enumerate(rng.sample(range(1, bots + 1), PLAYERS)):
                change_id += 1
                mu = 25 + rng.gauss(0, 2)
                ccopy.write_row((change_id, m, bot, ladder_id, seat + 1, mu, 2.0, mu + 0.1, 1.9,
                                 when))  # fmt: skip


# --- the server -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    url: str, storage: Path, port: int, workers: int, threads: int, page_cache: float
) -> Any:
    env = dict(os.environ)
    for key, value in app_config(url, storage).items():
        env[f"ARENA_{key}"] = "0" if value is False else str(value)
    env["ARENA_PAGE_CACHE_SECONDS"] = str(page_cache)
    command = [
        sys.executable, "-m", "gunicorn", "web:create_app()", "-b", f"127.0.0.1:{port}",
        "-w", str(workers), "-k", "gthread", "--threads", str(threads),
        "--log-level", "warning", "--backlog", "2048",
    ]  # fmt: skip
    server = subprocess.Popen(command, env=env, cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read()
            return server
        except OSError:
            time.sleep(0.3)
    stop_server(server)
    raise SystemExit("gunicorn did not start")


def stop_server(server: Any) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


# --- the load ---------------------------------------------------------------------------------


def load_wrk(url: str, connections: int, duration: float) -> dict[str, float]:
    """p50 and p99 (ms) and requests/s from ``wrk --latency``."""
    out = subprocess.run(
        ["wrk", "-t", "2", "-c", str(connections), "-d", f"{duration:.0f}s", "--latency", url],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    figures = {"p50": _wrk_ms(out, "50%"), "p99": _wrk_ms(out, "99%")}
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    figures["rps"] = float(rate.group(1)) if rate else 0.0
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    figures["errors"] = float(errors.group(1)) if errors else 0.0
    return figures


def _wrk_ms(out: str, label: str) -> float:
    found = re.search(rf"{re.escape(label)}\s+([\d.]+)(us|ms|s)\b", out)
    if not found:
        raise SystemExit(f"cannot read {label} from wrk:\n{out}")
    value, unit = float(found.group(1)), found.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def load_python(url: str, connections: int, duration: float) -> dict[str, float]:
    """The same figures from threads with keep-alive connections (slower than wrk)."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    times: list[float] = []
    errors = [0]
    stop = time.monotonic() + duration

    def worker() -> None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        while time.monotonic() < stop:
            began = time.perf_counter()
            conn.request("GET", path)
            answer = conn.getresponse()
            answer.read()
            times.append((time.perf_counter() - began) * 1000)
            errors[0] += answer.status >= 400

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cuts = statistics.quantiles(times, n=100)
    return {"p50": cuts[49], "p99": cuts[98], "rps": len(times) / duration, "errors": errors[0]}


def measure(
    base: str, targets: dict[str, str], connections: int, duration: float
) -> dict[str, Any]:
    load = load_wrk if shutil.which("wrk") else load_python
    print(f"load generator: {'wrk' if load is load_wrk else 'python threads'}, "
          f"{connections} connections, {duration:.0f}s per target")  # fmt: skip
    results = {}
    for name, path in targets.items():
        urllib.request.urlopen(base + path, timeout=30).read()  # warm up
        figures = load(base + path, connections, duration)
        results[name] = figures
        print(f"{name:8s} {path:45s} p50 {figures['p50']:7.2f} ms  p99 {figures['p99']:7.2f} ms  "
              f"{figures['rps']:7.0f} req/s  errors {figures['errors']:.0f}")  # fmt: skip
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per target")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per worker")
    parser.add_argument(
        "--page-cache", type=float, default=5.0, help="anonymous page cache seconds (0: off)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument(
        "--reuse", action="store_true", help="use the database a --keep run left (no refill)"
    )
    args = parser.parse_args(argv)
    storage = Path(tempfile.gettempdir()) / "arena-bench-web"
    server = None
    try:
        if args.reuse:
            url, slug, matches = bench_url(), f"{GAME}-{PLAYERS}p-modern", 100_000
        else:
            shutil.rmtree(storage, ignore_errors=True)
            storage.mkdir(mode=0o755)
            url = recreate_database()
            slug, matches = migrate_and_seed(url, storage)
        port = free_port()
        server = start_server(url, storage, port, args.workers, args.threads, args.page_cache)
        targets = {
            "static": "/static/css/site.css",
            "ladder": f"/ladders/{slug}",
            "replay": f"/api/v1/matches/{matches // 2}/replay",
        }
        results = measure(f"http://127.0.0.1:{port}", targets, args.connections, args.duration)
    finally:
        if server is not None:
            stop_server(server)
        if not (args.keep or args.reuse):
            shutil.rmtree(storage, ignore_errors=True)
            drop_database()
    print(f"ratio={results['ladder']['p99'] / results['static']['p99']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
