"""What an owner is told about their bots: one place where every event is made.

Three kinds, each emitted from the one spot where it happens:

- ``version_active``: a version became the one that plays (``lifecycle.move`` to active);
- ``version_failed``: a version was refused (``lifecycle.move`` to rejected), with the reason;
- ``bot_suspended``: the bot was paused after failed matches in a row (``play``).

``emit`` adds the event to the current transaction, with one delivery to each of the owner's
webhooks; once the transaction commits, the deliveries are sent (``web.services.webhooks``).
If it rolls back, nothing happened and nothing is sent. The bot page lists the events.
"""

from __future__ import annotations

from typing import Final

from flask import current_app
from sqlalchemy import select

from web.extensions import db
from web.models import Bot, BotEvent, BotVersion, Webhook, WebhookDelivery
from web.services import webhooks
from web.services.queue import after_commit

VERSION_ACTIVE: Final = "version_active"
VERSION_FAILED: Final = "version_failed"
BOT_SUSPENDED: Final = "bot_suspended"
KINDS: Final = (VERSION_ACTIVE, VERSION_FAILED, BOT_SUSPENDED)
SHOWN = 20
"""Events listed on a bot page."""


def emit(bot: Bot, kind: str, message: str, version: BotVersion | None = None) -> BotEvent:
    """Record ``kind`` for ``bot`` and queue its deliveries for after the commit."""
    event = BotEvent(bot=bot, version=version, kind=kind, message=message)
    db.session.add(event)
    hooks = db.session.scalars(select(Webhook).where(Webhook.user_id == bot.owner_id)).all()
    deliveries = [WebhookDelivery(webhook=hook, event=event) for hook in hooks]
    db.session.add_all(deliveries)
    if deliveries:
        db.session.flush()
        ids = [d.id for d in deliveries]
        app = current_app._get_current_object()  # type: ignore[attr-defined]

        def send_after_commit() -> None:
            with app.app_context():
                for delivery_id in ids:
                    webhooks.send(delivery_id)

        after_commit(send_after_commit)
    return event


def recent(bot: Bot, limit: int = SHOWN) -> list[BotEvent]:
    """The bot's latest events, newest first."""
    query = (
        select(BotEvent)
        .where(BotEvent.bot_id == bot.id)
        .order_by(BotEvent.created_at.desc(), BotEvent.id.desc())
        .limit(limit)
    )
    return list(db.session.scalars(query))
