"""Refuse to start a platform service with weak secrets, or a worker whose bots would be unbounded.

Run by the container entrypoint before any service starts (``preflight.py SERVICE``). Each
problem is printed with what to do; the exit status is 1 if there is any.

- ``ARENA_SECRET_KEY`` (signs sessions and tokens) must be set, at least 32 characters, not a
  placeholder (``change-me-in-dot-env`` and the like) and not one repeated character.
- The database password inside ``ARENA_DATABASE_URL`` (PostgreSQL) must be at least 16
  characters and not a well-known one (``arena``, ``postgres``, ``password`` ...).
- The worker: its sandbox must run, and per-bot memory, process and CPU limits must hold (a
  delegated cgroup, see docker-compose.yml). ``ARENA_ALLOW_UNLIMITED_BOTS=1`` turns the missing
  limits into a warning, for a machine where only one's own bots run.
"""

from __future__ import annotations

import os
import re
import sys

MIN_SECRET_KEY = 32
MIN_DATABASE_PASSWORD = 16
MIN_DISTINCT = 8
WELL_KNOWN = frozenset(
    {
        "arena",
        "kozyri",
        "kozyri-arena",
        "postgres",
        "password",
        "passw0rd",
        "secret",
        "secret-key",
        "secretkey",
        "dev",
        "development",
        "test",
        "admin",
        "root",
        "example",
        "default",
        "dev-only-change-me",
        "change-me-in-dot-env",
    }
)
PLACEHOLDER = re.compile(r"change.?me|replace.?me|your.?secret|^x+$|^0+$", re.IGNORECASE)
LIMITS_NEEDED = ("memory", "processes", "cpu_share")
SECRETS_FOR = frozenset({"web", "worker", "beat", "migrate", "demo", "samples"})


def weakness(value: str, minimum: int) -> str | None:
    """Why ``value`` is no secret, or None if it looks like one."""
    if not value:
        return "is empty"
    if value.lower() in WELL_KNOWN or PLACEHOLDER.search(value):
        return "is a well-known placeholder"
    if len(value) < minimum:
        return f"is shorter than {minimum} characters"
    if len(set(value)) < MIN_DISTINCT:
        return f"has fewer than {MIN_DISTINCT} different characters"
    return None


def secret_key_problem(environ: dict[str, str]) -> str | None:
    if "ARENA_SECRET_KEY" not in environ:
        return "ARENA_SECRET_KEY is not set"
    why = weakness(environ["ARENA_SECRET_KEY"], MIN_SECRET_KEY)
    return None if why is None else f"ARENA_SECRET_KEY {why}"


def database_password_problem(environ: dict[str, str]) -> str | None:
    """Only PostgreSQL URLs with a host are checked (SQLite has no password)."""
    url = environ.get("ARENA_DATABASE_URL", "")
    if not url.startswith("postgresql"):
        return None
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return "ARENA_DATABASE_URL is not a valid database URL (use a hex password)"
    if not parsed.host:
        return None  # a local socket: the server's own rules apply
    why = weakness(parsed.password or "", MIN_DATABASE_PASSWORD)
    return None if why is None else f"the database password (POSTGRES_PASSWORD) {why}"


def bot_limits_problem(environ: dict[str, str]) -> str | None:
    """Why bots of this worker would not be held to per-bot limits, or None."""
    from sandbox import SandboxError, get_sandbox
    from sandbox.base import Limits

    name = environ.get("ARENA_SANDBOX", "bwrap")
    try:
        sandbox = get_sandbox(name)
    except SandboxError as exc:
        return f"the worker cannot isolate bots: {exc}"
    held = sandbox.enforced(Limits())
    missing = [limit for limit in LIMITS_NEEDED if not held.get(limit)]
    if not missing:
        return None
    return (
        f"per-bot limits would not hold in sandbox {name!r}: {', '.join(missing)} "
        "(give the worker its delegated cgroups, see README, Docker Compose)"
    )


def problems(service: str, environ: dict[str, str]) -> tuple[list[str], list[str]]:
    """The problems that stop ``service``, and the ones only worth a warning."""
    found: list[str] = []
    warnings: list[str] = []
    if service in SECRETS_FOR:
        found += filter(None, [secret_key_problem(environ), database_password_problem(environ)])
    if service == "worker":
        limits = bot_limits_problem(environ)
        if limits is not None:
            allowed = environ.get("ARENA_ALLOW_UNLIMITED_BOTS") == "1"
            (warnings if allowed else found).append(limits)
    return found, warnings


def main(argv: list[str]) -> int:
    service = argv[1] if len(argv) > 1 else "web"
    found, warnings = problems(service, dict(os.environ))
    for warning in warnings:
        print(f"preflight: warning: {warning}", file=sys.stderr)
    for problem in found:
        print(f"preflight: {service} not started: {problem}", file=sys.stderr)
    if found:
        print(
            "preflight: put strong values in .env, e.g. ARENA_SECRET_KEY=$(openssl rand -hex 32)"
            " and POSTGRES_PASSWORD=$(openssl rand -hex 24)",
            file=sys.stderr,
        )
        return 1
    if service == "worker":
        print("preflight: per-bot memory, process and CPU limits hold", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
