"""A message the broker refused is sent again as soon as the broker is back, by the process
that could not send it: no waiting for the reaper."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy.engine import make_url

from tests.web.conftest import base_config, wait_for
from tests.web.tcp_proxy import TcpProxy
from web.extensions import db
from web.models import Bot, BotVersion, User
from web.services import matches, queue

pytestmark = pytest.mark.services


@pytest.fixture
def cut_app(pg_app: Flask, shared_tmp: Path) -> Iterator[tuple[Flask, TcpProxy]]:
    """An app whose broker is reached through a proxy the test can cut."""
    from web import create_app

    redis = make_url(pg_app.config["REDIS_URL"])
    with TcpProxy(redis.host or "127.0.0.1", redis.port or 6379) as proxy:
        through = redis.set(port=proxy.port).render_as_string(hide_password=False)
        config = base_config(
            shared_tmp,
            DATABASE_URL=pg_app.config["DATABASE_URL"],
            REDIS_URL=through,
            BROKER_PREFIX=pg_app.config["BROKER_PREFIX"],
        )
        app = create_app(config)
        with app.app_context():
            yield app, proxy
            db.session.remove()
            db.engine.dispose()


def _a_version() -> BotVersion:
    owner = User(username="sender")
    db.session.add(owner)
    db.session.flush()
    bot = Bot(owner_id=owner.id, name="b")
    db.session.add(bot)
    db.session.flush()
    version = BotVersion(bot_id=bot.id, number=1, sha256="0" * 64)
    db.session.add(version)
    db.session.flush()
    return version


def test_a_match_queued_while_the_broker_is_down_is_sent_when_it_is_back(
    cut_app: tuple[Flask, TcpProxy],
) -> None:
    _app, proxy = cut_app
    version = _a_version()
    proxy.cut()
    match = matches.create_match({"game": "challenge"}, [version, version], seed=1)
    db.session.commit()  # the send after commit fails: the broker is away
    assert (queue.MATCH_TASK, match.id) in queue.OUTBOX.waiting()
    time.sleep(3 * queue.OUTBOX_RETRY)  # tried again meanwhile, still refused
    assert (queue.MATCH_TASK, match.id) in queue.OUTBOX.waiting()
    proxy.restore()
    found = wait_for(lambda: match.id in (queue.match_ids_in_broker() or set()), 120, "the send")
    assert found
    assert (queue.MATCH_TASK, match.id) not in queue.OUTBOX.waiting()


def test_a_later_send_of_the_same_match_replaces_the_waiting_one(
    cut_app: tuple[Flask, TcpProxy],
) -> None:
    _app, proxy = cut_app
    proxy.cut()
    assert not queue.send_match(424242)
    assert queue.OUTBOX.waiting().count((queue.MATCH_TASK, 424242)) == 1
    assert not queue.send_match(424242, countdown=5)
    assert queue.OUTBOX.waiting().count((queue.MATCH_TASK, 424242)) == 1
    proxy.restore()
    assert queue.send_match(424242)  # sent now: nothing is left to send again
    assert (queue.MATCH_TASK, 424242) not in queue.OUTBOX.waiting()
