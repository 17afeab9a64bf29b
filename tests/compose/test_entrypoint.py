"""The container entrypoint, its secret checks and its wait for services, run on the host (no
Docker needed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"
WAIT = ROOT / "docker" / "wait_for_services.py"
PREFLIGHT = ROOT / "docker" / "preflight.py"


def host_env(**extra: str) -> dict[str, str]:
    """This environment without ARENA_* settings, the venv first on PATH, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=False)


def test_wait_gives_up_on_a_database_that_never_answers() -> None:
    env = host_env(
        ARENA_DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:1/none",
        ARENA_WAIT_TIMEOUT="2",
    )
    started = time.monotonic()
    done = run([sys.executable, str(WAIT)], env)
    assert done.returncode == 1
    assert "database not ready" in done.stderr
    assert time.monotonic() - started < 20


def test_wait_passes_when_the_services_answer() -> None:
    database = os.environ.get("ARENA_TEST_DATABASE_URL")
    broker = os.environ.get("ARENA_TEST_REDIS_URL")
    if not (database and broker):
        if os.environ.get("ARENA_REQUIRE_SERVICES") == "1":
            pytest.fail("ARENA_REQUIRE_SERVICES=1 but ARENA_TEST_DATABASE_URL/REDIS_URL are unset")
        pytest.skip("set ARENA_TEST_DATABASE_URL and ARENA_TEST_REDIS_URL to run this")
    env = host_env(ARENA_DATABASE_URL=database, ARENA_REDIS_URL=broker, ARENA_WAIT_TIMEOUT="10")
    done = run([sys.executable, str(WAIT)], env)
    assert done.returncode == 0, done.stderr


def test_entrypoint_runs_any_other_command() -> None:
    done = run(["sh", str(ENTRYPOINT), "echo", "a", "b"], host_env())
    assert done.returncode == 0 and done.stdout == "a b\n"


def test_entrypoint_offers_the_demo_command() -> None:
    done = run(["sh", str(ENTRYPOINT), "demo", "--help"], service_env())
    assert done.returncode == 0, done.stderr
    assert "Register the sample bots of GAME" in done.stdout
    assert "--tables" in done.stdout


STRONG_KEY = "5f0c1e8a9b7d4c2e6a3f8b1d0e9c7a5b4f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c"
STRONG_DB = "postgresql+psycopg://arena:9c1f5e7a3b8d2c4e6f0a1b3c5d7e9f2a@127.0.0.1:1/arena"


def service_env(**extra: str) -> dict[str, str]:
    """Strong secrets and no services to wait for (SQLite, no Redis URL), plus ``extra``."""
    return host_env(**{"ARENA_SECRET_KEY": STRONG_KEY, "ARENA_DATABASE_URL": "sqlite://", **extra})


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        (None, "ARENA_SECRET_KEY is not set"),
        ("", "ARENA_SECRET_KEY is empty"),
        ("change-me-in-dot-env", "well-known placeholder"),
        ("dev-only-change-me", "well-known placeholder"),
        ("please-CHANGE_ME-before-going-online-0123456789", "well-known placeholder"),
        ("3f9a1c7e5b2d", "shorter than 32 characters"),
        ("ab" * 32, "fewer than 8 different characters"),
    ],
)
@pytest.mark.parametrize("service", ["web", "worker", "beat", "migrate", "demo"])
def test_entrypoint_refuses_a_weak_secret_key(service: str, key: str | None, reason: str) -> None:
    env = service_env()
    del env["ARENA_SECRET_KEY"]
    if key is not None:
        env["ARENA_SECRET_KEY"] = key
    # A database that never answers: the refusal must come before any wait for it.
    env["ARENA_DATABASE_URL"] = STRONG_DB
    env["ARENA_WAIT_TIMEOUT"] = "600"
    done = run(["sh", str(ENTRYPOINT), service], env)
    assert done.returncode == 1
    assert f"preflight: {service} not started" in done.stderr
    assert reason in done.stderr
    assert "openssl rand" in done.stderr  # says what to do


@pytest.mark.parametrize("password", ["arena", "postgres", "change-me", "short-pass-1", ""])
def test_entrypoint_refuses_a_weak_database_password(password: str) -> None:
    url = f"postgresql+psycopg://arena:{password}@postgres:5432/arena"
    done = run(["sh", str(ENTRYPOINT), "web"], service_env(ARENA_DATABASE_URL=url))
    assert done.returncode == 1
    assert "the database password (POSTGRES_PASSWORD)" in done.stderr


def test_preflight_passes_strong_secrets() -> None:
    env = service_env(ARENA_DATABASE_URL=STRONG_DB)
    done = run([sys.executable, str(PREFLIGHT), "web"], env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_other_commands_need_no_secrets() -> None:
    """Admin commands (``flask ...``, ``arena ...``) run without the service secrets."""
    done = run(["sh", str(ENTRYPOINT), "echo", "ok"], host_env())
    assert done.returncode == 0 and done.stdout == "ok\n"


def gunicorn_bind(env: dict[str, str]) -> str:
    done = run(["sh", str(ENTRYPOINT), "web", "--print-config"], env)
    assert done.returncode == 0, done.stderr
    found = re.search(r"^bind\s*=\s*(.+)$", done.stdout, re.MULTILINE)
    assert found, done.stdout
    return found.group(1).strip()


def test_the_site_ignores_arena_port() -> None:
    """ARENA_PORT in a Compose .env reaches the container; the site must not move for it."""
    assert gunicorn_bind(service_env(ARENA_PORT="9999")) == "['0.0.0.0:8000']"


def test_the_listen_address_is_its_own_setting() -> None:
    assert gunicorn_bind(service_env(ARENA_LISTEN="127.0.0.1:28123")) == "['127.0.0.1:28123']"


def test_cgroup_delegation_refuses_a_hierarchy_root() -> None:
    """On a host (or without the worker's bind mounts) nothing is handed over."""
    done = run(["sh", str(ENTRYPOINT), "delegate-cgroups"], host_env())
    assert done.returncode == 1
    assert "is not a writable sub-folder" in done.stderr
