"""Wait until the database (``ARENA_DATABASE_URL``) and the broker (``ARENA_REDIS_URL``) answer.

Run by the container entrypoint before any service starts; exits 1 after
``ARENA_WAIT_TIMEOUT`` seconds (60) with the last error.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable


def database_ready(url: str) -> None:
    """Raise unless a connection to ``url`` can run ``SELECT 1``."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url, pool_pre_ping=False)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    finally:
        engine.dispose()


def broker_ready(url: str) -> None:
    """Raise unless the Redis at ``url`` answers PING."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=2)
    try:
        client.ping()
    finally:
        client.close()


def wait(name: str, check: Callable[[], None], deadline: float) -> None:
    """Retry ``check`` until it passes or ``deadline`` (monotonic) is reached."""
    while True:
        try:
            check()
            return
        except Exception as exc:  # any failure means "not yet"
            if time.monotonic() > deadline:
                sys.exit(f"wait: {name} not ready: {str(exc).splitlines()[0]}")
            time.sleep(1)


def main() -> None:
    deadline = time.monotonic() + float(os.environ.get("ARENA_WAIT_TIMEOUT", "60"))
    database = os.environ.get("ARENA_DATABASE_URL", "")
    if database and not database.startswith("sqlite"):
        wait("database", lambda: database_ready(database), deadline)
    broker = os.environ.get("ARENA_REDIS_URL", "")
    if broker.startswith("redis://"):
        wait("redis", lambda: broker_ready(broker), deadline)


if __name__ == "__main__":
    main()
