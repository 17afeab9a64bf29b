"""Service configuration: defaults, then ``ARENA_``-prefixed environment variables, then overrides.

Only plain data lives here; nothing is connected or created while reading it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arena.uploads import MAX_UPLOAD_BYTES

PREFIX = "ARENA_"


def default_settings(root: Path | None = None) -> dict[str, Any]:
    """The settings used when nothing overrides them (embedded: SQLite under ``./var``)."""
    var = (root or Path.cwd()) / "var"
    return {
        "SECRET_KEY": "dev-only-change-me",
        "DATABASE_URL": f"sqlite:///{var / 'arena.db'}",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "STORAGE_DIR": str(var / "storage"),
        # An object store instead of STORAGE_DIR (s3://bucket/prefix), and how to reach it.
        "STORAGE_URL": "",
        "S3_ENDPOINT_URL": "",
        "S3_REGION": "",
        "S3_ACCESS_KEY_ID": "",
        "S3_SECRET_ACCESS_KEY": "",
        "S3_TIMEOUT": 30.0,
        # Where a worker keeps the bot files it fetched from the object store, and how much.
        "CACHE_DIR": str(var / "cache"),
        "CACHE_MAX_BYTES": 2 * 1024**3,
        "SANDBOX": "bwrap",
        "TRUSTED_SANDBOX": "bwrap",
        "ALLOW_UNSANDBOXED_SAMPLES": False,
        "MAX_CONTENT_LENGTH": MAX_UPLOAD_BYTES,
        "UPLOAD_MAX_BYTES": 64 * 1024 * 1024,
        "UPLOAD_MAX_FILES": 2000,
        "UPLOAD_MAX_RATIO": 100,
        "BUILD_TIMEOUT": 120,
        "SELFTEST_TIMEOUT": 5.0,
        "MOVE_TIMEOUT": 2.0,
        "TIME_BANK": 20.0,
        "MATCH_BUDGET": 600,
        "MATCH_LEASE": 12,
        "WORKER_HOST": "",
        "MAX_ATTEMPTS": 3,
        "MAX_LOST_WORKERS": 10,
        "RETRY_BACKOFF": 5.0,
        "RETRY_BACKOFF_MAX": 600.0,
        "DB_PATIENCE": 300.0,
        "DB_CONNECT_TIMEOUT": 10,
        "DB_STATEMENT_TIMEOUT": 0,
        "REDIS_SOCKET_TIMEOUT": 30.0,
        "QUEUED_STALE_AFTER": 120,
        "SCHEDULE_INTERVAL": 30.0,
        "REAP_INTERVAL": 60.0,
        "LEASE_CHECK_INTERVAL": 2.0,
        "QUEUE_TARGET": 4,
        "PLACEMENT_MATCHES": 24,
        "SETTLED_SIGMA": 2.5,
        "SETTLED_INTERVAL": 600.0,
        "PAUSE_AFTER_FAILURES": 5,
        # Owners' webhooks (web.services.webhooks): refuse private, loopback and link-local
        # destinations unless this is set (development only); seconds per try; tries; the
        # first retry's delay in seconds (doubled after each failed try).
        "WEBHOOK_ALLOW_PRIVATE": False,
        "WEBHOOK_TIMEOUT": 5.0,
        "WEBHOOK_MAX_TRIES": 6,
        "WEBHOOK_BACKOFF": 30.0,
        "VALIDATION_MATCH": True,
        "WORKER_CONCURRENCY": 2,
        "VISIBILITY_TIMEOUT": 3600,
        "BROKER_PREFIX": "",
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": False,
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        "AUTH_RATE_LIMIT": "10 per minute",
        "LOGIN_ACCOUNT_RATE_LIMIT": "30 per hour",
        "LOGIN_ACCOUNT_WIDE_RATE_LIMIT": "300 per hour",
        "SESSION_MAX_AGE": 14 * 24 * 3600,
        "SESSION_IDLE_TIMEOUT": 12 * 3600,
        "UPLOAD_RATE_LIMIT": "20 per hour",
        "UPLOAD_REFUSED_RATE_LIMIT": "60 per hour",
        # Challenges an author may ask for, and the matches one challenge may hold.
        "CHALLENGE_RATE_LIMIT": "12 per hour",
        "CHALLENGE_MAX_MATCHES": 12,
        "CHALLENGE_QUEUE_MAX": 240,
        "SEAT_LOG_DAYS": 30,
        # People at the tables (``web.services.tables``): their clock (free seconds per move,
        # then a bank), the most a table may last before every answer is late (and at most
        # MATCH_BUDGET - 60: a worker's task is stopped past its budget), and how many tables
        # may be open at once per user and per server (each holds a worker process).
        "HUMAN_MOVE_TIMEOUT": 30.0,
        "HUMAN_TIME_BANK": 300.0,
        "HUMAN_MATCH_MAX": 1800.0,
        "HUMAN_TABLES_PER_USER": 1,
        "HUMAN_TABLES": 4,
        "HUMAN_TABLE_RATE_LIMIT": "30 per hour",
        # Tables a bot version must have played before its page says how it fares against people.
        "HUMAN_LADDER_MIN_GAMES": 5,
        "API_RATE_LIMIT": "600 per minute",
        "PAGE_CACHE_SECONDS": 5.0,
        "LIVE_STREAM_LENGTH": 5000,
        "LIVE_STREAM_TTL": 3600,
        "LIVE_STREAMS": 48,
        "LIVE_STREAMS_PER_CLIENT": 4,
        "LIVE_HEARTBEAT": 15.0,
        "LIVE_BATCH": 0.0,
        "LIVE_STREAM_SECONDS": 600.0,
        "TRUSTED_PROXIES": 0,
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_IN_MEMORY_FALLBACK_ENABLED": True,
        "RATELIMIT_HEADERS_ENABLED": True,
    }


def _coerce(raw: str, like: Any) -> Any:
    """Read an environment string as the type of the default it replaces."""
    if isinstance(like, bool):
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    if isinstance(like, int):
        return int(raw)
    if isinstance(like, float):
        return float(raw)
    if isinstance(like, (dict, list)):
        return json.loads(raw)
    return raw


def from_env(
    defaults: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Settings overridden by ``ARENA_<NAME>`` environment variables."""
    env = os.environ if environ is None else environ
    settings = dict(defaults)
    for key, raw in env.items():
        if key.startswith(PREFIX):
            name = key[len(PREFIX) :]
            settings[name] = _coerce(raw, defaults.get(name, ""))
    return settings


def load(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Defaults, then the environment, then ``overrides`` (tests)."""
    settings = from_env(default_settings())
    settings.update(overrides or {})
    settings.setdefault("SQLALCHEMY_DATABASE_URI", settings["DATABASE_URL"])
    settings.setdefault("RATELIMIT_STORAGE_URI", limiter_storage(settings["REDIS_URL"]))
    settings.setdefault("REMEMBER_COOKIE_SECURE", settings["SESSION_COOKIE_SECURE"])
    if overrides and "DATABASE_URL" in overrides:
        settings["SQLALCHEMY_DATABASE_URI"] = overrides["DATABASE_URL"]
    settings.setdefault("SQLALCHEMY_ENGINE_OPTIONS", engine_options(settings))
    return settings


def engine_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """PostgreSQL: a host that drops packets fails a connection in seconds, never hangs it.

    ``connect_timeout`` bounds the whole connection set-up; TCP keepalives and
    ``tcp_user_timeout`` close an established connection whose packets stop being
    acknowledged (a lost host or a cut network). ``DB_STATEMENT_TIMEOUT`` (seconds, 0: none)
    bounds each statement on the server. Every pooled connection is tested before use.
    """
    url = str(settings["SQLALCHEMY_DATABASE_URI"])
    if not url.startswith("postgresql"):
        return {}
    connect = int(settings["DB_CONNECT_TIMEOUT"])
    args: dict[str, Any] = {
        "connect_timeout": connect,
        "keepalives": 1,
        "keepalives_idle": 10,
        "keepalives_interval": 5,
        "keepalives_count": 3,
        "tcp_user_timeout": 3 * connect * 1000,
    }
    statement = float(settings["DB_STATEMENT_TIMEOUT"])
    if statement > 0:
        args["options"] = f"-c statement_timeout={int(statement * 1000)}"
    return {"pool_pre_ping": True, "connect_args": args}


def limiter_storage(redis_url: str | None) -> str:
    """Rate-limit counters live in Redis (shared by every web worker); in memory without one.

    ``redis+socket://`` (the embedded platform's Unix socket) is spelled ``redis+unix://`` by the
    limits library. If that Redis cannot be reached, Flask-Limiter falls back to memory
    (``RATELIMIT_IN_MEMORY_FALLBACK_ENABLED``), per process.
    """
    if not redis_url:
        return "memory://"
    if redis_url.startswith("redis+socket://"):
        return "redis+unix://" + redis_url[len("redis+socket://") :]
    return redis_url
