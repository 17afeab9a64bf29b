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
    sqlite_app.config["PLACEMENT_MATCHES"] = 1  # one rated match each: both placed and ranked
    client = sqlite_app.test_client()
    login(client, "alice")
    urls = [
        "/", f"/ladders/{ladder.slug}", f"/bots/{bot_a.id}", f"/bots/{bot_b.id}", "/matches",
        f"/matches/{finished.id}", f"/matches/{running.id}", "/users/alice", "/account",
        f"/api/v1/ladders/{ladder.slug}", f"/api/v1/bots/{bot_a.id}/ratings",
        f"/api/v1/matches/{finished.id}/replay", f"/api/v1/matches/{running.id}/frames?seat=0",
        f"/bots/{bot_a.id}/stats", "/errors",
    ]  # fmt: skip
    for url in urls:
        assert client.get(url).status_code == 200, url
    stats = client.get(f"/api/v1/bots/{bot_a.id}/stats?version=1").get_json()["data"]
    assert stats["overall"]["matches"] == 1 and len(stats["by_day"]) == 1
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


def test_a_race_for_one_name_in_two_cases_has_one_winner_on_sqlite(sqlite_app: Flask) -> None:
    """Sign-ups take SQLite's write lock up front (``BEGIN IMMEDIATE``), so the second one finds
    the first's name; the index below holds even so."""
    from tests.web.site.test_case_and_idle import assert_one_took_the_name, race_signups

    names = ["Alice", "alice"]
    assert_one_took_the_name(race_signups(sqlite_app, names), names)


def test_the_database_refuses_another_case_of_a_name_on_sqlite(sqlite_app: Flask) -> None:
    from sqlalchemy.exc import IntegrityError

    from web.extensions import db
    from web.models import User

    db.session.add(User(username="Dora"))
    db.session.commit()
    db.session.add(User(username="dORA"))
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()


def test_names_that_clash_stop_the_upgrade_with_their_names(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The upgrade that makes names unique in any case names the clashing ones and stops."""
    from flask_migrate import upgrade
    from sqlalchemy import text

    from web import create_app
    from web.extensions import db

    app = create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'old.db'}", "REDIS_URL": ""})
    with app.app_context():
        upgrade(revision="faults2")
        for name in ("Alice", "alice", "bob"):
            db.session.execute(
                text("INSERT INTO users (username, is_admin, is_house, created_at)"
                     " VALUES (:name, false, false, CURRENT_TIMESTAMP)"),
                {"name": name},
            )  # fmt: skip
        db.session.commit()
        capfd.readouterr()
        with pytest.raises(SystemExit):
            upgrade()
        said = capfd.readouterr().err
        assert "differ only in case" in said and said.rstrip().endswith(": alice"), said
        db.session.execute(text("UPDATE users SET username = 'alice2' WHERE username = 'alice'"))
        db.session.commit()
        upgrade()
        index = "SELECT sql FROM sqlite_master WHERE name = 'uq_users_username_lower'"
        assert "lower(username)" in db.session.execute(text(index)).scalar_one()
        db.session.remove()
        db.engine.dispose()


def test_an_idle_session_ends_on_sqlite(sqlite_app: Flask) -> None:
    from datetime import timedelta

    from tests.web.site.test_accounts import is_logged_in
    from tests.web.site.test_case_and_idle import last_seen, set_last_seen
    from web.extensions import db

    _users()
    db.session.commit()
    client = sqlite_app.test_client()
    login(client, "alice")
    before = set_last_seen("alice", timedelta(hours=11, minutes=59))
    assert is_logged_in(client)
    assert last_seen("alice") > before + timedelta(hours=11), "use did not count as activity"
    set_last_seen("alice", timedelta(hours=12, minutes=1))
    assert not is_logged_in(client)
