"""The number of matches kept by PostgreSQL triggers (``match_totals``, migration ``scale02``)
is what counting the rows gives, after inserts, a rolled-back insert, deletes and a truncation;
the match list's totals (all matches, and below ``?before=``) come out exact from it."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import delete, func, select, text

from web.extensions import db
from web.models import Match, MatchTotal

pytestmark = pytest.mark.services


def _add(n: int) -> list[int]:
    made = [Match(game_config={"game": "challenge"}, seed=k) for k in range(n)]
    db.session.add_all(made)
    db.session.flush()
    return [m.id for m in made]


def _kept() -> int | None:
    db.session.rollback()
    return db.session.scalar(select(MatchTotal.matches).where(MatchTotal.id == 1))


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
