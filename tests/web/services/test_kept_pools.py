"""The scheduler's pools kept between passes (``ladders.KeptPools``, PostgreSQL): after every
kind of change a bot's candidacy depends on, the kept pools are exactly what reading every bot
again gives, and a pass reads again only what changed."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import delete, update

from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    BotVersion,
    Ladder,
    Rating,
    User,
    VersionStatus,
    utcnow,
)
from web.services import ladders
from web.services.users import get_or_create_user

pytestmark = pytest.mark.services


def _bot(owner: User, name: str, games: list[str], ladder_ids: list[int]) -> Bot:
    """An active bot with one active version playing ``games``, rated on ``ladder_ids``."""
    bot = Bot(owner=owner, name=name)
    db.session.add(bot)
    db.session.flush()
    db.session.add(
        BotVersion(
            bot_id=bot.id,
            number=1,
            sha256="0" * 64,
            status=VersionStatus.ACTIVE,
            games=games,
            activated_at=utcnow(),
        )
    )
    for ladder_id in ladder_ids:
        db.session.add(Rating(bot_id=bot.id, ladder_id=ladder_id, mu=25.0, sigma=8.0))
    db.session.commit()
    return bot


@pytest.fixture
def field(pg_app: Flask, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Two ladders, six bots of three owners (one a house), and a count of full reads."""
    challenge = ladders.default_ladder("challenge")
    svara = ladders.default_ladder("svara")
    db.session.commit()
    ann, bob = get_or_create_user("ann"), get_or_create_user("bob")
    house = get_or_create_user("house", house=True)
    bots = [
        _bot(ann, "a1", ["challenge"], [challenge.id]),
        _bot(ann, "a2", ["challenge", "svara"], [challenge.id, svara.id]),
        _bot(bob, "b1", ["svara"], [svara.id]),
        _bot(bob, "b2", ["challenge"], [challenge.id, svara.id]),  # rated where it cannot play
        _bot(house, "h1", ["challenge", "svara"], [challenge.id, svara.id]),
        _bot(house, "h2", ["svara"], [svara.id]),
    ]
    reloads: list[int] = []
    real = ladders.KeptPools._reload

    def counted(self: ladders.KeptPools, *args: Any) -> None:
        reloads.append(1)
        real(self, *args)

    monkeypatch.setattr(ladders.KeptPools, "_reload", counted)
    # As on a quiet server: the oldest transaction running is the next one (on the shared test
    # server, others' transactions would hold it back and more bots would be read again, which
    # keeps the pools exact but hides which rows a pass read).
    monkeypatch.setattr(ladders.KeptPools, "watermark", "pg_snapshot_xmax(pg_current_snapshot())")
    ladders.kept_pools.clear()
    return {"ladders": [challenge, svara], "bots": bots, "reloads": reloads, "users": [ann, bob]}


def _agrees(open_ladders: list[Ladder]) -> dict[int, ladders.Pool]:
    """The kept pools, asserted equal to a full read (same candidates, same order)."""
    kept = ladders.kept_pools.read(open_ladders)
    db.session.commit()
    assert kept == ladders.candidates_by_ladder(open_ladders)
    db.session.commit()
    return kept


def _bots(pool: ladders.Pool) -> list[str]:
    return [c.bot for c, _ in pool]


def test_kept_pools_follow_every_change_a_candidate_depends_on(field: dict[str, Any]) -> None:
    open_ladders = field["ladders"]
    challenge, svara = open_ladders
    a1, a2, b1, b2, h1, h2 = field["bots"]
    first = _agrees(open_ladders)
    assert _bots(first[challenge.id]) == [str(a1.id), str(a2.id), str(b2.id), str(h1.id)]
    assert _bots(first[svara.id]) == [str(a2.id), str(b1.id), str(h1.id), str(h2.id)]
    assert field["reloads"] == [1]

    # A rating after a match.
    db.session.execute(
        update(Rating)
        .where(Rating.bot_id == a1.id)
        .values(mu=31.5, sigma=4.0, games=7, last_played_at=utcnow())
    )
    db.session.commit()
    kept = _agrees(open_ladders)
    assert kept[challenge.id][0][0].mu == 31.5 and kept[challenge.id][0][0].games == 7

    # A finished ladder match counted on the version's row (placement).
    db.session.execute(
        update(BotVersion).where(BotVersion.bot_id == h1.id).values(ladder_matches=9)
    )
    db.session.commit()
    kept = _agrees(open_ladders)
    assert {v.played for c, v in kept[svara.id] if c.bot == str(h1.id)} == {9}

    # A newer version becomes active: the bot plays it (and only where it lists the game).
    db.session.add(
        BotVersion(
            bot_id=b2.id,
            number=2,
            sha256="1" * 64,
            status=VersionStatus.ACTIVE,
            games=["challenge", "svara"],
            activated_at=utcnow(),
        )
    )
    db.session.commit()
    kept = _agrees(open_ladders)
    assert str(b2.id) in _bots(kept[svara.id])

    # Its versions retired: off every ladder.
    db.session.execute(
        update(BotVersion).where(BotVersion.bot_id == b2.id).values(status=VersionStatus.RETIRED)
    )
    db.session.commit()
    kept = _agrees(open_ladders)
    assert str(b2.id) not in _bots(kept[challenge.id]) + _bots(kept[svara.id])

    # A bot paused; an owner turned into a house account (each bot its own author).
    db.session.execute(update(Bot).where(Bot.id == b1.id).values(status=BotStatus.RETIRED))
    db.session.execute(update(User).where(User.id == field["users"][0].id).values(is_house=True))
    db.session.commit()
    kept = _agrees(open_ladders)
    assert str(b1.id) not in _bots(kept[svara.id])
    assert {c.author for c, _ in kept[challenge.id] if c.bot == str(a1.id)} == {f"house-{a1.id}"}

    # A new bot.
    bob = field["users"][1]
    newcomer = _bot(bob, "b3", ["svara"], [svara.id])
    kept = _agrees(open_ladders)
    assert _bots(kept[svara.id])[-1] == str(newcomer.id)
    assert field["reloads"] == [1], "every pass since the first read only what changed"

    # A deleted bot (its ratings removed, the bot marked) and a rating removed alone.
    db.session.execute(update(Bot).where(Bot.id == a2.id).values(status=BotStatus.DELETED))
    db.session.execute(delete(Rating).where(Rating.bot_id == a2.id))
    db.session.commit()
    kept = _agrees(open_ladders)
    assert str(a2.id) not in _bots(kept[challenge.id]) + _bots(kept[svara.id])
    assert field["reloads"] == [1]
    db.session.execute(delete(Rating).where(Rating.bot_id == h2.id))
    db.session.commit()
    kept = _agrees(open_ladders)
    assert str(h2.id) not in _bots(kept[svara.id])
    assert field["reloads"] == [1, 1], "a row gone without a trace: everything read again"

    # A different set of ladders is read whole.
    _agrees([challenge])
    assert field["reloads"] == [1, 1, 1]


def test_a_schedule_pass_uses_the_kept_pools(field: dict[str, Any]) -> None:
    import random

    ladders.schedule_all(random.Random(1))
    ladders.schedule_all(random.Random(2))
    assert field["reloads"] == [1], "the second pass read only what changed"
