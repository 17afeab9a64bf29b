"""The container entrypoint and its wait for services, run on the host (no Docker needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"
WAIT = ROOT / "docker" / "wait_for_services.py"


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
    done = run(["sh", str(ENTRYPOINT), "demo", "--help"], host_env())
    assert done.returncode == 0, done.stderr
    assert "Register the sample bots of GAME" in done.stdout
    assert "--tables" in done.stdout
