"""The platform service: database, worker pool, ladders. ``create_app`` builds the Flask app.

Nothing here connects to a database or broker at import or while building the app: migrations
run from the CLI (``flask --app web db upgrade``) and workers from ``celery -A web.worker``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask

from web import config as settings


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app from defaults, then ``ARENA_*`` environment variables, then ``config``."""
    app = Flask(__name__)
    app.config.from_mapping(settings.load(config))
    _init_extensions(app)
    _register_blueprints(app)
    from web.celery_app import celery_init_app
    from web.cli import register_commands

    register_commands(app)
    celery_init_app(app)
    return app


def _init_extensions(app: Flask) -> None:
    from web.extensions import csrf, db, limiter, login_manager, migrate
    from web.services.queue import install_commit_hooks

    db.init_app(app)
    migrate.init_app(app, db, directory=str(_migrations_dir()), render_as_batch=True)
    login_manager.init_app(app)
    csrf.init_app(app)
    app.config.setdefault("RATELIMIT_STORAGE_URI", "memory://")
    limiter.init_app(app)
    install_commit_hooks()
    with app.app_context():
        _tune_sqlite(db.engine)


def _migrations_dir() -> Any:
    from pathlib import Path

    return Path(__file__).resolve().parent / "migrations"


def _tune_sqlite(engine: Any) -> None:
    """SQLite only: WAL, a busy timeout, and write transactions that take the lock up front.

    Several worker processes write one SQLite file in embedded mode; ``BEGIN IMMEDIATE`` makes
    each transaction wait for the write lock at its start instead of failing half way through,
    which serialises rating updates the way row locks do on PostgreSQL. Page reads (GET, HEAD)
    begin deferred: they read a snapshot and never wait for the write lock.
    """
    from sqlalchemy import event

    if engine.dialect.name != "sqlite" or getattr(engine, "_arena_tuned", False):
        return
    engine._arena_tuned = True

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        # With WAL this is still crash-safe; a commit lost to a power cut leaves its match
        # running, and the reaper has it played again.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN" if _reading_page() else "BEGIN IMMEDIATE")


def _reading_page() -> bool:
    """A GET or HEAD request only reads: under WAL it needs no write lock and takes none, so
    pages are served while workers write (and never hold the workers up)."""
    from flask import has_request_context, request

    return has_request_context() and request.method in ("GET", "HEAD")


def _register_blueprints(app: Flask) -> None:
    from web.health import bp as health_bp
    from web.models import User

    app.register_blueprint(health_bp)

    from web import api, views

    views.register(app)
    api.register(app)

    from web.extensions import login_manager

    @login_manager.user_loader
    def _load_user(user_id: str) -> User | None:
        """The user of the cookie's session, if that session is still live on the server."""
        from flask import session

        from web.services.users import SESSION_KEY, session_user

        return session_user(user_id, session.get(SESSION_KEY))
