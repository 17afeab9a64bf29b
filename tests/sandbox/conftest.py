"""Fixtures for the sandbox tests: backends that skip (or fail, when required), hostile bots.

A backend that cannot run here makes its tests skip with the reason, unless the environment
says it is required (``ARENA_REQUIRE_BWRAP=1``, ``ARENA_REQUIRE_DOCKER=1``, as CI does): then
the skip becomes a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sandbox import backend_class, get_sandbox
from sandbox.base import Sandbox

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "sample_bots" / "hostile"
REQUIRE_ENV = {"bwrap": "ARENA_REQUIRE_BWRAP", "docker": "ARENA_REQUIRE_DOCKER"}


def backend_or_skip(name: str) -> Sandbox:
    """The backend ``name``, or a skip saying why not (a failure where it is required)."""
    reason = backend_class(name).available()
    if reason is not None:
        if os.environ.get(REQUIRE_ENV[name]) == "1":
            pytest.fail(f"{REQUIRE_ENV[name]}=1 but the {name} sandbox cannot run: {reason}")
        pytest.skip(f"{name} sandbox unavailable: {reason}")
    return get_sandbox(name)


@pytest.fixture(scope="session")
def bwrap_sandbox() -> Sandbox:
    return backend_or_skip("bwrap")


@pytest.fixture(scope="session")
def docker_sandbox() -> Sandbox:
    return backend_or_skip("docker")


@pytest.fixture(params=["bwrap", "docker"])
def any_sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """Each isolating backend in turn."""
    fixture = "bwrap_sandbox" if request.param == "bwrap" else "docker_sandbox"
    sandbox: Sandbox = request.getfixturevalue(fixture)
    return sandbox


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A scratch folder any uid may read (a sandboxed bot runs as its own unprivileged uid)."""
    path = Path(tempfile.mkdtemp(prefix="arena-sbx-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@dataclass
class Loopback:
    """A TCP server on the host's loopback that records every connection it gets."""

    port: int
    connections: list[bytes] = field(default_factory=list)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    record = Loopback(server.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    record.connections.append(conn.recv(100) or b"<connected>")
                except OSError:
                    record.connections.append(b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        stop.set()
        thread.join(2)
        server.close()


@dataclass
class Scene:
    """What a hostile bot is pointed at, all on the host."""

    root: Path
    token: str
    secret: str
    secret_file: Path
    other_bot: Path
    host_dir: Path

    def host_files(self) -> set[Path]:
        """Every file under the scene (to prove nothing new appeared)."""
        return {p for p in self.root.rglob("*")}


@pytest.fixture
def scene(open_dir: Path, monkeypatch: pytest.MonkeyPatch, loopback: Loopback) -> Scene:
    """Secrets and targets readable or writable by anyone on the host, so only the sandbox
    (not file permissions) can keep a bot away from them; ``ARENA_SECRET`` is in the referee's
    environment."""
    token = f"arena-hostile-{os.getpid()}-{threading.get_ident() % 10000}"
    secret = f"s3cret-{os.urandom(8).hex()}"
    monkeypatch.setenv("ARENA_SECRET", secret)
    secret_file = open_dir / "referee-secret.txt"
    secret_file.write_text(secret)
    secret_file.chmod(0o644)
    other = open_dir / "other-bot"
    other.mkdir(mode=0o755)
    (other / "strategy.py").write_text(f"# {secret}\n")
    host_dir = open_dir / "host-writable"
    host_dir.mkdir()
    host_dir.chmod(0o777)
    return Scene(open_dir, token, secret, secret_file, other, host_dir)


BotMaker = Callable[[str], Path]


@pytest.fixture
def hostile(scene: Scene, loopback: Loopback) -> BotMaker:
    """Copy a hostile bot next to the scene, with a ``target.json`` that aims it."""

    def make(name: str) -> Path:
        folder = scene.root / "bots" / name
        shutil.copytree(HOSTILE / name, folder)
        target = {
            "port": loopback.port,
            "token": scene.token,
            "secret_file": str(scene.secret_file),
            "other_bot": str(scene.other_bot),
            "host_dir": str(scene.host_dir),
        }
        (folder / "target.json").write_text(json.dumps(target))
        for path in [scene.root / "bots", folder, *folder.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        return folder

    return make
