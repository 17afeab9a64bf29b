"""Reading writes nothing: a GET of a page or the API issues no INSERT, UPDATE or DELETE, also
for a tournament whose last match has just finished (the worker concludes it, not the reader)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event

from tests.web.site.conftest import World
from tests.web.site.test_security import every_get_url

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|MERGE|TRUNCATE)\b", re.IGNORECASE)


@contextmanager
def writes() -> Iterator[list[str]]:
    """The writing statements sent to the database while the block runs."""
    from web.extensions import db

    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if WRITE.match(statement):
            seen.append(statement)

    event.listen(db.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine, "before_cursor_execute", record)


def _played_out_tournament(world: World) -> int:
    """A tournament whose every match has finished, not yet concluded (as when its last match
    has just finished and the worker has not got to it)."""
    from web.extensions import db
    from web.models import MatchStatus, TournamentStatus, utcnow
    from web.services.tournaments import create_tournament

    made = create_tournament(
        "played out", world.ladder.game_config(), [v.id for v in world.versions], tables=1
    )
    for match in _matches(made.id):
        match.status, match.result = MatchStatus.FINISHED, world.finished.result
        match.finished_at = utcnow()
    db.session.commit()
    assert made.status == TournamentStatus.RUNNING
    return made.id


def _matches(tournament_id: int) -> list[Any]:
    from sqlalchemy import select

    from web.extensions import db
    from web.models import Match

    return list(db.session.scalars(select(Match).where(Match.tournament_id == tournament_id)))


def _status(tournament_id: int) -> str:
    from web.extensions import db
    from web.models import Tournament

    db.session.expire_all()
    found = db.session.get(Tournament, tournament_id)
    assert found is not None
    return str(found.status)


def test_reading_a_played_out_tournament_writes_nothing(client: FlaskClient, world: World) -> None:
    from web.services.tournaments import conclude

    tournament_id = _played_out_tournament(world)
    urls = [f"/api/v1/tournaments/{tournament_id}", f"/tournaments/{tournament_id}"]
    with writes() as seen:
        answers = [client.get(url) for url in [*urls, "/api/v1/tournaments", "/tournaments"]]
    assert [a.status_code for a in answers] == [200] * 4
    assert seen == []
    assert _status(tournament_id) == "running"
    table = answers[0].get_json()["data"]["standings"]
    assert sum(row["matches"] for row in table) == 4, "the standings are counted all the same"

    assert conclude(tournament_id) is True  # what the worker does after the last match
    assert conclude(tournament_id) is False
    assert _status(tournament_id) == "finished"
    stored = client.get(urls[0]).get_json()["data"]
    assert stored["status"] == "finished" and stored["standings"] == table


def test_no_get_route_writes_for_an_anonymous_visitor(app: Flask, world: World) -> None:
    """Every GET route of the site and the API (from the URL map), with every id."""
    played_out = _played_out_tournament(world)
    tournaments = [f"/tournaments/{played_out}", f"/api/v1/tournaments/{played_out}"]
    urls = every_get_url(app, world) + tournaments
    client = app.test_client()
    with writes() as seen:
        for url in urls:
            answer = client.get(url)
            answer.close()  # files (the favicon, archives) are sent from open handles
            assert answer.status_code < 500, url
    assert seen == []


SESSION_SEEN = re.compile(r"^\s*UPDATE user_sessions SET last_seen_at\b", re.IGNORECASE)


@pytest.mark.parametrize("who", ["alice", "root-admin"])
def test_no_get_route_writes_for_a_signed_in_owner_or_admin(
    app: Flask, world: World, who: str
) -> None:
    """Signed in, every GET route (owners' and admins' pages answer rather than redirect) writes
    nothing but the session's last-seen time, and through an API token nothing at all."""
    from tests.web.site.conftest import login

    urls = [*every_get_url(app, world), f"/tournaments/{_played_out_tournament(world)}"]
    client = app.test_client()
    login(client, who)
    token = app.test_client()
    bearer = {"Authorization": f"Bearer {world.tokens[who]}"}
    with writes() as seen:
        for url in urls:
            # One answer at a time, each closed before the next request: a streamed answer (a
            # zip of replays) holds its request's context until it is closed.
            for reader, headers in ((client, {}), (token, bearer)):
                answer = reader.get(url, headers=headers)
                answer.close()
                assert answer.status_code < 500, url
    assert [s for s in seen if not SESSION_SEEN.match(s)] == []
    assert len(seen) <= 1, "the session's last-seen time is written once a minute at most"


def test_the_reaper_concludes_a_tournament_whose_last_match_failed(world: World) -> None:
    from web.extensions import db
    from web.models import MatchStatus
    from web.services.tournaments import conclude_all

    tournament_id = _played_out_tournament(world)
    last = _matches(tournament_id)[-1]
    last.status, last.result = MatchStatus.RUNNING, None
    db.session.commit()
    assert conclude_all() == []
    assert _status(tournament_id) == "running"
    last.status = MatchStatus.FAILED  # failed for good: no worker finishes it
    db.session.commit()
    assert conclude_all() == [tournament_id]
    assert _status(tournament_id) == "finished"
