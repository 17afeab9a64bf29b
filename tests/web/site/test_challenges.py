"""Challenges through the API: what they queue (unrated, on their own queue, sealed when
mirrored), every refusal with its reason, the per-author allowance, and the challenges list.

No worker runs here: ``tests/web/test_challenge_match.py`` plays one for real.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import redis
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from tests.web.site.conftest import World
from tests.web.site.test_api import auth


def _challenge(client: FlaskClient, world: World, who: str, **body: Any) -> Any:
    payload = {
        "ladder": world.ladder.slug,
        "entries": [{"bot": world.bots[0].id}, {"bot": world.bots[1].id}],
        **body,
    }
    return client.post("/api/v1/challenges", json=payload, headers=auth(world, who))


def _ratings() -> list[tuple[Any, ...]]:
    from web.extensions import db
    from web.models import Rating, RatingChange

    rows = db.session.scalars(select(Rating).order_by(Rating.id)).all()
    changes = db.session.scalars(select(RatingChange).order_by(RatingChange.id)).all()
    return [(r.bot_id, r.mu, r.sigma, r.games) for r in rows] + [
        (c.match_id, c.bot_id, c.mu_after, c.sigma_after) for c in changes
    ]


def _queued_ids(app: Flask, queue: str) -> set[int]:
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    raw = client.lrange(app.config["BROKER_PREFIX"] + queue, 0, -1)
    return {json.loads(m)["headers"]["id"].split("-")[1] for m in raw}  # type: ignore[misc]


def test_a_challenge_queues_unrated_mirrored_matches_ahead_of_the_ladder(
    app: Flask, client: FlaskClient, world: World
) -> None:
    from web.extensions import db
    from web.models import Match, MatchKind

    before = _ratings()
    answer = _challenge(client, world, "alice", deals=2)
    assert answer.status_code == 201, answer.get_json()
    made = answer.get_json()["data"]
    assert made["status"] == "queued" and made["user"] == "alice" and made["deals"] == 2
    assert [s["bot"] for s in made["seats"]] == ["alice-bot", "mallory-bot"]
    rows = db.session.scalars(select(Match).where(Match.challenge_id == made["id"])).all()
    assert len(rows) == 4, "two deals, each in both seat rotations"
    assert {m.kind for m in rows} == {MatchKind.CHALLENGE}
    assert not any(m.rated for m in rows) and {m.ladder_id for m in rows} == {None}
    groups = {m.mirror_group for m in rows}
    assert len(groups) == 2 and None not in groups, "each deal is one sealed mirror group"
    for group in groups:
        assert len({m.seed for m in rows if m.mirror_group == group}) == 1
    # Their own queue, read by the workers after placement and before ladder matches.
    assert _queued_ids(app, "challenges") == {str(m.id) for m in rows}
    assert not _queued_ids(app, "matches") & {str(m.id) for m in rows}
    # Queued: the seeds are withheld, as for any unfinished or sealed match.
    assert {m["seed"] for m in made["matches"]} == {None}
    assert _ratings() == before


def test_challenges_are_refused_with_their_reason(client: FlaskClient, world: World) -> None:
    from web.extensions import db
    from web.models import BotVersion, VersionStatus

    mine, theirs = world.bots[0].id, world.bots[1].id
    rejected = BotVersion(
        bot_id=mine, number=2, sha256="0" * 64, status=VersionStatus.REJECTED, games=["svoi-kozyri"]
    )
    db.session.add(rejected)
    db.session.commit()
    cases = [
        ({"entries": [{"bot": mine}]}, "seats 2 bots: name 2 (you named 1)"),
        ({"entries": [{"bot": mine}, {"bot": 999}]}, "there is no bot 999"),
        (
            {"entries": [{"bot": mine}, {"bot": theirs, "version": 1}]},
            "mallory-bot is not yours",
        ),
        ({"entries": [{"bot": mine}, {"bot": mine, "version": 7}]}, "has no version 7"),
        (
            {"entries": [{"bot": mine}, {"bot": mine, "version": 2}]},
            "version 2 is rejected: only a version that passed validation can play",
        ),
        ({"deals": 7}, "a challenge holds 1 to 6 deals"),
    ]
    for body, message in cases:
        answer = _challenge(client, world, "alice", **body)
        assert answer.status_code == 422, body
        assert message in answer.get_json()["error"]["message"], answer.get_json()
    # mallory may challenge alice's bot only with a bot of her own in the match
    answer = _challenge(client, world, "mallory", entries=[{"bot": mine}, {"bot": mine}], deals=1)
    assert answer.status_code == 422
    assert "at least one of your own bots" in answer.get_json()["error"]["message"]
    answer = _challenge(client, world, "alice", ladder="no-such-ladder")
    assert answer.status_code == 404 and "no-such-ladder" in answer.get_json()["error"]["message"]
    # ... and names the ladders there are, so the next try can be right
    assert f"the ladders: {world.ladder.slug}" in answer.get_json()["error"]["message"]
    body = {"ladder": world.ladder.slug, "entries": [{"bot": mine}, {"bot": theirs}]}
    anonymous = client.post("/api/v1/challenges", json=body)
    assert anonymous.status_code == 401
    assert client.get("/api/v1/challenges").get_json()["data"] == [], "nothing was queued"


def test_the_allowance_is_per_author_and_says_when_it_resets(
    app: Flask, client: FlaskClient, world: World
) -> None:
    app.config["CHALLENGE_RATE_LIMIT"] = "2 per hour"
    for _ in range(2):
        assert _challenge(client, world, "alice", deals=1).status_code == 201
    refused = _challenge(client, world, "alice", deals=1)
    assert refused.status_code == 429
    message = refused.get_json()["error"]["message"]
    assert "used up your 2 challenges per hour" in message and "UTC" in message, message
    assert 3000 < int(refused.headers["Retry-After"]) <= 3600
    # A refused challenge queued nothing, and another author still has all of theirs.
    assert client.get("/api/v1/challenges?user=alice").get_json()["meta"]["total"] == 2
    assert _challenge(client, world, "mallory", deals=1).status_code == 201


def test_the_challenges_list_and_one_challenge(client: FlaskClient, world: World) -> None:
    first = _challenge(client, world, "alice", deals=1).get_json()["data"]
    second = _challenge(client, world, "mallory", deals=1).get_json()["data"]
    listed = client.get("/api/v1/challenges").get_json()
    assert [c["id"] for c in listed["data"]] == [second["id"], first["id"]]
    assert listed["meta"]["total"] == 2
    mine = client.get("/api/v1/challenges?user=alice").get_json()["data"]
    assert [c["id"] for c in mine] == [first["id"]]
    seating = client.get(f"/api/v1/challenges?bot={world.bots[1].id}").get_json()["data"]
    assert {c["id"] for c in seating} == {first["id"], second["id"]}
    one = client.get(f"/api/v1/challenges/{first['id']}").get_json()["data"]
    assert one["standings"][0]["matches"] == 0 and len(one["matches"]) == 2
    assert client.get("/api/v1/challenges/99999").status_code == 404
    # A "digit" that is no ASCII digit (str.isdigit takes it, int does not) is ignored.
    for odd in ("/challenges?bot=\u00b2", "/challenges?page=\u00b2", "/challenges?bot=-1"):
        assert client.get(odd).status_code == 200, odd


def test_a_challenge_from_the_bot_page(app: Flask, client: FlaskClient, world: World) -> None:
    from tests.web.site.conftest import csrf_from, login

    app.config["CHALLENGE_RATE_LIMIT"] = "1 per hour"
    mine, theirs = world.bots[0].id, world.bots[1].id
    assert client.get(f"/challenges/new?bot={theirs}").status_code == 302, "log in first"
    login(client, "alice")
    assert f'href="/challenges/new?bot={theirs}"' in client.get(f"/bots/{theirs}").get_data(
        as_text=True
    )
    page = client.get(f"/challenges/new?bot={theirs}").get_data(as_text=True)
    assert f'<option value="{theirs}" selected>' in page, "the challenged bot sits first"
    assert f'<option value="{mine}:1" selected>' in page, "against the author's own newest"
    form = {"csrf_token": csrf_from(page), "ladder": world.ladder.slug, "deals": "1"}
    bad = client.post(f"/challenges/new?bot={theirs}", data={**form, "seat": [str(theirs), "x:1"]})
    assert bad.status_code == 422 and "&#39;x:1&#39; is not a seat" in bad.get_data(as_text=True)
    # Numbers past the database's integers are no seat either (not a failed query).
    for seat in ("99999999999", f"{mine}:99999999999", "0", "\u00b2", f"{mine}:\u00b2"):
        huge = client.post(
            f"/challenges/new?bot={theirs}", data={**form, "seat": [str(theirs), seat]}
        )
        assert huge.status_code == 422, (seat, huge.status_code)
        assert f"&#39;{seat}&#39; is not a seat" in huge.get_data(as_text=True)
    assert client.get("/challenges/new?bot=\u00b2").status_code == 404
    made = client.post(
        f"/challenges/new?bot={theirs}", data={**form, "seat": [str(theirs), f"{mine}:1"]}
    )
    assert made.status_code == 302, made.get_data(as_text=True)[-2000:]
    detail = client.get(made.headers["Location"]).get_data(as_text=True)
    assert 'id="challenge-results"' in detail and "mallory-bot" in detail
    listing = client.get("/challenges").get_data(as_text=True)
    assert "alice" in listing and "mallory-bot" in listing
    match_id = client.get("/api/v1/challenges").get_json()["data"][0]["matches"][0]["id"]
    assert "unrated" in client.get(f"/matches/{match_id}").get_data(as_text=True)
    again = client.post(
        f"/challenges/new?bot={theirs}", data={**form, "seat": [str(theirs), f"{mine}:1"]}
    )
    assert again.status_code == 429
    assert "used up your 1 challenge per hour" in again.get_data(as_text=True)


def test_arena_challenge_queues_and_says_why_it_cannot(live_server: Any, world: World) -> None:
    from tests.web.conftest import ROOT
    from tests.web.site.test_cli import arena

    def run(*args: str, token: str | None = world.tokens["alice"]) -> Any:
        extra = ["--server", live_server.url] + (["--token", token] if token else [])
        return subprocess.run(
            arena("challenge", *args, *extra), capture_output=True, text=True, timeout=60,
            cwd=ROOT, env={"PATH": "/usr/bin"},
        )  # fmt: skip

    slug, mine, theirs = world.ladder.slug, world.bots[0].id, world.bots[1].id
    queued = run(slug, f"{mine}:1", str(theirs), "--wait", "0")
    assert queued.returncode == 0, queued.stderr
    assert "queued: 2 matches" in queued.stdout and "/challenges/" in queued.stdout
    assert "still playing" in queued.stdout
    refused = run(slug, str(mine))
    assert refused.returncode == 1 and "seats 2 bots: name 2" in refused.stderr
    assert run(slug, "bot-a", str(theirs)).returncode == 2
    odd = run(slug, "\u00b2", str(theirs))
    assert odd.returncode == 2 and "'\u00b2' is not a seat" in odd.stderr, odd.stderr
    bare = run(slug, str(mine), str(theirs), token=None)
    assert bare.returncode == 2 and "token" in bare.stderr


def test_a_mirrored_challenge_stays_sealed_until_every_rotation_is_played(
    client: FlaskClient, world: World
) -> None:
    import orjson

    from tests.web.site.conftest import record
    from web.extensions import db
    from web.models import Match

    made = _challenge(client, world, "alice", deals=1).get_json()["data"]
    first, second = db.session.scalars(
        select(Match).where(Match.challenge_id == made["id"]).order_by(Match.id)
    ).all()
    first.seed = second.seed = 4242  # a deal the test can record a replay of
    _finish_unrated(first, record(4242))
    db.session.commit()
    for reader in ({}, auth(world, "mallory")):
        data = client.get(f"/api/v1/matches/{first.id}", headers=reader).get_json()["data"]
        assert data["seed"] is None and "hands open when the" in data["sealed"]
        doc = orjson.loads(client.get(f"/api/v1/matches/{first.id}/replay", headers=reader).data)
        assert not {"seed", "result", "outcome", "final_hash"} & doc.keys()
        listed = client.get(f"/api/v1/challenges/{made['id']}", headers=reader).get_json()
        assert {m["seed"] for m in listed["data"]["matches"]} == {None}
    _finish_unrated(second, record(4242))
    db.session.commit()
    data = client.get(f"/api/v1/matches/{first.id}").get_json()["data"]
    assert data["seed"] == "4242" and data["sealed"] is None
    done = client.get(f"/api/v1/challenges/{made['id']}").get_json()["data"]
    assert done["status"] == "finished"
    assert [row["matches"] for row in done["standings"]] == [2, 2]
    assert sum(row["wins"] for row in done["standings"]) == 2, "one winner per match"


def _finish_unrated(match: Any, replay: Any) -> None:
    """Finish ``match`` with ``replay``, as a worker does for a (never rated) challenge."""
    from tests.web.site.conftest import _store
    from web.models import MatchStatus, utcnow

    match.status = MatchStatus.FINISHED
    match.replay_path = _store(replay)
    match.result, match.outcome = replay["result"], replay["outcome"]
    match.final_hash, match.finished_at = replay["final_hash"], utcnow()
    for seat in match.seats:
        seat.place, seat.status = replay["result"]["ranking"][seat.seat], "ok"


def test_a_failed_challenge_pauses_no_bot(app: Flask, world: World) -> None:
    from types import SimpleNamespace

    from web.extensions import db
    from web.models import Match, MatchKind, MatchSeat
    from web.services import play

    app.config["PAUSE_AFTER_FAILURES"] = 1
    crashed = SimpleNamespace(
        statuses=["crash", "ok"], ranking=[2, 1], scores=[0.0, 1.0], strikes=[0, 0],
        cpu_seconds=[0.1, 0.1], forfeited=[True, False], replay={"steps": []}, extra={},
    )  # fmt: skip
    challenge = Match(kind=MatchKind.CHALLENGE, game_config={}, seed=1, rated=False)
    challenge.seats = [
        MatchSeat(seat=s.seat, bot_id=s.bot_id, bot_version_id=s.bot_version_id)
        for s in world.running.seats
    ]
    db.session.add(challenge)
    db.session.flush()
    play._record_seats(challenge, crashed)  # type: ignore[arg-type]
    assert world.bots[0].status == "active" and world.bots[0].consecutive_failures == 0
    play._record_seats(world.running, crashed)  # type: ignore[arg-type]
    assert world.bots[0].status == "paused", "the same failure in a ladder match counts"
    db.session.rollback()


def test_a_bad_entry_is_named_by_its_place_in_the_list(client: FlaskClient, world: World) -> None:
    body = {"ladder": world.ladder.slug, "entries": [{"bot": 1}, {"bot": 1, "colour": "red"}]}
    answer = client.post("/api/v1/challenges", json=body, headers=auth(world, "alice"))
    assert answer.status_code == 422
    details = answer.get_json()["error"]["details"]
    assert details == {"json": {"entries": {"1": {"colour": ["Unknown field."]}}}}


def test_challenges_sent_at_once_stay_within_the_allowance(
    app: Flask, live_server: Any, world: World
) -> None:
    import urllib.error
    import urllib.request
    from concurrent.futures import ThreadPoolExecutor

    app.config["CHALLENGE_RATE_LIMIT"] = "3 per hour"
    body = json.dumps(
        {
            "ladder": world.ladder.slug,
            "entries": [{"bot": world.bots[0].id}, {"bot": world.bots[1].id}],
        }
    ).encode()

    def send(_: int) -> int:
        request = urllib.request.Request(
            f"{live_server.url}/api/v1/challenges",
            data=body,
            headers={**auth(world, "alice"), "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    with ThreadPoolExecutor(8) as pool:
        codes = sorted(pool.map(send, range(8)))
    assert codes == [201] * 3 + [429] * 5


def test_workers_read_challenges_after_placement_and_before_ladder_matches() -> None:
    from web.celery_app import ALL_QUEUES, MATCH_WORKER_QUEUES

    for queues in (ALL_QUEUES, MATCH_WORKER_QUEUES):
        order = queues.split(",")
        assert order.index("validate") < order.index("urgent") < order.index("challenges")
        assert order.index("challenges") < order.index("matches")


def test_a_full_challenge_queue_refuses_every_author_and_queues_nothing(
    app: Flask, client: FlaskClient, world: World
) -> None:
    """Challenges go ahead of ladder play, so the platform keeps only so many waiting: many
    accounts together cannot starve the ladders."""
    app.config["CHALLENGE_QUEUE_MAX"] = 4  # two deals of the mirrored two-seat ladder
    assert _challenge(client, world, "alice", deals=1).status_code == 201
    assert _challenge(client, world, "mallory", deals=1).status_code == 201
    for who in ("alice", "mallory"):
        refused = _challenge(client, world, who, deals=1)
        assert refused.status_code == 429, refused.get_json()
        message = refused.get_json()["error"]["message"]
        assert "challenge queue is full (4 of 4 matches waiting)" in message, message
        assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert _queued_ids(app, "challenges") and len(_queued_ids(app, "challenges")) == 4
    # Once the waiting matches are played (here: cancelled), challenges are taken again.
    from web.extensions import db
    from web.models import Match, MatchKind, MatchStatus

    for match in db.session.scalars(select(Match).where(Match.kind == MatchKind.CHALLENGE)):
        match.status = MatchStatus.CANCELLED
    db.session.commit()
    assert _challenge(client, world, "alice", deals=1).status_code == 201
