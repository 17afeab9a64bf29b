"""The platform under a steady load: pages, uploads and ladder matches at once, for minutes.

Starts the embedded platform (``arena up`` in a temporary state folder, the sample bots on three
ladders), then for ``--minutes`` (10) minutes:

- a bounded load generator requests ladder, bot, match and API pages from ``--clients`` (16)
  threads at once, at most ``--rps`` (12) requests a second in all;
- every minute a new bot version is uploaded through the API with a token (five bots in turn,
  so each version plays its first five minutes before its bot gets the next one).

Then it stops the platform and plays a sample of the same ladder matches (same bots, seeds and
games) with the bare runner in as many processes as the platform had match workers.

It prints page p50/p99 per kind, matches per minute against the bare runner, upload-to-active
p50 and max, the placement matches each new version played in its first five minutes, and the
counts of "database is locked" (in every log), 5xx answers and failed matches. The last line:

    p99_ms=<worst kind> active_p50_s=<..> active_max_s=<..> placement=<min in 5 min>
    locked=<n> errors_5xx=<n> failed=<n> ratio=<service/runner>

``--database-url`` and ``--redis-url`` run the same against PostgreSQL and Redis (an empty
database; the Redis keys get a prefix of their own).

    .venv/bin/python bench/soak.py [--minutes 10] [--database-url URL --redis-url URL]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# bench/ holds scripts named like the packages (sandbox.py, web.py): import the packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

GAMES = "challenge,svara,kozyr-boys"
UPLOAD_FOLDER = ROOT / "sample_bots" / "python" / "challenge-heuristic"
UPLOAD_BOTS = 5
PLACEMENT_WINDOW = timedelta(minutes=5)
KINDS = ("ladder", "bot", "match", "api")


# --- the platform ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Platform:
    """``arena up`` in a temporary folder, and an app on the same database for the bench."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.var = Path(tempfile.mkdtemp(prefix="arena-soak-")) / "var"
        self.var.mkdir()
        self.var.parent.chmod(0o755)
        self.port = free_port()
        self.workers = int(args.workers)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.env.update(
            {
                "ARENA_DEMO_GAMES": args.games,
                "ARENA_DATABASE_URL": args.database_url or f"sqlite:///{self.var / 'arena.db'}",
                "ARENA_STORAGE_DIR": str(self.var / "storage"),
                # The bench measures the platform, not the rate limiter in front of it.
                "ARENA_API_RATE_LIMIT": "1000000 per minute",
                "ARENA_UPLOAD_RATE_LIMIT": "1000 per hour",
            }
        )
        if args.redis_url:
            self.env["ARENA_REDIS_URL"] = args.redis_url
            self.env["ARENA_BROKER_PREFIX"] = f"soak-{uuid.uuid4().hex[:8]}:"
        self.process: subprocess.Popen[bytes] | None = None
        self.app: Any = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        arena = Path(sys.executable).parent / "arena"
        command = [str(arena), "up", "--var", str(self.var), "--port", str(self.port),
                   "--workers", str(self.workers)]  # fmt: skip
        log = (self.var.parent / "up.log").open("wb")
        self.process = subprocess.Popen(
            command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.var.parent
        )
        deadline = time.monotonic() + 600
        while not self.healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = (self.var.parent / "up.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"the platform did not start:\n{tail}")
            time.sleep(1)
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("ARENA_")})
        if "ARENA_REDIS_URL" not in self.env:
            os.environ["ARENA_REDIS_URL"] = f"redis+socket://{self.var / 'redis.sock'}"
        from web import create_app

        self.app = create_app()

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.base + "/healthz", timeout=5) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def locked_errors(self) -> int:
        return sum(
            path.read_text(errors="replace").count("database is locked")
            for path in [*self.var.glob("*.log"), self.var.parent / "up.log"]
        )

    def cleanup(self) -> None:
        shutil.rmtree(self.var.parent, ignore_errors=True)


def query(platform: Platform, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in the bench's app context and end its transaction at once."""
    from web.extensions import db

    with platform.app.app_context():
        try:
            return fn()
        finally:
            db.session.remove()


def wait_for_first_matches(platform: Platform, timeout: float = 600) -> None:
    """Every ladder has finished a match: the platform is warm."""
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import Ladder, Match, MatchStatus

    games = platform.env["ARENA_DEMO_GAMES"].split(",")

    def ready() -> bool:
        played = db.session.scalar(
            select(func.count(func.distinct(Ladder.game)))
            .join(Match, Match.ladder_id == Ladder.id)
            .where(Match.status == MatchStatus.FINISHED, Ladder.game.in_(games))
        )
        return bool(played == len(games))

    deadline = time.monotonic() + timeout
    while not query(platform, ready):
        if time.monotonic() > deadline:
            raise SystemExit("no ladder match finished in 10 minutes")
        time.sleep(2)


# --- the load generator ---------------------------------------------------------------------


@dataclass
class Stats:
    """Page timings per kind, and every answer of 500 or more (uploads included)."""

    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors_5xx: int = 0
    other_errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, seconds: float, status: int) -> None:
        with self.lock:
            self.times[kind].append(seconds)
            if status >= 500:
                self.errors_5xx += 1
            elif status >= 400 or status == 0:
                self.other_errors += 1


def fetch(url: str, timeout: float = 60, **kwargs: Any) -> tuple[int, bytes]:
    request = urllib.request.Request(url, **kwargs)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return int(reply.status), reply.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()
    except OSError:
        return 0, b""


class Targets:
    """What there is to request: ladder slugs, bot ids and recent match ids (refreshed)."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.slugs: list[str] = []
        self.bots: list[int] = []
        self.matches: list[int] = []

    def refresh(self) -> None:
        from sqlalchemy import select

        from web.extensions import db
        from web.models import Bot, Ladder, Match

        def read() -> tuple[list[str], list[int], list[int]]:
            slugs = list(db.session.scalars(select(Ladder.slug)))
            bots = list(db.session.scalars(select(Bot.id)))
            recent = select(Match.id).order_by(Match.id.desc()).limit(50)
            return slugs, bots, list(db.session.scalars(recent))

        self.slugs, self.bots, self.matches = query(self.platform, read)

    def url(self, kind: str, rng: random.Random) -> str:
        if kind == "ladder":
            return f"/ladders/{rng.choice(self.slugs)}"
        if kind == "bot":
            return f"/bots/{rng.choice(self.bots)}"
        if kind == "match":
            return f"/matches/{rng.choice(self.matches)}"
        return rng.choice(
            [
                f"/api/v1/ladders/{rng.choice(self.slugs)}",
                f"/api/v1/bots/{rng.choice(self.bots)}",
                f"/api/v1/matches/{rng.choice(self.matches)}",
                "/api/v1/matches",
            ]
        )


class Load:
    """``clients`` threads requesting pages, at most ``rps`` requests a second in all."""

    def __init__(self, base: str, targets: Targets, clients: int, rps: float) -> None:
        self.base, self.targets = base, targets
        self.clients, self.interval = clients, 1.0 / rps
        self.stats = Stats()
        self.stop = threading.Event()
        self.next_slot = time.monotonic()
        self.slot_lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        for k in range(self.clients):
            thread = threading.Thread(target=self._client, args=(k,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def join(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(120)

    def _wait_for_slot(self) -> None:
        with self.slot_lock:
            slot = max(self.next_slot, time.monotonic())
            self.next_slot = slot + self.interval
        time.sleep(max(0.0, slot - time.monotonic()))

    def _client(self, k: int) -> None:
        rng = random.Random(k)
        n = k
        while not self.stop.is_set():
            self._wait_for_slot()
            kind = KINDS[n % len(KINDS)]
            n += 1
            url = self.base + self.targets.url(kind, rng)
            started = time.perf_counter()
            status, _ = fetch(url)
            self.stats.add(kind, time.perf_counter() - started, status)


# --- uploads --------------------------------------------------------------------------------


def make_token(platform: Platform) -> str:
    from web.extensions import db
    from web.services import users

    def issue() -> str:
        user = users.create_user("soak", "soak-password-1")
        db.session.flush()
        token = users.issue_token(user, "soak")
        db.session.commit()
        return token

    return str(query(platform, issue))


def bot_archive(name: str) -> bytes:
    """The sample bot ``challenge-heuristic`` under another name, zipped."""
    from web.services.bots import pack_folder

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / name
        shutil.copytree(UPLOAD_FOLDER, folder)
        manifest = folder / "bot.toml"
        text = manifest.read_text().replace('name = "challenge-heuristic"', f'name = "{name}"')
        manifest.write_text(text)
        return pack_folder(folder)


def upload(base: str, token: str, name: str, stats: Stats) -> None:
    boundary = uuid.uuid4().hex
    data = bot_archive(name)
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="{name}.zip"\r\n'
            "Content-Type: application/zip\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
    }
    started = time.perf_counter()
    status, reply = fetch(base + "/api/v1/uploads", data=body, headers=headers, method="POST")
    stats.add("upload", time.perf_counter() - started, status)
    if status != 201:
        print(f"upload of {name} answered {status}: {reply[:300]!r}", flush=True)


# --- figures --------------------------------------------------------------------------------


@dataclass
class Activation:
    version_id: int
    seconds: float
    active: bool
    placement: int
    window_complete: bool


def activations(platform: Platform, ended: Any) -> list[Activation]:
    """Every uploaded version: upload to active, and its placement matches in five minutes."""
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import Bot, BotVersion, Match, MatchKind, MatchSeat, MatchStatus, User

    wanted = int(platform.app.config["PLACEMENT_MATCHES"])

    def read() -> list[Activation]:
        rows = db.session.scalars(
            select(BotVersion).join(Bot).join(User).where(User.username == "soak")
        ).all()
        found = []
        for v in rows:
            if v.activated_at is None:
                found.append(
                    Activation(v.id, (ended - v.created_at).total_seconds(), False, 0, False)
                )
                continue
            until = v.activated_at + PLACEMENT_WINDOW
            played = db.session.scalar(
                select(func.count())
                .select_from(MatchSeat)
                .join(Match, Match.id == MatchSeat.match_id)
                .where(
                    MatchSeat.bot_version_id == v.id,
                    Match.kind == MatchKind.LADDER,
                    Match.status == MatchStatus.FINISHED,
                    Match.finished_at <= until,
                )
            )
            seconds = (v.activated_at - v.created_at).total_seconds()
            complete = until <= ended or int(played or 0) >= wanted
            found.append(Activation(v.id, seconds, True, int(played or 0), complete))
        return found

    return list(query(platform, read))


def match_figures(platform: Platform, started: Any, ended: Any) -> tuple[int, int, list[Any]]:
    """Matches finished in the window, failed matches, and the finished ladder matches' specs."""
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import Match, MatchKind, MatchStatus
    from web.storage import get_storage

    def read() -> tuple[int, int, list[Any]]:
        finished = db.session.scalar(
            select(func.count())
            .select_from(Match)
            .where(
                Match.status == MatchStatus.FINISHED,
                Match.finished_at >= started,
                Match.finished_at <= ended,
            )
        )
        failed = db.session.scalar(
            select(func.count()).select_from(Match).where(Match.status == MatchStatus.FAILED)
        )
        ladder = db.session.scalars(
            select(Match).where(
                Match.status == MatchStatus.FINISHED,
                Match.kind == MatchKind.LADDER,
                Match.finished_at >= started,
            )
        ).all()
        storage = get_storage()
        specs = [
            (
                dict(m.game_config),
                [str(storage.bot_dir(s.bot_version_id)) for s in sorted(m.seats, key=_seat)],
                m.seed,
            )
            for m in ladder
        ]
        return int(finished or 0), int(failed or 0), specs

    return query(platform, read)  # type: ignore[no-any-return]


def _seat(seat: Any) -> int:
    return int(seat.seat)


def _runner_match(spec: tuple[dict[str, Any], list[str], int, str]) -> int:
    from arena.bots import load_bot
    from arena.games import make_game
    from arena.runner import TimeControl, run_match
    from sandbox import get_sandbox

    config, folders, seed, box = spec
    # One core per pool process by its index, as the service's worker pool does.
    index = multiprocessing.current_process()._identity[0] - 1
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[index % len(cores)]})
    game = make_game(**config)
    bots = [load_bot(Path(folder)) for folder in folders]
    outcome = run_match(game, bots, seed, sandbox=get_sandbox(box), time_control=TimeControl())
    return len(outcome.replay["steps"])


def runner_rate(specs: list[Any], workers: int, box: str, limit: int) -> float:
    """Matches per minute of the bare runner on (a sample of) the same matches."""
    sample = random.Random(0).sample(specs, min(limit, len(specs)))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        pool.map(_runner_match, [(*sample[0], box)])  # warm up
        started = time.perf_counter()
        pool.map(_runner_match, [(*s, box) for s in sample], chunksize=1)
        elapsed = time.perf_counter() - started
    return 60 * len(sample) / elapsed


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --- the run --------------------------------------------------------------------------------


def soak(platform: Platform, args: argparse.Namespace) -> dict[str, Any]:
    """The timed part: load and uploads for ``args.minutes``; returns the raw figures."""
    from web.models import utcnow

    targets = Targets(platform)
    targets.refresh()
    token = make_token(platform)
    load = Load(platform.base, targets, args.clients, args.rps)
    started_at, started = utcnow(), time.monotonic()
    load.start()
    uploads = 0
    end = started + 60 * args.minutes
    next_upload, next_refresh = started, started + 15
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_upload:
            upload(platform.base, token, f"soak-{uploads % UPLOAD_BOTS + 1}", load.stats)
            uploads += 1
            next_upload += 60
        if now >= next_refresh:
            targets.refresh()
            next_refresh += 15
        time.sleep(0.5)
    load.join()
    ended_at = utcnow()
    return {"stats": load.stats, "started": started_at, "ended": ended_at, "uploads": uploads}


def report(platform: Platform, args: argparse.Namespace, run: dict[str, Any], box: str) -> None:
    stats: Stats = run["stats"]
    print(f"pages ({args.clients} clients, at most {args.rps:g} requests/s):")
    worst = 0.0
    for kind in (*KINDS, "upload"):
        times = stats.times.get(kind, [])
        p50, p99 = percentile(times, 0.5) * 1000, percentile(times, 0.99) * 1000
        top = max(times, default=float("nan")) * 1000
        print(
            f"  {kind:7} n={len(times):5}  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  max {top:7.1f} ms"
        )
        if kind in KINDS and times:
            worst = max(worst, p99)
    acts = activations(platform, run["ended"])
    seconds = [a.seconds for a in acts]
    waiting = [a for a in acts if not a.active]
    print(
        f"uploads: {run['uploads']} sent, {len(acts) - len(waiting)} active, "
        f"{len(waiting)} not active at the end"
    )
    for a in acts:
        state = "active" if a.active else "NOT ACTIVE"
        window = "" if a.window_complete else " (window not over)"
        print(
            f"  version {a.version_id}: {state} after {a.seconds:.1f} s, "
            f"placement {a.placement}{window}"
        )
    complete = [a.placement for a in acts if a.active and a.window_complete]
    placement = min(complete) if complete else min((a.placement for a in acts), default=0)
    if not complete:
        print("placement: no version's first five minutes were over; the minimum so far is shown")
    finished, failed, specs = match_figures(platform, run["started"], run["ended"])
    minutes = (run["ended"] - run["started"]).total_seconds() / 60
    service = finished / minutes
    platform.stop()
    runner = runner_rate(specs, platform.workers, box, args.runner_matches) if specs else 0.0
    ratio = service / runner if runner else 0.0
    print(f"service: {finished} matches in {minutes:.1f} min = {service:.1f}/min")
    print(
        f"runner:  {runner:.1f}/min on {min(len(specs), args.runner_matches)} of the same matches"
    )
    locked = platform.locked_errors()
    print(f"failed matches: {failed}; 5xx: {stats.errors_5xx}; other errors: {stats.other_errors}")
    p50 = statistics.median(seconds) if seconds else float("nan")
    print(
        f"p99_ms={worst:.0f} active_p50_s={p50:.1f} "
        f"active_max_s={max(seconds, default=float('nan')):.1f} placement={placement} "
        f"locked={locked} errors_5xx={stats.errors_5xx} failed={failed} ratio={ratio:.2f}"
    )


def sandbox_name() -> str:
    from sandbox import get_sandbox

    try:
        get_sandbox("bwrap")
        return "bwrap"
    except Exception:
        return "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--database-url", default="", help="PostgreSQL (an empty database)")
    parser.add_argument("--redis-url", default="", help="Redis instead of the embedded one")
    parser.add_argument("--workers", type=int, default=2, help="match worker processes")
    parser.add_argument("--clients", type=int, default=16, help="concurrent page clients")
    parser.add_argument("--rps", type=float, default=12.0, help="page requests a second, at most")
    parser.add_argument("--games", default=GAMES, help="ladders (games with sample bots)")
    parser.add_argument("--runner-matches", type=int, default=40, help="bare-runner sample")
    parser.add_argument("--keep", action="store_true", help="keep the state folder")
    args = parser.parse_args()
    box = sandbox_name()
    platform = Platform(args)
    print(f"soak: {args.minutes:g} min, games {args.games}, sandbox {box}, var {platform.var}")
    try:
        platform.start()
        wait_for_first_matches(platform)
        run = soak(platform, args)
        report(platform, args, run, box)
    finally:
        platform.stop()
        if not args.keep:
            platform.cleanup()


if __name__ == "__main__":
    main()
