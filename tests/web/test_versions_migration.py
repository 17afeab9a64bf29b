"""The migration of challenges, chosen versions and deleted bots: up, down and up again, and
the schema it leaves on PostgreSQL is the one the models describe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, inspect


def _schema(engine: Any) -> tuple[set[str], set[str], set[str]]:
    seen = inspect(engine)
    bots = {c["name"] for c in seen.get_columns("bots")}
    matches = {c["name"] for c in seen.get_columns("matches")}
    return set(seen.get_table_names()), bots, matches


def test_the_migration_goes_up_down_and_up_again(tmp_path: Path) -> None:
    from flask_migrate import downgrade, upgrade

    from web import create_app
    from web.extensions import db

    url = f"sqlite:///{tmp_path / 'arena.db'}"
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
        db.session.remove()
        db.engine.dispose()


def test_the_migrated_postgresql_schema_is_the_models_one(pg_url: str) -> None:
    """What autogenerate would change in the new table and columns: nothing (SQLite cannot
    reflect every index to compare, so this runs on the run's PostgreSQL database)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from web.extensions import db

    engine = create_engine(pg_url)
    with engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), db.metadata)
        tables = inspect(conn).get_table_names()
    engine.dispose()
    assert "challenges" in tables
    ours = ("challenge", "pinned_number", "deleted_at")
    assert not [d for d in diffs if any(word in repr(d) for word in ours)]
