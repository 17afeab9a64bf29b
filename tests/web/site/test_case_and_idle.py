"""Two sign-ups racing for one name in two cases, and sessions that end when left idle, against
the real site on PostgreSQL (the same on SQLite: test_sqlite.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from tests.web.site.conftest import World, login
from tests.web.site.test_accounts import GOOD_PASSWORD, is_logged_in, register

WAIT = 120.0


def race_signups(app: Flask, names: list[str]) -> list[Any]:
    """Each name signed up at once from its own client and thread; their answers in order."""
    answers: list[Any] = [None] * len(names)

    def sign_up(index: int) -> None:
        with app.app_context():  # a database session of its own, as a server worker has
            answers[index] = register(app.test_client(), names[index], GOOD_PASSWORD)

    threads = [threading.Thread(target=sign_up, args=(i,)) for i in range(len(names))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert all(answer is not None for answer in answers), "a sign-up did not finish"
    return answers


@pytest.fixture
def both_past_the_check(app: Flask) -> Iterator[threading.Barrier]:
    """Hold each sign-up's INSERT until both are there: both have found the name free."""
    from sqlalchemy import event

    from web.extensions import db

    barrier = threading.Barrier(2, timeout=WAIT)

    def hold(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO USERS"):
            barrier.wait()

    event.listen(db.engine, "before_cursor_execute", hold)
    yield barrier
    event.remove(db.engine, "before_cursor_execute", hold)


def assert_one_took_the_name(answers: list[Any], names: list[str]) -> None:
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import User

    assert all(answer.status_code < 500 for answer in answers), [a.status_code for a in answers]
    won = [answer for answer in answers if answer.status_code == 302]
    lost = [answer for answer in answers if answer.status_code != 302]
    assert len(won) == 1 and len(lost) == 1, [a.status_code for a in answers]
    assert "that name is taken" in lost[0].get_data(as_text=True)
    db.session.commit()
    count = select(func.count()).where(func.lower(User.username) == names[0].lower())
    assert db.session.scalar(count) == 1


def test_a_race_for_one_name_in_two_cases_has_one_winner(
    app: Flask, both_past_the_check: threading.Barrier
) -> None:
    names = ["Alice", "alice"]
    answers = race_signups(app, names)
    assert not both_past_the_check.broken, "the two sign-ups did not race"
    assert_one_took_the_name(answers, names)


def test_the_database_refuses_another_case_of_a_name(app: Flask) -> None:
    from sqlalchemy.exc import IntegrityError

    from web.extensions import db
    from web.models import User

    db.session.add(User(username="Dora"))
    db.session.commit()
    db.session.add(User(username="dORA"))
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()


# --- idle sessions ----------------------------------------------------------------------------


def last_seen(username: str) -> Any:
    """The user's session's ``last_seen_at``, read in a transaction of its own (on SQLite the
    test's transaction would otherwise hold the lock the site's requests need)."""
    from sqlalchemy import select

    from web.extensions import db
    from web.models import User, UserSession

    db.session.commit()
    query = select(UserSession.last_seen_at).join(User, User.id == UserSession.user_id)
    seen = db.session.scalar(query.where(User.username == username))
    db.session.commit()
    return seen


def set_last_seen(username: str, ago: timedelta) -> Any:
    from sqlalchemy import select, update

    from web.extensions import db
    from web.models import User, UserSession, utcnow

    db.session.commit()
    owner = select(User.id).where(User.username == username).scalar_subquery()
    when = utcnow() - ago
    db.session.execute(
        update(UserSession).where(UserSession.user_id == owner).values(last_seen_at=when)
    )
    db.session.commit()
    return last_seen(username)


def test_an_idle_session_ends(app: Flask, world: World) -> None:
    client = app.test_client()
    login(client, "alice")
    assert is_logged_in(client)
    set_last_seen("alice", timedelta(hours=12, minutes=1))
    assert not is_logged_in(client)
    assert app.config["SESSION_IDLE_TIMEOUT"] == 12 * 3600


def test_a_session_used_within_the_idle_time_goes_on(app: Flask, world: World) -> None:
    client = app.test_client()
    login(client, "alice")
    before = set_last_seen("alice", timedelta(hours=11, minutes=59))
    assert is_logged_in(client)
    assert last_seen("alice") > before + timedelta(hours=11), "use did not count as activity"
    set_last_seen("alice", timedelta(hours=11, minutes=59))
    assert is_logged_in(client), "the session was idle less than the timeout again"


def test_the_idle_timeout_is_a_setting(app: Flask, world: World) -> None:
    client = app.test_client()
    login(client, "alice")
    set_last_seen("alice", timedelta(minutes=31))
    assert is_logged_in(client)
    app.config["SESSION_IDLE_TIMEOUT"] = 30 * 60
    set_last_seen("alice", timedelta(minutes=31))
    assert not is_logged_in(client)


def test_a_session_is_marked_seen_at_most_once_a_minute(app: Flask, world: World) -> None:
    from sqlalchemy import event

    from web.extensions import db

    client = app.test_client()
    login(client, "alice")
    writes: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE USER_SESSIONS"):
            writes.append(statement)

    recent = set_last_seen("alice", timedelta(seconds=30))
    event.listen(db.engine, "before_cursor_execute", count)
    try:
        for _ in range(5):
            assert is_logged_in(client)
        assert writes == [], "a session seen within the minute was written again"
        assert last_seen("alice") == recent
        stale = set_last_seen("alice", timedelta(minutes=2))
        writes.clear()
        for _ in range(5):
            assert is_logged_in(client)
    finally:
        event.remove(db.engine, "before_cursor_execute", count)
    assert len(writes) == 1, writes
    assert last_seen("alice") > stale
