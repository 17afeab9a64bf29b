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


@pytest.mark.parametrize("seed", [0, 2**31, 2**63 - 1, 2**63, 2**64 - 1])
def test_a_64_bit_seed_comes_back_whole_on_sqlite(sqlite_app: Flask, seed: int) -> None:
    from sqlalchemy import select, text

    from web.extensions import db
    from web.models import Match, MatchStatus
    from web.services import ladders

    _admin, owner, other = _users()
    ladder = ladders.get_or_create_ladder(GAME, players=2)
    versions = [_bot(owner, "alice-bot")[1], _bot(other, "mallory-bot")[1]]
    made = _match(ladder, versions, seed, MatchStatus.QUEUED)
    db.session.commit()
    db.session.expire_all()
    assert db.session.get(Match, made.id).seed == seed
    assert db.session.scalar(select(Match.id).where(Match.seed == seed)) == made.id
    stored = db.session.execute(text("SELECT seed FROM matches")).scalar_one()
    assert -(2**63) <= stored < 2**63  # a signed 64-bit integer in the column


def test_a_seed_outside_64_bits_is_refused(sqlite_app: Flask) -> None:
    from sqlalchemy.exc import StatementError

    from web.extensions import db
    from web.models import MatchStatus
    from web.services import ladders

    _admin, owner, other = _users()
    ladder = ladders.get_or_create_ladder(GAME, players=2)
    versions = [_bot(owner, "alice-bot")[1], _bot(other, "mallory-bot")[1]]
    with pytest.raises(StatementError, match="a seed is 0 to 2\\*\\*64 - 1"):
        _match(ladder, versions, 2**64, MatchStatus.QUEUED)
    db.session.rollback()
