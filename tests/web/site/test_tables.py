"""The Play pages: the form, the owner's opt-in, and who may see and answer a table."""

from __future__ import annotations

import orjson
from flask import Flask
from flask.testing import FlaskClient

from tests.web.site.conftest import GAME, World, csrf_from, login
from web.extensions import db
from web.models import Match, MatchKind
from web.services import tables

CHOICE = f"game={GAME}&players=2&deals=1"


def open_table(client: FlaskClient, world: World, opponent: int) -> tuple[int, str]:
    page = client.get(f"/play?{CHOICE}").get_data(as_text=True)
    assert "Let people play" not in page  # the opt-in is on the bot's page only
    form = {"game": GAME, "players": "2", "deals": "1", "seat": "1", "opponent": str(opponent)}
    answer = client.post("/play", data={**form, "csrf_token": csrf_from(page)})
    assert answer.status_code == 302, answer.get_data(as_text=True)[-900:]
    match_id = int(answer.headers["Location"].rsplit("/", 1)[1])
    return match_id, client.get(f"/play/{match_id}").get_data(as_text=True)


def test_a_bot_is_offered_only_once_its_owner_lets_people_play_it(
    client: FlaskClient, world: World
) -> None:
    mallory_bot = world.bots[1]
    login(client, "mallory")
    page = client.get(f"/play?{CHOICE}").get_data(as_text=True)
    assert "mallory-bot" not in page
    bot_page = client.get(f"/bots/{mallory_bot.id}").get_data(as_text=True)
    assert 'id="humans-form"' in bot_page
    sent = client.post(
        f"/bots/{mallory_bot.id}/humans", data={"allow": "1", "csrf_token": csrf_from(bot_page)}
    )
    assert sent.status_code == 302
    db.session.expire_all()
    assert mallory_bot.humans_may_play
    assert "mallory-bot" in client.get(f"/play?{CHOICE}").get_data(as_text=True)


def test_only_the_owner_chooses_and_only_with_the_form(client: FlaskClient, world: World) -> None:
    mallory_bot = world.bots[1]
    login(client, "alice")
    page = client.get(f"/bots/{mallory_bot.id}").get_data(as_text=True)
    assert 'id="humans-form"' not in page
    token = csrf_from(page)
    refused = client.post(
        f"/bots/{mallory_bot.id}/humans", data={"allow": "1", "csrf_token": token}
    )
    assert refused.status_code == 403
    db.session.expire_all()
    assert not mallory_bot.humans_may_play


def test_a_table_is_its_person_s_alone(app: Flask, client: FlaskClient, world: World) -> None:
    tables.allow_people(world.bots[1], True)
    login(client, "alice")
    match_id, page = open_table(client, world, world.bots[1].id)
    match = db.session.get(Match, match_id)
    assert match is not None and match.kind == MatchKind.HUMAN and not match.rated
    assert match.seats[1].bot.name == "@alice" and match.max_attempts == 1
    assert 'data-viewer-seat="1"' in page and "observation" not in page
    turn = client.get(f"/api/v1/tables/{match_id}/turn").get_json()["data"]
    assert turn["seat"] == 1 and turn["status"] == "queued" and turn["turn"] is None
    csrf = csrf_from(page)
    body = orjson.dumps({"request_id": 1, "index": 0})
    headers = {"Content-Type": "application/json"}
    assert client.post(f"/play/{match_id}/action", data=body, headers=headers).status_code == 400
    headers["X-CSRFToken"] = csrf
    late = client.post(f"/play/{match_id}/action", data=body, headers=headers)
    assert late.status_code == 409  # no turn is being asked
    # The API answers with a token only: a page's session cannot write through it.
    assert (
        client.post(
            f"/api/v1/tables/{match_id}/action", json={"request_id": 1, "index": 0}
        ).status_code
        == 401
    )
    other = app.test_client()
    login(other, "mallory")
    assert other.get(f"/play/{match_id}").status_code == 404
    assert other.get(f"/api/v1/tables/{match_id}/turn").status_code == 404
    assert other.get(f"/api/v1/matches/{match_id}/live?seat=1").status_code == 403
    anonymous = app.test_client()
    assert anonymous.get(f"/play/{match_id}").status_code == 302
    assert anonymous.get(f"/api/v1/tables/{match_id}/turn").status_code == 404
    form = {"game": GAME, "players": "2", "seat": "0", "opponent": str(world.bots[1].id)}
    again = client.post("/play", data={**form, "csrf_token": csrf})
    assert again.status_code == 429 and "open" in again.get_data(as_text=True)


def test_tables_rate_a_human_ladder_of_their_own(
    app: Flask, client: FlaskClient, world: World
) -> None:
    from sqlalchemy import func, select

    from web.models import HumanRating, MatchStatus, Rating
    from web.services import human_ladder, users
    from web.services.matches import create_match

    app.config["HUMAN_LADDER_MIN_GAMES"] = 4
    bot_ratings = db.session.scalar(select(func.count(Rating.id)))
    bot_version = world.versions[1]
    people = [users.create_user(f"person{k}") for k in range(5)]
    db.session.flush()
    # The bot loses three tables to the first person and wins one against each other person.
    for person in [people[0]] * 3 + people[1:]:
        seats = [tables.person_version(person), bot_version]
        config = tables.table_config(GAME, players=2)
        match = create_match(config, seats, kind=MatchKind.HUMAN, rated=False)
        match.status = MatchStatus.FINISHED
        human_ladder.rate_table(match, [1, 2] if person is people[0] else [2, 1])
    db.session.commit()
    assert db.session.scalar(select(func.count(Rating.id))) == bot_ratings
    mine = db.session.scalar(
        select(HumanRating).where(HumanRating.bot_version_id == bot_version.id)
    )
    assert mine is not None and mine.games == 7 and not mine.person
    [standing] = human_ladder.standings(bot_version.id)
    assert standing.people == 5 and standing.beats == 80
    page = client.get(f"/bots/{world.bots[1].id}").get_data(as_text=True)
    assert "beats 80 % of human players" in page
    ladder = client.get(f"/play/ladders/{GAME}").get_data(as_text=True)
    assert "@person0" in ladder and "mallory-bot" in ladder
    assert ladder.index("@person0") < ladder.index("mallory-bot") < ladder.index("@person1")
    assert client.get("/play/ladders/no-such-game").status_code == 404


def test_the_page_leaves_a_table_with_its_form_only(
    app: Flask, client: FlaskClient, world: World
) -> None:
    import redis

    tables.allow_people(world.bots[1], True)
    login(client, "alice")
    match_id, page = open_table(client, world, world.bots[1].id)
    assert "Leave the table" in page
    url = f"/play/{match_id}/leave"
    assert client.post(url).status_code == 400, "no CSRF token, no leaving"
    other = app.test_client()
    login(other, "mallory")
    assert other.post(url, data={"csrf_token": csrf_from(page)}).status_code in (400, 404)
    broker = redis.Redis.from_url(app.config["REDIS_URL"])
    key = tables.left_key(app.config["BROKER_PREFIX"], match_id)
    assert not broker.exists(key)
    left = client.post(url, data={"csrf_token": csrf_from(page)}, follow_redirects=True)
    assert left.status_code == 200 and "You left the table" in left.get_data(as_text=True)
    assert broker.exists(key), "the worker is told: the seat answers nothing more"
