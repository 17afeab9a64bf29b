"""Real matches in the sandbox: each seat's whole stderr kept (cut at 1 MiB, the cut marked),
compressed in storage; a version becoming active and a bot suspended for failed matches are
events its owner is told of, once each, with a delivery to each of their webhooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from arena.connection import STDERR_LOG_BYTES
from tests.web.conftest import Worker, require_bwrap, sample_version, wait_for
from tests.web.site.test_owner_tools import Receiver
from web.extensions import db
from web.models import BotEvent, BotStatus, Match, WebhookDelivery
from web.services import ladders, matches, play, seatlogs, webhooks
from web.storage import get_storage

pytestmark = pytest.mark.services


def _play(ladder: Any, versions: list[Any], seed: int) -> Match:
    match = matches.create_match(ladder.game_config(), versions, seed=seed, ladder_id=ladder.id)
    db.session.commit()
    assert play.play_match(match.id) == "finished"
    db.session.expire_all()
    found = db.session.get(Match, match.id)
    assert found is not None
    return found


def test_a_flooding_seats_log_is_kept_whole_up_to_the_cap_and_compressed(
    pg_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    monkeypatch.setattr(webhooks, "send", lambda *_a, **_k: True)
    good = sample_version("python/challenge-greedy")
    flood = sample_version("broken/stderr-flood", owner_name="tester", house=False)
    ladder = ladders.default_ladder("challenge")
    db.session.commit()
    match = _play(ladder, [flood, good], seed=3)
    seat = next(s for s in match.seats if s.bot_id == flood.bot_id)
    assert seat.log_bytes is not None and STDERR_LOG_BYTES < seat.log_bytes < STDERR_LOG_BYTES + 100
    text = get_storage().read(seatlogs.log_key(match.id, seat.seat)).decode()
    assert text.startswith("stderr-flood stderr-flood")
    assert text.rstrip().endswith("more bytes of stderr not kept]")
    stored = get_storage().get(seatlogs.log_key(match.id, seat.seat))
    assert stored[:2] == b"\x1f\x8b" and len(stored) < seat.log_bytes // 20
    # each activation was told once, to the bot's owner
    kinds = db.session.scalars(select(BotEvent.kind).where(BotEvent.bot_id == flood.bot_id))
    assert list(kinds) == ["version_active"]


def test_a_suspended_bot_is_an_event_delivered_to_its_owners_webhook(
    pg_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    queued: list[int] = []
    monkeypatch.setattr(webhooks, "send", lambda i, countdown=None: queued.append(i))
    good = sample_version("python/challenge-greedy")
    bad = sample_version("broken/crash-mid-match", owner_name="tester", house=False)
    hook = webhooks.subscribe(bad.bot.owner, "https://hooks.example.org/arena")
    ladder = ladders.default_ladder("challenge")
    db.session.commit()
    pg_app.config["PAUSE_AFTER_FAILURES"] = 1
    _play(ladder, [bad, good], seed=1)
    bot = bad.bot
    assert bot.status == BotStatus.PAUSED
    event = db.session.scalars(
        select(BotEvent).where(BotEvent.bot_id == bot.id, BotEvent.kind == "bot_suspended")
    ).one()
    assert "was suspended" in event.message and "1 failed matches in a row" in event.message
    delivery = db.session.scalars(
        select(WebhookDelivery).where(WebhookDelivery.event_id == event.id)
    ).one()
    assert delivery.webhook_id == hook.id and delivery.status == "pending"
    assert queued == [delivery.id]  # sent once the match's transaction committed
    assert not db.session.scalars(
        select(BotEvent).where(BotEvent.bot_id == good.bot_id, BotEvent.kind == "bot_suspended")
    ).all()


def test_a_real_worker_delivers_a_webhook_after_a_failed_try(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    """The Celery task tries, the receiver (on 127.0.0.1) answers 500, the task is sent again
    after the backoff and the second try is delivered, signed with the webhook's secret."""
    from web.models import Bot
    from web.services import events, users

    pg_app.config.update(WEBHOOK_ALLOW_PRIVATE=True, WEBHOOK_BACKOFF=0.5, WEBHOOK_MAX_TRIES=3)
    start_worker(pg_app, queues="default")
    owner = users.get_or_create_user("hooked", house=False)
    bot = Bot(owner=owner, name="hooked-bot")
    db.session.add(bot)
    with Receiver([500, 200]) as receiver:
        hook = webhooks.subscribe(owner, receiver.url)
        db.session.flush()
        events.emit(bot, events.BOT_SUSPENDED, "hooked-bot was suspended: a test")
        db.session.commit()

        def delivered() -> WebhookDelivery | None:
            db.session.expire_all()
            found = db.session.scalars(select(WebhookDelivery)).one()
            db.session.rollback()
            return found if found.status != "pending" else None

        done = wait_for(delivered, 60, "the delivery to settle")
    assert (done.status, done.tries, done.last_code) == ("delivered", 2, 200)
    headers, body = receiver.received[-1]
    stamp = headers["X-Arena-Timestamp"]
    assert headers["X-Arena-Signature"] == webhooks.signature(hook.secret, stamp, body)
    assert b'"kind":"bot_suspended"' in body
