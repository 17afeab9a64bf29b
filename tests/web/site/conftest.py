"""Fixtures for the site and API: the app on PostgreSQL, users of every role, a ladder with
finished matches, and a running match whose partial replay holds hidden cards.

Rows are inserted directly (bots need not build to appear on pages); replays are real, recorded
by the engine with built-in agents.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.web.conftest import _truncate_all, base_config, serving

PASSWORD = "correct horse battery"
GAME = "svoi-kozyri"
RUNNING_SEED = 1_987_654_321


class FreshClient(FlaskClient):
    """A test client whose requests start with an empty ``g``.

    The fixtures hold an app context for the database, and a request reuses the current app
    context of its app, so without this ``g`` (the logged-in user, the CSRF token) would carry
    over from one request, or one client, to the next.
    """

    def open(self, *args: Any, **kwargs: Any) -> Any:
        from flask import g

        for key in list(vars(g)):
            delattr(g, key)
        return super().open(*args, **kwargs)


@pytest.fixture
def app(pg_url: str, redis_url: str, shared_tmp: Path) -> Iterator[Flask]:
    """The app with CSRF on and rate limits counted in the test Redis database."""
    import redis

    from web import create_app

    _truncate_all(pg_url)
    redis.Redis.from_url(redis_url).flushdb()
    config = base_config(
        shared_tmp,
        DATABASE_URL=pg_url,
        REDIS_URL=redis_url,
        RATELIMIT_STORAGE_URI=redis_url,
        SECRET_KEY="site-tests",
        SANDBOX="none",
        TRUSTED_SANDBOX="none",
        VALIDATION_MATCH=False,
        PAGE_CACHE_SECONDS=0.0,
    )
    config.pop("TESTING", None)  # keep errors as pages and JSON, as in production
    application = create_app(config)
    application.test_client_class = FreshClient
    with application.app_context():
        yield application
        from web.extensions import db

        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def csrf_from(html: str) -> str:
    """The CSRF token of the first form in a page."""
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', html) or re.search(
        r'name="csrf_token" value="([^"]+)"', html
    )
    assert found, "no CSRF token in the page"
    return found.group(1)


def login(client: FlaskClient, username: str, password: str = PASSWORD) -> None:
    page = client.get("/login").get_data(as_text=True)
    answer = client.post(
        "/login", data={"username": username, "password": password, "csrf_token": csrf_from(page)}
    )
    assert answer.status_code == 302, answer.get_data(as_text=True)[-900:]


@dataclass
class World:
    """Everything the tests look at: people, bots, a ladder, matches and a running match."""

    admin: Any
    owner: Any
    other: Any
    ladder: Any
    bots: list[Any]
    versions: list[Any]
    finished: Any
    running: Any
    hidden: set[str] = field(default_factory=set)
    """Cards in seat 1's hand at the point the running match has reached (seat 1 is not owner's)."""
    tokens: dict[str, str] = field(default_factory=dict)


def _users() -> tuple[Any, Any, Any]:
    from werkzeug.security import generate_password_hash

    from web.services import users

    # A cheap hash keeps the tests quick; the site itself uses werkzeug's default (scrypt).
    cheap = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")
    made = []
    for name, admin in (("root-admin", True), ("alice", False), ("mallory", False)):
        user = users.create_user(name, admin=admin)
        user.password_hash = cheap
        made.append(user)
    return made[0], made[1], made[2]


def _bot(owner: Any, name: str) -> tuple[Any, Any]:
    from web.extensions import db
    from web.models import Bot, BotVersion, VersionStatus
    from web.storage import get_storage

    bot = Bot(owner_id=owner.id, name=name)
    db.session.add(bot)
    db.session.flush()
    version = BotVersion(
        bot_id=bot.id,
        number=1,
        sha256=get_storage().put_archive(f"SECRET-SOURCE of {name}".encode()),
        status=VersionStatus.ACTIVE,
        games=[GAME],
        language="python",
        build_log=f"SECRET-BUILD-LOG of {name}",
        validation_log=f"SECRET-VALIDATION-LOG of {name}",
    )
    db.session.add(version)
    db.session.flush()
    return bot, version


def record(seed: int, players: int = 2) -> dict[str, Any]:
    """A real replay of greedy agents, with debug and stderr text in every step."""
    import random

    from arena.agents import greedy_agent
    from arena.games import make_game
    from arena.replay import record_builtin_match

    state = make_game(GAME, players=players).new_state(seed)
    replay: dict[str, Any] = dict(
        record_builtin_match(
            state, [greedy_agent] * players, ["a", "b"], random.Random(seed), timed=False
        )
    )
    for step in replay["steps"]:
        step["debug"] = f"DEBUG-OF-SEAT-{step['seat']}"
        step["stderr"] = f"STDERR-OF-SEAT-{step['seat']}"
    return replay


def _store(replay: dict[str, Any]) -> str:
    from web.storage import get_storage

    return get_storage().put_replay(orjson.dumps(replay))


def _match(ladder: Any, versions: list[Any], seed: int, status: Any) -> Any:
    from web.extensions import db
    from web.models import Match, MatchSeat

    match = Match(ladder_id=ladder.id, game_config=ladder.game_config(), seed=seed, status=status)
    for seat, version in enumerate(versions):
        match.seats.append(MatchSeat(seat=seat, bot_id=version.bot_id, bot_version_id=version.id))
    db.session.add(match)
    db.session.flush()
    return match


def _finish(match: Any, replay: dict[str, Any]) -> None:
    from web.models import utcnow
    from web.services import placement, ratings

    match.replay_path = _store(replay)
    match.result = replay["result"]
    match.outcome = replay["outcome"]
    match.final_hash = replay["final_hash"]
    match.finished_at = utcnow()
    for seat in match.seats:
        seat.place = replay["result"]["ranking"][seat.seat]
        seat.status = "ok"
    ratings.apply_match(match, [s.bot_id for s in match.seats], replay["result"]["ranking"])
    placement.count_finished([match.id])  # as ``play.finish`` does


def _run_partly(match: Any, replay: dict[str, Any]) -> set[str]:
    """Store the start of ``replay`` as the running match's partial replay.

    Returns seat 1's hidden cards at that point: those in its hand that seat 0 never saw (a card
    picked up from the table is in the hand, but everyone saw it).
    """
    from arena.replay import states

    # Halfway through the first deal: later deals deal the same cards again, so a card seen in
    # an earlier deal would say nothing about the hand.
    cut = sum(1 for step in replay["steps"] if step["deal"] == 0) // 2
    partial = {k: v for k, v in replay.items() if k not in ("result", "outcome", "final_hash")}
    partial["steps"] = replay["steps"][:cut]
    match.replay_path = _store(partial)
    seen: set[str] = set()
    hidden: set[str] = set()
    for index, state in enumerate(states(partial)):  # type: ignore[arg-type]
        seen |= set(
            re.findall(r'"([2-9TJQKA][SHDC])"', orjson.dumps(state.observation(0)).decode())
        )
        if index == cut:
            hidden = set(state.private_cards(1))
    return hidden - seen


@pytest.fixture
def world(app: Flask) -> World:
    """alice owns seat 0 of every match (bot ``alice-bot``), mallory seat 1 (``mallory-bot``)."""
    from web.extensions import db
    from web.models import MatchStatus
    from web.services import ladders, users

    admin, owner, other = _users()
    ladder = ladders.get_or_create_ladder(GAME, players=2)
    (bot_a, ver_a), (bot_b, ver_b) = _bot(owner, "alice-bot"), _bot(other, "mallory-bot")
    versions = [ver_a, ver_b]
    finished = _match(ladder, versions, 42, MatchStatus.FINISHED)
    _finish(finished, record(42))
    running = _match(ladder, versions, RUNNING_SEED, MatchStatus.RUNNING)
    hidden = _run_partly(running, record(RUNNING_SEED))
    tokens = {u.username: users.issue_token(u, "tests") for u in (admin, owner, other)}
    db.session.commit()
    assert hidden, "seat 1 should hold cards at the middle of the match"
    return World(
        admin, owner, other, ladder, [bot_a, bot_b], versions, finished, running, hidden, tokens
    )


@dataclass
class LiveServer:
    url: str
    thread: threading.Thread
    server: Any


@pytest.fixture
def live_server(app: Flask) -> Iterator[LiveServer]:
    """The app served by werkzeug on 127.0.0.1 in a thread."""
    with serving(app) as served:
        yield LiveServer(served.url, served.thread, served.server)
