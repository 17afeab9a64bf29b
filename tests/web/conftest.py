"""Fixtures for the service: a per-run PostgreSQL database, a Redis database number, the app,
real Celery worker processes, and bot factories.

Where PostgreSQL or Redis is not reachable the tests that need them skip with the reason; with
``ARENA_REQUIRE_SERVICES=1`` (CI) such a skip is a failure instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from werkzeug.serving import WSGIRequestHandler, make_server

ALL_QUEUES = "builds,default,validate,urgent,challenges,matches"
ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"
PG_URL = os.environ.get("ARENA_TEST_DATABASE_URL", "postgresql+psycopg://root@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL", "redis://127.0.0.1:6379/").rstrip("/")


def missing(reason: str) -> None:
    """Skip, or fail when the environment says the services must be there."""
    if os.environ.get("ARENA_REQUIRE_SERVICES") == "1":
        pytest.fail(f"required service missing: {reason}")
    pytest.skip(reason)


RESERVATION_S = 4 * 3600
"""How long a test run's claim on a Redis database number lasts if the run dies unreleased."""


def _reserve_redis_db(admin: Any, token: str) -> int:
    """A Redis database number (1-15) that no other live test run holds, claimed in database 0.

    Queues are isolated anyway by a per-app key prefix (``BROKER_PREFIX``); the number keeps
    one run's ``FLUSHDB`` away from another run's queued messages, so it is claimed with
    ``SET NX`` rather than guessed. When every number is held, the process id picks one.
    """
    start = os.getpid() % 15
    for k in range(15):
        number = 1 + (start + k) % 15
        if admin.set(f"arena-test-db:{number}", token, nx=True, ex=RESERVATION_S):
            return number
    return 1 + start


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test run, migrated, dropped at the end."""
    admin = make_url(PG_URL)
    name = f"arena_test_{uuid.uuid4().hex[:10]}"
    try:
        engine = create_engine(admin, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        missing(f"PostgreSQL at {admin.render_as_string()} is not reachable: {exc}")
    url = admin.set(database=name).render_as_string(hide_password=False)
    _migrate(url)
    yield url
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


def _migrate(url: str) -> None:
    from flask_migrate import upgrade

    from web import create_app

    app = create_app({"DATABASE_URL": url, "STORAGE_DIR": "/nonexistent"})
    with app.app_context():
        upgrade()
        from web.extensions import db

        db.engine.dispose()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis database number of its own for this test run, released at the end."""
    import redis

    admin = redis.Redis.from_url(f"{REDIS_URL}/0")
    try:
        admin.ping()
    except Exception as exc:
        missing(f"Redis at {REDIS_URL} is not reachable: {exc}")
    token = f"{os.getpid()}:{uuid.uuid4().hex}"
    number = _reserve_redis_db(admin, token)
    yield f"{REDIS_URL}/{number}"
    key = f"arena-test-db:{number}"
    if admin.get(key) == token.encode():
        admin.delete(key)
    admin.close()


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A temporary folder that sandboxed bots (running as other uids) can read.

    pytest's own temporary root is private to its user, so bot folders cannot live there.
    """
    path = Path(tempfile.mkdtemp(prefix="arena-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def base_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    """Settings for a test app: short leases and timeouts so failures show quickly."""
    config: dict[str, Any] = {
        "TESTING": True,
        "STORAGE_DIR": str(tmp_path / "storage"),
        "SANDBOX": "bwrap",
        "TRUSTED_SANDBOX": "bwrap",
        "ALLOW_UNSANDBOXED_SAMPLES": True,
        "MOVE_TIMEOUT": 2.0,
        "TIME_BANK": 4.0,
        "MATCH_LEASE": 6,
        "QUEUED_STALE_AFTER": 2,
        "SELFTEST_TIMEOUT": 10.0,
        "MAX_ATTEMPTS": 3,
        "WORKER_CONCURRENCY": 1,
        # Test runs sharing one Redis (developers side by side) never take each other's tasks.
        "BROKER_PREFIX": f"test-{uuid.uuid4().hex[:8]}:",
        # A test client reads a live stream whole: one of a match nobody plays ends soon.
        "LIVE_STREAM_SECONDS": 0.2,
    }
    config.update(extra)
    return config


def _truncate_all(url: str) -> None:
    from web.extensions import db

    engine = create_engine(url)
    tables = ", ".join(f'"{t.name}"' for t in db.metadata.sorted_tables)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    engine.dispose()


@pytest.fixture
def pg_app(pg_url: str, redis_url: str, shared_tmp: Path) -> Iterator[Flask]:
    """The app on the per-run PostgreSQL database (emptied first) and the test Redis."""
    from web import create_app

    _truncate_all(pg_url)
    app = create_app(base_config(shared_tmp, DATABASE_URL=pg_url, REDIS_URL=redis_url))
    with app.app_context():
        yield app
        from web.extensions import db

        db.session.remove()
        db.engine.dispose()


def app_env(app: Flask) -> dict[str, str]:
    """Environment that makes a child process build the same app (``ARENA_*`` variables)."""
    from web.config import default_settings

    env = dict(os.environ)
    for key in default_settings():
        value = app.config[key]
        env[f"ARENA_{key}"] = "1" if value is True else "0" if value is False else str(value)
    env["ARENA_DATABASE_URL"] = app.config["SQLALCHEMY_DATABASE_URI"]
    return env


@dataclass
class Worker:
    """A real Celery worker process started by a test."""

    process: subprocess.Popen[bytes]
    log: Path
    log_file: Any

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self.log_file.close()


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    """Start Celery workers (``-c`` processes each) for the current app; all killed at the end."""
    started: list[Worker] = []

    def start(
        app: Flask,
        concurrency: int = 1,
        name: str | None = None,
        queues: str = ALL_QUEUES,
        **env: str,
    ) -> Worker:
        name = name or f"w{len(started)}"
        log = tmp_path / f"{name}.log"
        command = [
            sys.executable, "-m", "celery", "-A", "web.worker:celery", "worker",
            "-Q", queues, "-c", str(concurrency), "-P", "prefork",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
            "-l", "info", "-n", f"{name}@%h",
        ]  # fmt: skip
        log_file = log.open("wb")
        process = subprocess.Popen(
            command,
            env={**app_env(app), **env},
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=ROOT,
        )
        worker = Worker(process, log, log_file)
        started.append(worker)
        wait_for(lambda: "ready." in worker.output(), 60, f"worker {name} to start", worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


def wait_for(
    check: Callable[[], Any], timeout: float, what: str, worker: Worker | None = None
) -> Any:
    """Poll ``check`` until it returns something true; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if worker is not None and worker.process.poll() is not None:
            pytest.fail(f"worker died while waiting for {what}:\n{worker.output()[-3000:]}")
        time.sleep(0.2)
    tail = worker.output()[-3000:] if worker else ""
    pytest.fail(f"timed out after {timeout}s waiting for {what}\n{tail}")


def require_bwrap() -> None:
    from sandbox import get_sandbox

    try:
        get_sandbox("bwrap")
    except Exception as exc:
        if os.environ.get("ARENA_REQUIRE_BWRAP") == "1":
            pytest.fail(f"bwrap required: {exc}")
        pytest.skip(f"bwrap sandbox not available: {exc}")


def sample_version(folder: str, owner_name: str = "house", *, house: bool = True) -> Any:
    """Register ``sample_bots/<folder>`` (trusted, to a house account) and make it active now."""
    from web.extensions import db
    from web.services import bots, lifecycle, users

    owner = users.get_or_create_user(owner_name, house=house)
    db.session.commit()
    version = bots.register_folder(owner, SAMPLES / folder, trusted=True)
    status = lifecycle.prepare(version.id)
    assert str(status) == "active", version.build_log + version.validation_log + str(version.error)
    return version


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless chromium for the whole run, shared by the site and browser tests.

    Playwright's sync API runs one driver per thread: a second ``sync_playwright`` while this
    one is open fails, so every test that needs a browser takes this fixture.
    """
    from tests.web.browser.conftest import CHROMIUM, LAUNCH_ARGS, missing_browser

    if not CHROMIUM.exists():
        missing_browser(f"chromium not found at {CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        missing_browser(f"playwright is not installed: {exc}")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real S3-compatible server process (moto's) on 127.0.0.1, for the whole run.

    moto is a development dependency, so it is always there: a server that does not start is
    a failure, never a skip.
    """
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path_factory.mktemp("s3") / "moto.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    endpoint = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if server.poll() is not None:
            pytest.fail(f"the S3 server stopped:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    wait_for(answers, 60, "the S3 server to listen")
    yield endpoint
    os.killpg(server.pid, signal.SIGKILL)
    server.wait(10)


def s3_config(endpoint: str, cache: Path, **extra: Any) -> dict[str, Any]:
    """Settings that put the app's storage in a fresh bucket of the S3 server at ``endpoint``."""
    return {
        "STORAGE_URL": f"s3://arena-test-{uuid.uuid4().hex[:12]}/platform",
        "S3_ENDPOINT_URL": endpoint,
        "S3_REGION": "us-east-1",
        "S3_ACCESS_KEY_ID": "arena-test",
        "S3_SECRET_ACCESS_KEY": "arena-test-secret",
        "S3_TIMEOUT": 5.0,
        "CACHE_DIR": str(cache),
        **extra,
    }


@pytest.fixture
def s3_app(pg_url: str, redis_url: str, shared_tmp: Path, s3_endpoint: str) -> Iterator[Flask]:
    """``pg_app`` with its storage in a bucket of the S3 server (no storage folder used)."""
    from web import create_app
    from web.storage import get_storage

    _truncate_all(pg_url)
    config = base_config(shared_tmp, DATABASE_URL=pg_url, REDIS_URL=redis_url)
    config.update(s3_config(s3_endpoint, shared_tmp / "site-cache"))
    app = create_app(config)
    with app.app_context():
        get_storage().prepare()
        yield app
        from web.extensions import db

        db.session.remove()
        db.engine.dispose()


@dataclass
class Served:
    """The app served over HTTP by werkzeug on a free loopback port (``serving``)."""

    url: str
    port: int
    thread: threading.Thread
    server: Any


class _OneRequestHandler(WSGIRequestHandler):
    """HTTP/1.0: one request per connection, so that once the server stops nothing is served on
    a kept-alive connection of a page a test left open (it would use the app's database after
    the test has ended)."""

    protocol_version = "HTTP/1.0"


@contextlib.contextmanager
def serving(app: Flask, drain_s: float = 60.0) -> Iterator[Served]:
    """Serve ``app`` in threads for the ``with`` body; then stop accepting, close the socket and
    wait (up to ``drain_s``) for the requests in flight, a stream included, to end."""
    before = set(threading.enumerate())
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_OneRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_port}", server.server_port, thread, server)
    finally:
        server.shutdown()
        server.socket.close()  # not server_close(): it would wait on a stream without a bound
        deadline = time.monotonic() + drain_s
        for handler in set(threading.enumerate()) - before:
            if "process_request_thread" in handler.name:  # a request in flight, not the app's own
                handler.join(max(0.0, deadline - time.monotonic()))
