"""Recovery from faults on real PostgreSQL and Redis: how many seconds until work goes on.

Creates a database of its own on ``--database-url``'s server (dropped at the end; with
``--sqlite`` a SQLite file, as the embedded platform runs), uses ``--redis-url`` with a key
prefix of its own, a 16 MiB tmpfs as the storage folder (needs root; without it the storage
figure is skipped), and two Celery match workers. Then, in turn:

- **kill**: ``--kills`` (5) times, a long match starts and the worker process playing it is
  killed (SIGKILL); the figure is the time from the kill to the next claim of that match;
- **resend**: the broker is cut off from this process (a TCP proxy) while a match is queued, so
  its message cannot be sent; the figure is the time from the broker coming back to the match
  being claimed;
- **storage**: the storage disk is filled while two matches are played, and freed once both
  were given back; the figure is the time from the disk being freed to the last of them being
  claimed again.

At the end every match must finish, each rated exactly once. The last line:

    kill_replay_s_p50=.. kill_replay_s_max=.. resend_s=.. storage_resume_s=.. lost=.. double=..

``lost`` counts matches not finished within ``--deadline`` seconds (600) of the start, ``double``
matches with more rating changes than seats. It stops by itself, whatever happens.

    .venv/bin/python bench/faults.py [--kills 5] [--database-url URL | --sqlite] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# bench/ holds scripts named like the packages (sandbox.py, web.py): import the packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

SAMPLES = ROOT / "sample_bots"
QUEUES = "default,validate,urgent,challenges,matches"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--deadline", type=float, default=600.0)
    parser.add_argument(
        "--database-url", default="postgresql+psycopg://root@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument(
        "--sqlite", action="store_true", help="SQLite in a file, as the embedded platform runs"
    )
    return parser.parse_args()


def wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"gave up waiting for {what} after {timeout:g} s")


@contextmanager
def database(url: str, sqlite: bool) -> Iterator[str]:
    """A fresh database on ``url``'s server (or a SQLite file), dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    if sqlite:
        with tempfile.TemporaryDirectory(prefix="arena-faults-db-") as folder:
            yield f"sqlite:///{folder}/arena.db"
        return

    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    name = f"arena_faults_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def small_disk() -> Iterator[Path | None]:
    """A 16 MiB tmpfs (None if it cannot be mounted)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-faults-"))
    folder.chmod(0o755)
    mount = ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs", str(folder)]
    mounted = subprocess.run(mount, capture_output=True, check=False).returncode == 0
    try:
        yield folder if mounted else None
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=False)
        subprocess.run(["rm", "-rf", str(folder)], check=False)


class Workers:
    """Celery match workers for the app's settings, all killed at the end."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env, self.log_dir = env, log_dir
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, name: str) -> None:
        log = (self.log_dir / f"{name}.log").open("wb")
        command = [
            sys.executable, "-m", "celery", "-A", "web.worker:celery", "worker", "-Q", QUEUES,
            "-c", "1", "-P", "prefork", "--without-gossip", "--without-mingle",
            "--without-heartbeat", "-l", "info", "-n", f"{name}@%h",
        ]  # fmt: skip
        process = subprocess.Popen(
            command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            start_new_session=True,
        )  # fmt: skip
        self.processes.append(process)
        path = self.log_dir / f"{name}.log"
        wait(lambda: "ready." in path.read_text(errors="replace"), 120, f"worker {name}")

    def stop(self) -> None:
        for process in self.processes:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)


def worker_env(app: Any, redis_url: str) -> dict[str, str]:
    from web.config import default_settings

    env = dict(os.environ)
    for key in default_settings():
        value = app.config[key]
        env[f"ARENA_{key}"] = "1" if value is True else "0" if value is False else str(value)
    env["ARENA_DATABASE_URL"] = app.config["SQLALCHEMY_DATABASE_URI"]
    env["ARENA_REDIS_URL"] = redis_url  # the workers reach the broker directly
    return env


@dataclass(frozen=True)
class Row:
    """What the bench reads of a match, copied out so no transaction stays open (on SQLite an
    open one would hold the database's write lock against the workers)."""

    status: str
    attempts: int
    worker: str | None
    started_at: datetime | None
    error: str | None
    seats: int


def row(match_id: int) -> Row:
    from web.extensions import db
    from web.models import Match

    db.session.expire_all()
    found = db.session.get(Match, match_id)
    assert found is not None
    copied = Row(
        found.status, found.attempts, found.worker, found.started_at, found.error, len(found.seats)
    )
    db.session.rollback()
    return copied


def seconds(later: datetime | None, earlier: datetime) -> float:
    assert later is not None
    return (later - earlier).total_seconds()


def versions() -> dict[str, Any]:
    """Active sample bots, and a sleeper (every move runs out its time: long matches)."""
    from web import engine
    from web.extensions import db
    from web.models import VersionStatus
    from web.services import bots, building, lifecycle, users
    from web.storage import get_storage

    owner = users.get_or_create_user("house", house=True)
    db.session.commit()
    made = {}
    for name in ("greedy", "random"):
        version = bots.register_folder(
            owner, SAMPLES / "python" / f"challenge-{name}", trusted=True
        )
        assert str(lifecycle.prepare(version.id)) == "active", version.validation_log
        made[name] = version
    sleeper = bots.register_folder(owner, SAMPLES / "hostile" / "sleeper", trusted=True)
    building.record_manifest(sleeper, engine.load_manifest(get_storage().bot_dir(sleeper.id)))
    sleeper.status = VersionStatus.VALIDATING  # it would fail the self-test: put it on directly
    lifecycle.activate(sleeper)
    db.session.commit()
    made["sleeper"] = sleeper
    return made


def queue_match(seats: list[Any], seed: int) -> int:
    from web.extensions import db
    from web.services import ladders, matches

    ladder = ladders.default_ladder("challenge")
    match = matches.create_match(ladder.game_config(), seats, seed=seed, ladder_id=ladder.id)
    db.session.commit()
    return int(match.id)


def kill_replays(made: dict[str, Any], kills: int, ids: list[int]) -> list[float]:
    """Kill the process playing a long match; seconds until the match is claimed again."""
    from web.models import MatchStatus, utcnow

    figures = []
    for k in range(kills):
        match_id = queue_match([made["greedy"], made["sleeper"]], seed=100 + k)
        ids.append(match_id)
        running = wait(
            lambda m=match_id: row(m).status == MatchStatus.RUNNING and row(m), 120, "a claim"
        )
        time.sleep(1.0)  # a few moves in
        killed_at = utcnow()
        os.kill(int(running.worker.rsplit(":", 1)[1]), signal.SIGKILL)
        again = wait(lambda m=match_id, a=running.attempts: row(m).attempts > a and row(m), 120,
                     "the match to be claimed again")  # fmt: skip
        figures.append(seconds(again.started_at, killed_at))
    return figures


def settle(ids: list[int], timeout: float) -> None:
    """Wait (at most ``timeout`` s) until every match of ``ids`` has finished."""
    from web.models import MatchStatus

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(row(m).status == MatchStatus.FINISHED for m in ids):
            return
        time.sleep(1.0)


def resend(made: dict[str, Any], proxy: Any, ids: list[int]) -> float:
    """Queue a match while the broker is cut off; seconds from its return to the claim."""
    from web.models import utcnow

    proxy.cut()
    match_id = queue_match([made["greedy"], made["random"]], seed=200)
    ids.append(match_id)
    time.sleep(5.0)  # the broker stays away a while
    back = utcnow()
    proxy.restore()
    claimed = wait(lambda: row(match_id).attempts > 0 and row(match_id), 120, "the resend")
    return seconds(claimed.started_at, back)


def storage_resume(made: dict[str, Any], disk: Path, ids: list[int]) -> float:
    """Fill the disk under two matches; seconds from freeing it to the last one's claim."""
    from web.models import utcnow
    from web.services import attempts

    filler = disk / "filler"
    with filler.open("wb") as fh, suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()
    pair = [queue_match([made["greedy"], made["random"]], seed=300 + k) for k in range(2)]
    ids.extend(pair)

    def given_back() -> bool:
        return all(attempts.STORAGE_WAIT in (row(m).error or "") for m in pair)

    wait(given_back, 180, "both matches to meet the full disk")
    time.sleep(20.0)  # full for a while: their backoff grows
    freed = utcnow()
    filler.unlink()
    claimed = [
        wait(lambda m=m: (r := row(m)).started_at and r.started_at > freed and r, 120, "a retry")
        for m in pair
    ]
    return max(seconds(r.started_at, freed) for r in claimed)


def outcome(ids: list[int], deadline: float) -> tuple[int, int]:
    """(lost, double): matches unfinished by ``deadline``, matches rated more than once."""
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import MatchStatus, RatingChange

    def done() -> bool:
        return all(row(m).status == MatchStatus.FINISHED for m in ids)

    while time.monotonic() < deadline and not done():
        time.sleep(1.0)
    lost = sum(row(m).status != MatchStatus.FINISHED for m in ids)
    counts = db.session.execute(
        select(RatingChange.match_id, func.count()).group_by(RatingChange.match_id)
    ).all()
    db.session.rollback()
    double = sum(n > row(m).seats for m, n in counts)
    return lost, double


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    stop = threading.Timer(args.deadline + 120, lambda: os._exit(3))  # whatever happens
    stop.daemon = True
    stop.start()
    from flask_migrate import upgrade
    from sqlalchemy.engine import make_url

    from tests.web.tcp_proxy import TcpProxy
    from web import create_app

    redis = make_url(args.redis_url)
    with (
        database(args.database_url, args.sqlite) as url,
        small_disk() as disk,
        tempfile.TemporaryDirectory(prefix="arena-faults-logs-") as logs,
        TcpProxy(redis.host or "127.0.0.1", redis.port or 6379) as proxy,
    ):
        storage = disk or Path(logs) / "storage"
        through = redis.set(port=proxy.port).render_as_string(hide_password=False)
        config = {
            "DATABASE_URL": url,
            "REDIS_URL": through,
            "BROKER_PREFIX": f"faults-{uuid.uuid4().hex[:8]}:",
            "STORAGE_DIR": str(storage),
            "SANDBOX": "bwrap",
            "TRUSTED_SANDBOX": "bwrap",
            "MOVE_TIMEOUT": 1.0,
            "TIME_BANK": 1.0,
            "VALIDATION_MATCH": False,
            # Only the bench's own matches: the scheduler queues none.
            "QUEUE_TARGET": 0,
            "PLACEMENT_MATCHES": 0,
        }
        app = create_app(config)
        workers = Workers(worker_env(app, args.redis_url), Path(logs))
        try:
            with app.app_context():
                upgrade()
                made = versions()
                workers.start("w1")
                workers.start("w2")
                ids: list[int] = []
                kills = kill_replays(made, args.kills, ids)
                print(f"kill: {' '.join(f'{k:.1f}' for k in kills)} s", file=sys.stderr)
                settle(ids, 300)  # the long matches out of the workers' way
                resent = resend(made, proxy, ids)
                print(f"resend: {resent:.1f} s", file=sys.stderr)
                resumed = storage_resume(made, disk, ids) if disk else None
                print(f"storage: {resumed} s", file=sys.stderr)
                lost, double = outcome(ids, started + args.deadline)
                from web.extensions import db

                db.session.remove()
                db.engine.dispose()
        finally:
            workers.stop()
    print(f"kills: {' '.join(f'{k:.1f}' for k in kills)} s")
    storage_figure = f"{resumed:.1f}" if resumed is not None else "n/a"
    print(
        f"kill_replay_s_p50={statistics.median(kills):.1f} kill_replay_s_max={max(kills):.1f} "
        f"resend_s={resent:.1f} storage_resume_s={storage_figure} lost={lost} double={double}"
    )
    os._exit(0)


if __name__ == "__main__":
    main()
