"""The migration of challenges, chosen versions and deleted bots: up, down and up again on
both databases, leaving the schema the models describe."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from tests.web.conftest import PG_URL, missing


def _schema(engine: object) -> tuple[set[str], set[str], set[str]]:
    seen = inspect(engine)
    bots = {c["name"] for c in seen.get_columns("bots")}
    matches = {c["name"] for c in seen.get_columns("matches")}
    return set(seen.get_table_names()), bots, matches


def _differences(db: Any) -> list[Any]:
    """What autogenerate would change in the new table and columns."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with db.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), db.metadata)
    ours = ("challenge", "pinned_number", "deleted_at")
    return [d for d in diffs if any(word in repr(d) for word in ours)]


@pytest.fixture
def fresh_pg() -> Iterator[str]:
    """An empty PostgreSQL database of its own (the run's shared one stays at the head)."""
    admin = make_url(PG_URL)
    name = f"arena_migration_{uuid.uuid4().hex[:10]}"
    try:
        engine = create_engine(admin, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        missing(f"PostgreSQL at {admin.render_as_string()} is not reachable: {exc}")
    yield admin.set(database=name).render_as_string(hide_password=False)
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    engine.dispose()


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_the_migration_goes_up_and_down(
    database: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from flask_migrate import downgrade, upgrade

    from web import create_app
    from web.extensions import db

    if database == "sqlite":
        url = f"sqlite:///{tmp_path / 'arena.db'}"
    else:
        url = request.getfixturevalue("fresh_pg")
    app = create_app({"DATABASE_URL": url, "STORAGE_DIR": str(tmp_path), "REDIS_URL": ""})
    with app.app_context():
        upgrade()
        tables, bots, matches = _schema(db.engine)
        assert "challenges" in tables and {"pinned_number", "deleted_at"} <= bots
        assert "challenge_id" in matches
        downgrade(revision="names01")
        tables, bots, matches = _schema(db.engine)
        assert "challenges" not in tables and not {"pinned_number", "deleted_at"} & bots
        assert "challenge_id" not in matches
        upgrade()
        tables, bots, matches = _schema(db.engine)
        assert "challenges" in tables and "challenge_id" in matches
        if database == "postgresql":  # SQLite cannot reflect every index to compare
            assert not _differences(db), "the migrated schema is the one the models describe"
        db.session.remove()
        db.engine.dispose()
