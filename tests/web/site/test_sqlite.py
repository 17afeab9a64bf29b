"""The site on SQLite, the database of the embedded platform (``arena up``): every page and API
listing renders with data in it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from tests.web.site.conftest import (
    GAME,
    RUNNING_SEED,
    FreshClient,
    _bot,
    _finish,
    _match,
    _run_partly,
    _users,
    login,
    record,
)


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[Flask]:
    from flask_migrate import upgrade

    from web import create_app

    app = create_app(
        {
            "DATABASE_URL": f"sqlite:///{tmp_path / 'arena.db'}",
            "STORAGE_DIR": str(tmp_path / "storage"),
            "REDIS_URL": "",
            "SECRET_KEY": "sqlite-tests",
            "PAGE_CACHE_SECONDS": 0.0,
        }
    )
    app.test_client_class = FreshClient
    with app.app_context():
        upgrade()
        yield app
        from web.extensions import db

        db.session.remove()
        db.engine.dispose()


def test_pages_and_api_on_sqlite(sqlite_app: Flask) -> None:
    from web.extensions import db
    from web.models import MatchStatus
    from web.services import ladders

    _admin, owner, other = _users()
    ladder = ladders.get_or_create_ladder(GAME, players=2)
    (bot_a, ver_a), (bot_b, ver_b) = _bot(owner, "alice-bot"), _bot(other, "mallory-bot")
    finished = _match(ladder, [ver_a, ver_b], 42, MatchStatus.FINISHED)
    _finish(finished, record(42))
    running = _match(ladder, [ver_a, ver_b], RUNNING_SEED, MatchStatus.RUNNING)
    _run_partly(running, record(RUNNING_SEED))
    db.session.commit()
    client = sqlite_app.test_client()
    login(client, "alice")
    urls = [
        "/", f"/ladders/{ladder.slug}", f"/bots/{bot_a.id}", f"/bots/{bot_b.id}", "/matches",
        f"/matches/{finished.id}", f"/matches/{running.id}", "/users/alice", "/account",
        f"/api/v1/ladders/{ladder.slug}", f"/api/v1/bots/{bot_a.id}/ratings",
        f"/api/v1/matches/{finished.id}/replay", f"/api/v1/matches/{running.id}/frames?seat=0",
    ]  # fmt: skip
    for url in urls:
        assert client.get(url).status_code == 200, url
    standings = client.get(f"/api/v1/ladders/{ladder.slug}").get_json()["data"]["standings"]
    assert [row["rank"] for row in standings] == [1, 2]
    assert all(len(row["trend"]) == 1 for row in standings)
