"""The number of matches kept by PostgreSQL triggers (``match_totals``, migration ``scale02``,
and per block of ids, ``match_blocks``, migration ``scale03``) is what counting the rows gives,
after inserts, a rolled-back insert, deletes and a truncation; the match list's totals (all
matches, and below ``?before=``) and its deep pages come out exact from them."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import delete, func, select, text

from web.api import queries
from web.extensions import db
from web.models import MATCH_BLOCK, Match, MatchBlock, MatchTotal

pytestmark = pytest.mark.services


def _add(n: int) -> list[int]:
    made = [Match(game_config={"game": "challenge"}, seed=k) for k in range(n)]
    db.session.add_all(made)
    db.session.flush()
    return [m.id for m in made]


def _kept() -> int | None:
    db.session.rollback()
    return db.session.scalar(select(MatchTotal.matches).where(MatchTotal.id == 1))


def _blocks() -> dict[int, int]:
    kept = db.session.execute(select(MatchBlock.block, MatchBlock.matches)).all()
    return {int(block): int(n) for block, n in kept if n}


def _counted_blocks() -> dict[int, int]:
    block = Match.id // MATCH_BLOCK
    rows = db.session.execute(select(block, func.count()).group_by(block)).all()
    return {int(b): int(n) for b, n in rows}


def _add_ids(ids: list[int]) -> None:
    db.session.add_all(Match(id=i, game_config={"game": "challenge"}, seed=i) for i in ids)
    db.session.flush()


def _counted() -> int:
    return int(db.session.scalar(select(func.count()).select_from(Match)) or 0)


def test_the_kept_number_is_the_count_of_matches(pg_app: Flask) -> None:
    assert _kept() == _counted() == 0, "emptied (truncated) with the other tables"
    ids = _add(5)
    db.session.commit()
    assert _kept() == _counted() == 5
    _add(3)
    db.session.rollback()
    assert _kept() == _counted() == 5, "a rolled-back insert counts nothing"
    db.session.execute(delete(Match).where(Match.id.in_(ids[:2])))
    db.session.commit()
    assert _kept() == _counted() == 3
    db.session.execute(text("TRUNCATE matches CASCADE"))
    db.session.commit()
    assert _kept() == _counted() == 0


def test_the_match_list_totals_are_exact(pg_app: Flask) -> None:
    ids = _add(6)
    db.session.execute(delete(Match).where(Match.id == ids[1]))  # a gap in the ids
    db.session.commit()
    client = pg_app.test_client()
    assert client.get("/api/v1/matches").get_json()["meta"]["total"] == 5
    for before in ids:  # the upper half from the kept number, the lower half counted
        below = sum(1 for i in ids if i < before and i != ids[1])
        meta = client.get(f"/api/v1/matches?before={before}").get_json()["meta"]
        assert meta["total"] == below, before
    db.session.execute(text("DELETE FROM match_totals"))  # no number kept: counted instead
    db.session.commit()
    assert client.get("/api/v1/matches").get_json()["meta"]["total"] == 5


def test_the_blocks_and_deep_pages_are_exact(
    pg_app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    spread = [1, 2, 3, MATCH_BLOCK - 1, MATCH_BLOCK, MATCH_BLOCK + 7, 3 * MATCH_BLOCK + 2]
    _add_ids(spread)
    _add_ids([3 * MATCH_BLOCK + 5, 3 * MATCH_BLOCK + 6])  # a second statement, same block
    db.session.commit()
    assert _blocks() == _counted_blocks() == {0: 4, 1: 2, 3: 3}
    _add_ids([2 * MATCH_BLOCK])
    db.session.rollback()
    assert _blocks() == _counted_blocks(), "a rolled-back insert counts nothing"
    db.session.execute(delete(Match).where(Match.id.in_([2, MATCH_BLOCK + 7])))
    db.session.commit()
    assert _blocks() == _counted_blocks() == {0: 3, 1: 1, 3: 3}
    ids = sorted(db.session.scalars(select(Match.id)), reverse=True)
    monkeypatch.setattr(queries, "DEEP_PAGE", 0)  # every page from the blocks
    for per_page in (1, 2, 3):
        for page in range(1, len(ids) // per_page + 3):
            found = queries.matches(queries.MatchFilter(), page, per_page)
            start = (page - 1) * per_page
            assert [m.id for m in found.items] == ids[start : start + per_page], (per_page, page)
            assert found.total == len(ids)
    for before in [*ids, MATCH_BLOCK * 5, 1]:
        below = queries.matches(queries.MatchFilter(before=before), 1, 1).total
        assert below == sum(1 for i in ids if i < before), before
    db.session.execute(text("TRUNCATE matches CASCADE"))
    db.session.commit()
    assert _blocks() == {}
