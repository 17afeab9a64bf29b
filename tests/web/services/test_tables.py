"""A person at a table, for every game: what they are shown is exactly their seat's view.

A real worker plays a short match of each game with the person at one seat and the house's
sample bots at the others; the test plays the person through the API (with a token), as the
page does. Every turn the API gave (observation, legal actions) and every frame of the
person's live stream are then compared with the same seat's view of the full replay, which
must verify. Other seats' views stay closed to the person: the API, the page and the stream.
Then the limits (tables per user and per server) and a person who never answers.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from arena import replay as replays
from arena.games import make_game
from arena.replay import HISTORY_KEYS
from tests.web.conftest import sample_version, wait_for
from web.extensions import db
from web.models import HumanRating, Match, MatchStatus, Rating, User
from web.services import live, tables, users

pytestmark = [pytest.mark.services, pytest.mark.slow]

SHORT: dict[str, dict[str, Any]] = {
    "svoi-kozyri": {"players": 2, "deals": 1, "params": {"turn_cap": 20}},
    "challenge": {"variant": "beginner", "deals": 2, "params": {"turn_cap": 10}},
    "svoi-kozyri-tricks": {"players": 3, "params": {"target": 1, "max_deals": 1}},
    "kozyr-boys": {"deals": 3},
    "svara": {"players": 3, "deals": 1},
}
"""Each game's shortest table (a few dozen decisions at most), as the tables API asks for it."""

SAMPLE = {
    "svoi-kozyri": "svoi-kozyri-random",
    "challenge": "challenge-random",
    "svoi-kozyri-tricks": "svoi-kozyri-tricks-random",
    "kozyr-boys": "kozyr-boys-random",
    "svara": "svara-random",
}
WAIT_S = 240


def table_body(game: str, seat: int, opponents: list[int]) -> dict[str, Any]:
    """What the tables API is sent to open ``game``'s shortest table."""
    return {"game": game, **SHORT[game], "seat": seat, "opponents": opponents}


def seats_of(game: str) -> int:
    cfg = SHORT[game]
    return int(make_game(game, cfg.get("players"), cfg.get("params"), cfg.get("variant")).players)


def house_bots(game: str) -> list[int]:
    version = sample_version(f"python/{SAMPLE[game]}")
    return [version.bot_id]


@dataclass
class Played:
    """What the person was shown at one table."""

    match_id: int
    seat: int
    turns: list[dict[str, Any]] = field(default_factory=list)


def api(client: FlaskClient, token: str, method: str, path: str, body: Any = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    return client.open(f"/api/v1{path}", method=method, json=body, headers=headers)


def play_person(client: FlaskClient, token: str, match_id: int, rng: random.Random) -> Played:
    """Answer every turn of table ``match_id`` through the API with a random legal action."""
    played: Played | None = None
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        answer = api(client, token, "GET", f"/tables/{match_id}/turn")
        assert answer.status_code == 200, answer.get_data(as_text=True)
        table = answer.get_json()["data"]
        played = played or Played(match_id, table["seat"])
        if table["status"] in ("finished", "failed", "cancelled"):
            return played
        turn = table["turn"]
        if turn is None or (played.turns and played.turns[-1]["request_id"] == turn["request_id"]):
            time.sleep(0.05)
            continue
        played.turns.append(turn)
        index = rng.randrange(len(turn["legal_actions"]))
        body = {"request_id": turn["request_id"], "index": index}
        sent = api(client, token, "POST", f"/tables/{match_id}/action", body)
        assert sent.status_code == 202, sent.get_data(as_text=True)
    pytest.fail(f"table {match_id} did not finish in {WAIT_S} s")


def full_replay(match_id: int) -> dict[str, Any]:
    from web.storage import get_storage

    db.session.expire_all()
    match = db.session.get(Match, match_id)
    assert match is not None and match.replay_path
    data = get_storage().read(match.replay_path)
    return orjson.loads(data)


def seat_frames(app: Flask, match_id: int, seat: int) -> list[dict[str, Any]]:
    """Every frame the person's live stream carried (it stays in Redis for an hour)."""
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    key = live.stream_key(app.config["BROKER_PREFIX"], match_id, seat)
    entries = client.xrange(key)
    client.close()
    return [orjson.loads(f[b"f"]) for _id, f in entries if b"f" in f]


def without_history(view: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in HISTORY_KEYS}


def check_views(app: Flask, played: Played, replay: dict[str, Any]) -> None:
    """Every turn and stream frame equals the seat's view of the full replay at that step."""
    assert replays.verify(replay) == []  # type: ignore[arg-type]
    seat = played.seat
    assert played.turns, "the person was never asked"
    for turn in played.turns:
        step = turn["step"]
        assert turn["observation"] == replays.observation_at(replay, step, seat)  # type: ignore[arg-type]
        assert replay["steps"][step]["seat"] == seat
        state = replays.state_at(replay, step)  # type: ignore[arg-type]
        legal = [state.action_to_json(a) for a in state.legal_actions()]
        assert turn["legal_actions"] == orjson.loads(orjson.dumps(legal))
    frames = seat_frames(app, played.match_id, seat)
    assert len(frames) == len(replay["steps"]) + 1
    for frame in frames:
        index = frame["index"]
        seen = orjson.loads(orjson.dumps(replays.observation_at(replay, index, seat)))  # type: ignore[arg-type]
        public = orjson.loads(orjson.dumps(replays.observation_at(replay, index, None)))  # type: ignore[arg-type]
        assert frame["seat"] == without_history(seen)
        assert frame["public"] == without_history(public)


def person(name: str) -> tuple[User, str]:
    user = users.create_user(name, password="correct horse battery")
    token = users.issue_token(user)
    db.session.commit()
    return user, token


def test_every_game_shows_the_person_exactly_their_seat(pg_app: Flask, start_worker: Any) -> None:
    bots = {game: house_bots(game) for game in SHORT}
    ladder_ratings = db.session.execute(select(Rating.id, Rating.mu, Rating.games)).all()
    start_worker(pg_app)
    client = pg_app.test_client()
    _ada, token = person("ada")
    _bob, other = person("bob")
    rng = random.Random(11)
    for number, game in enumerate(SHORT):
        players = seats_of(game)
        seat = number % players
        body = table_body(game, seat, bots[game] * (players - 1))
        made = api(client, token, "POST", "/tables", body)
        assert made.status_code == 201, made.get_data(as_text=True)
        match_id = made.get_json()["data"]["match"]
        assert api(client, other, "GET", f"/tables/{match_id}/turn").status_code == 404
        played = play_person(client, token, match_id, rng)
        assert played.seat == seat
        replay = full_replay(match_id)
        assert replay["seats"][seat]["kind"] == "human"
        check_views(pg_app, played, replay)
        other_seat = (seat + 1) % players
        for path, code in ((f"live?seat={seat}", 200), (f"live?seat={other_seat}", 403)):
            assert api(client, token, "GET", f"/matches/{match_id}/{path}").status_code == code
        assert db.session.get(Match, match_id).status == MatchStatus.FINISHED  # type: ignore[union-attr]
        rated = db.session.scalars(select(HumanRating).where(HumanRating.game == game)).all()
        assert sorted(r.person for r in rated) == [False, True] and all(r.games for r in rated)
    db.session.expire_all()  # no bot ladder heard of any table:
    assert db.session.execute(select(Rating.id, Rating.mu, Rating.games)).all() == ladder_ratings


def test_a_person_who_never_answers_holds_the_worker_no_longer_than_the_table_bound(
    pg_app: Flask, start_worker: Any
) -> None:
    bots = house_bots("kozyr-boys")
    # Generous clocks, but the whole table may last 2 s: after that every turn is late at once.
    start_worker(pg_app, ARENA_HUMAN_MATCH_MAX="2")
    client = pg_app.test_client()
    _ada, token = person("ada")
    made = api(client, token, "POST", "/tables", table_body("kozyr-boys", 0, bots * 2))
    match_id = made.get_json()["data"]["match"]

    def over() -> bool:
        db.session.expire_all()
        return db.session.get(Match, match_id).status == MatchStatus.FINISHED  # type: ignore[union-attr]

    wait_for(over, 90, "the silent person's table to end")
    match = db.session.get(Match, match_id)
    assert match is not None and match.outcome is not None
    assert match.outcome["forfeited"][0] is True
    assert match.outcome["status"][0] == "timeout" and match.outcome["strikes"][0] == 3
    assert replays.verify(full_replay(match_id)) == []  # type: ignore[arg-type]
    answer = api(client, token, "POST", f"/tables/{match_id}/action", {"request_id": 1, "index": 0})
    assert answer.status_code == 409


def test_a_person_who_leaves_forfeits_at_once_and_the_bots_play_on(
    pg_app: Flask, start_worker: Any
) -> None:
    """Leaving is a bot that stops answering, without the wait: with the clock of a whole
    hour and no table bound to speak of, the table still ends as soon as the bots are done."""
    bots = house_bots("kozyr-boys")
    start_worker(pg_app, ARENA_HUMAN_MOVE_TIMEOUT="3600", ARENA_HUMAN_MATCH_MAX="3600")
    client = pg_app.test_client()
    _bo, token = person("bo")
    made = api(client, token, "POST", "/tables", table_body("kozyr-boys", 0, bots * 2))
    match_id = made.get_json()["data"]["match"]
    _other, stranger = person("cy")
    assert api(client, stranger, "POST", f"/tables/{match_id}/leave").status_code == 404
    assert api(client, token, "POST", f"/tables/{match_id}/leave").status_code == 202

    def over() -> bool:
        db.session.expire_all()
        return db.session.get(Match, match_id).status == MatchStatus.FINISHED  # type: ignore[union-attr]

    wait_for(over, 120, "the table of a person who left to end")
    match = db.session.get(Match, match_id)
    assert match is not None and match.outcome is not None
    assert match.outcome["forfeited"][0] is True and match.outcome["strikes"][0] == 3
    assert replays.verify(full_replay(match_id)) == []  # type: ignore[arg-type]
    again = api(client, token, "POST", f"/tables/{match_id}/leave")
    assert again.status_code == 409 and "nothing to leave" in again.get_json()["error"]["message"]


def test_tables_open_at_once_are_bounded_per_person_and_per_server(pg_app: Flask) -> None:
    bots = house_bots("svara")
    pg_app.config["HUMAN_TABLES"] = 2
    client = pg_app.test_client()
    body = table_body("svara", 0, bots * 2)
    tokens = [person(name)[1] for name in ("ada", "bob", "cyd")]
    assert api(client, tokens[0], "POST", "/tables", body).status_code == 201
    again = api(client, tokens[0], "POST", "/tables", body)
    assert again.status_code == 429 and "open" in again.get_json()["error"]["message"]
    assert api(client, tokens[1], "POST", "/tables", body).status_code == 201
    full = api(client, tokens[2], "POST", "/tables", body)
    assert full.status_code == 429 and "every table" in full.get_json()["error"]["message"]
    wrong = {**body, "opponents": [bots[0] + 1000, bots[0]]}
    pg_app.config["HUMAN_TABLES"] = 9
    refused = api(client, tokens[2], "POST", "/tables", wrong)
    assert refused.status_code == 422 and "cannot be seated" in refused.get_data(as_text=True)
    short = api(client, tokens[2], "POST", "/tables", {**body, "opponents": bots})
    assert short.status_code == 422
    odd = api(client, tokens[2], "POST", "/tables", {**body, "params": {"deals": "many"}})
    assert odd.status_code == 422 and "deals" in odd.get_data(as_text=True)


def test_a_bot_sits_at_tables_only_when_its_owner_allows_it(pg_app: Flask) -> None:
    house = house_bots("svara")[0]
    version = sample_version("python/svara-random", "carol", house=False)
    theirs = version.bot_id
    assert [b.id for b in tables.opponents("svara")] == [house]
    version.bot.humans_may_play = True
    db.session.commit()
    assert sorted(b.id for b in tables.opponents("svara")) == sorted([house, theirs])
