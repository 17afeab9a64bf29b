"""The JSON API: one envelope, JSON errors, filters and pages, replays and frames, rating
histories, and uploads with a token."""

from __future__ import annotations

import io
import zipfile

from flask import Flask
from flask.testing import FlaskClient

from arena.replay import check_replay, verify
from tests.web.site.conftest import World, csrf_from

MANIFEST = (
    'name = "{name}"\ngames = ["svoi-kozyri"]\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
)


def auth(world: World, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[who]}"}


def test_listings_share_one_envelope(client: FlaskClient, world: World) -> None:
    for url in ("/api/v1/games", "/api/v1/ladders", "/api/v1/matches", "/api/v1/bots",
                "/api/v1/status", "/api/v1/tournaments"):  # fmt: skip
        body = client.get(url).get_json()
        assert set(body) <= {"data", "meta"} and "data" in body, url


def test_errors_are_json_everywhere_under_api(client: FlaskClient, world: World) -> None:
    cases = {
        "/api/v1/nowhere": 404,
        "/api/v1/matches/99999": 404,
        "/api/v1/matches?page=0": 422,
        "/api/v1/matches?status=bogus": 422,
        "/api/v1/matches?before=0": 422,
        "/api/v1/ladders/none": 404,
        "/api/v1/me": 401,
    }
    for url, status in cases.items():
        answer = client.get(url)
        assert answer.status_code == status, url
        error = answer.get_json()["error"]
        assert error["status"] == status and error["message"], url
    assert client.delete("/api/v1/games").get_json()["error"]["status"] == 405


def test_ladder_standings(app: Flask, client: FlaskClient, world: World) -> None:
    app.config["PLACEMENT_MATCHES"] = 1  # one rated match each: both placed and ranked
    body = client.get(f"/api/v1/ladders/{world.ladder.slug}?per_page=1").get_json()
    assert body["meta"] == {"page": 1, "per_page": 1, "total": 2, "pages": 2}
    top = body["data"]["standings"][0]
    assert top["rank"] == 1 and top["matches"] == 1
    assert abs(top["score"] - (top["mu"] - 3 * top["sigma"])) < 0.01
    assert top["placements"] == {"1": 1}
    assert top["trend"] == [round(top["score"], 3)], "the score after its one rated match"
    second = client.get(f"/api/v1/ladders/{world.ladder.slug}?per_page=1&page=2").get_json()
    assert second["data"]["standings"][0]["rank"] == 2
    assert second["meta"]["total"] == 2, "counted with the page"
    past = client.get(f"/api/v1/ladders/{world.ladder.slug}?per_page=1&page=3").get_json()
    assert past["data"]["standings"] == [] and past["meta"]["total"] == 2, "counted alone"


def test_match_filters(client: FlaskClient, world: World) -> None:
    def ids(query: str) -> list[int]:
        return [m["id"] for m in client.get(f"/api/v1/matches?{query}").get_json()["data"]]

    both = [world.running.id, world.finished.id]
    assert ids("") == both
    assert ids("status=finished") == [world.finished.id]
    assert ids(f"bot={world.bots[0].id}&ladder={world.ladder.slug}") == both
    assert ids("game=svara") == []
    assert ids("bot=999999") == []
    assert ids("per_page=1&page=2") == [world.finished.id]
    assert ids(f"before={world.running.id}") == [world.finished.id], "a keyset page: ids below"
    assert ids(f"before={world.finished.id}") == []
    assert ids(f"status=finished&before={world.running.id + 1}") == [world.finished.id]
    meta = client.get(f"/api/v1/matches?per_page=1&before={world.running.id}").get_json()["meta"]
    assert meta["total"] == 1 and meta["pages"] == 1, "counted below the key"


def test_seed_is_given_once_the_match_is_over(client: FlaskClient, world: World) -> None:
    assert client.get(f"/api/v1/matches/{world.finished.id}").get_json()["data"]["seed"] == "42"
    assert client.get(f"/api/v1/matches/{world.running.id}").get_json()["data"]["seed"] is None


def test_finished_replay_is_whole_verifiable_and_cached(client: FlaskClient, world: World) -> None:
    answer = client.get(f"/api/v1/matches/{world.finished.id}/replay")
    assert "immutable" in answer.headers["Cache-Control"]
    assert answer.headers["Cache-Control"].startswith("public")
    replay = check_replay(answer.get_json())
    assert verify(replay) == []
    mine = client.get(f"/api/v1/matches/{world.finished.id}/replay", headers=auth(world, "alice"))
    assert mine.headers["Cache-Control"].startswith("private")


def test_running_replay_is_public_information_only(client: FlaskClient, world: World) -> None:
    answer = client.get(f"/api/v1/matches/{world.running.id}/replay")
    assert answer.headers["Cache-Control"] == "no-store"
    doc = answer.get_json()
    assert doc["live"] is True and "seed" not in doc and "final_hash" not in doc
    from arena.games import make_game
    from tests.web.site.conftest import RUNNING_SEED, record

    game = make_game(**doc["game"])
    played = record(RUNNING_SEED)["steps"][: len(doc["steps"])]
    # each move as a spectator sees it made, without the seats' debug text
    public = [game.action_seen_by(s["action"], s["seat"], None) for s in played]
    assert doc["steps"] and [s["action"] for s in doc["steps"]] == public
    assert all(s["debug"] is None for s in doc["steps"])
    mine = client.get(
        f"/api/v1/matches/{world.running.id}/replay", headers=auth(world, "alice")
    ).get_json()
    assert all((s["debug"] is not None) == (s["seat"] == 0) for s in mine["steps"])


def test_frames(client: FlaskClient, world: World) -> None:
    url = f"/api/v1/matches/{world.finished.id}/frames"
    full = client.get(url).get_json()["data"]
    assert full["live"] is False
    frames = full["frames"]
    assert frames[0]["event"] is None and "spectator" in frames[0] and len(frames[0]["seats"]) == 2
    seat1 = client.get(url + "?seat=1").get_json()["data"]["frames"]
    assert len(seat1) == len(frames)
    assert all("spectator" not in f and f["seat"]["seat"] == 1 for f in seat1)
    assert all("action" in f["event"] for f in seat1[1:] if f["event"]["seat"] == 1)
    # the other seat's moves are public in this game: seat 1 saw each of them made
    others = [f["event"] for f in seat1[1:] if f["event"]["seat"] == 0]
    assert others and all(
        e["action"] == s["event"]["action"]
        for e, s in zip(others, [f for f in frames[1:] if f["event"]["seat"] == 0], strict=True)
    )
    assert client.get(url + "?seat=5").status_code == 404
    live = client.get(f"/api/v1/matches/{world.running.id}/frames").get_json()["data"]
    assert live["live"] is True and all(
        set(f) == {"index", "event", "public"} for f in live["frames"]
    )


def test_rating_history(client: FlaskClient, world: World) -> None:
    bot = world.bots[0].id
    body = client.get(f"/api/v1/bots/{bot}/ratings?ladder={world.ladder.slug}").get_json()
    [point] = body["data"]
    when, shown, mu, sigma, version = point
    assert when.endswith("Z") and abs(shown - (mu - 3 * sigma)) < 0.01
    assert version == 1, "the number of the version that played the match"
    assert client.get(f"/api/v1/bots/{bot}/ratings").get_json()["data"] == body["data"]
    assert client.get(f"/api/v1/bots/{bot}/ratings?ladder=nope").status_code == 404


def test_downsampling_keeps_the_ends() -> None:
    from web.api.queries import downsample

    points = list(range(1000))
    thin = downsample(points, 50)
    assert len(thin) == 50 and thin[0] == 0 and thin[-1] == 999 and thin == sorted(thin)
    assert downsample(points[:10], 50) == points[:10]


def bot_zip(name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{name}/bot.toml", MANIFEST.format(name=name))
        archive.writestr(f"{name}/bot.py", "print('hi')\n")
    return buffer.getvalue()


def test_upload_with_a_token(client: FlaskClient, world: World) -> None:
    data = {"file": (io.BytesIO(bot_zip("uploaded-bot")), "bot.zip")}
    answer = client.post("/api/v1/uploads", data=data, headers=auth(world, "mallory"))
    assert answer.status_code == 201, answer.get_json()
    version = answer.get_json()["data"]
    assert version["number"] == 1 and version["status"] == "uploaded"
    bots = client.get("/api/v1/bots?user=mallory").get_json()["data"]
    assert "uploaded-bot" in {b["name"] for b in bots}


def test_upload_with_a_bad_manifest_says_why(client: FlaskClient, world: World) -> None:
    data = {"file": (io.BytesIO(b"print(1)\n"), "bot.py"), "manifest": 'name = "Bad Name"\n'}
    answer = client.post("/api/v1/uploads", data=data, headers=auth(world, "alice"))
    assert answer.status_code == 422
    assert "missing required field" in answer.get_json()["error"]["message"]


def test_upload_page_shows_manifest_errors_inline(client: FlaskClient, world: World) -> None:
    from tests.web.site.conftest import csrf_from, login

    login(client, "alice")
    token = csrf_from(client.get("/upload").get_data(as_text=True))
    data = {
        "file": (io.BytesIO(b"print(1)\n"), "bot.py"),
        "manifest": "games = 3",
        "csrf_token": token,
    }
    answer = client.post("/upload", data=data)
    assert answer.status_code == 422
    assert "The upload was refused" in answer.get_data(as_text=True)
    good = {"file": (io.BytesIO(bot_zip("web-bot")), "web-bot.zip"), "csrf_token": token}
    made = client.post("/upload", data=good)
    assert made.status_code == 302 and "/bots/" in made.location


def test_openapi_document_and_docs_page(client: FlaskClient) -> None:
    spec = client.get("/api/v1/openapi.json").get_json()
    assert spec["openapi"].startswith("3.")
    for path in ("/api/v1/matches/{match_id}/replay", "/api/v1/matches/{match_id}/frames",
                 "/api/v1/bots/{bot_id}/ratings", "/api/v1/uploads"):  # fmt: skip
        assert path in spec["paths"], path
    page = client.get("/docs/api").get_data(as_text=True)
    assert "/api/v1/uploads" in page and "openapi.json" in page


def test_trend_queries_agree(world: World) -> None:
    """The lateral query (PostgreSQL) and the window query (SQLite) give the same points."""
    from tests.web.site.conftest import _finish, _match, record
    from web.api import queries
    from web.extensions import db
    from web.models import MatchStatus

    for _ in range(4):
        match = _match(world.ladder, world.versions, 42, MatchStatus.FINISHED)
        _finish(match, record(42))
    db.session.commit()
    bots = [b.id for b in world.bots]
    lateral = queries._latest_changes_lateral(world.ladder.id, bots, 3)
    window = queries._latest_changes_window(world.ladder.id, bots, 3)
    assert sorted(map(tuple, lateral)) == sorted(map(tuple, window))
    assert len(lateral) == 6, "the last three of each bot's five changes"
    trends = queries.trend_points(world.ladder.id, bots, 3)
    assert all(len(points) == 3 for points in trends.values())


def test_nul_characters_are_refused_not_a_database_error(client: FlaskClient, world: World) -> None:
    for url in ("/api/v1/matches?game=a%00b", "/api/v1/bots?user=%00", "/matches?game=%00",
                "/users/a%00b", "/api/v1/ladders/x%00"):  # fmt: skip
        answer = client.get(url)
        assert answer.status_code == 400, url
    assert "error" in client.get("/api/v1/matches?game=%00").get_json()
    token = csrf_from(client.get("/login").get_data(as_text=True))
    form = {"username": "al\x00ice", "password": "x", "csrf_token": token}
    assert client.post("/login", data=form).status_code == 400


def test_a_nameless_multipart_part_is_no_server_error(client: FlaskClient, world: World) -> None:
    """A form part without a name (a malformed multipart body) is read as a missing field."""
    body = b"--XX\r\nContent-Disposition: form-data\r\n\r\ntrue\r\n--XX--\r\n"
    for url in ("/api/v1/uploads", "/login"):
        answer = client.post(url, data=body, content_type="multipart/form-data; boundary=XX")
        assert 400 <= answer.status_code < 500, (url, answer.status_code)
    nul = b"--XX\r\nContent-Disposition: form-data\r\n\r\na\x00b\r\n--XX--\r\n"
    answer = client.post("/login", data=nul, content_type="multipart/form-data; boundary=XX")
    assert answer.status_code == 400


def test_frames_come_in_bounded_windows(client: FlaskClient, world: World) -> None:
    url = f"/api/v1/matches/{world.finished.id}/frames"
    whole = client.get(url).get_json()["data"]
    total = whole["total"]
    assert total == len(whole["frames"]) > 6, "a short match fits the default window"
    window = client.get(url + "?start=2&stop=5").get_json()["data"]
    assert window["total"] == total and window["live"] is False
    assert window["frames"] == whole["frames"][2:5]
    seat = client.get(url + "?seat=1&start=3&stop=4").get_json()["data"]["frames"]
    assert [f["index"] for f in seat] == [3] and "spectator" not in seat[0]
    tail = client.get(url + f"?start={total - 2}&stop={total + 100}").get_json()["data"]
    assert [f["index"] for f in tail["frames"]] == [total - 2, total - 1]
    assert client.get(url + f"?start={total + 5}").get_json()["data"]["frames"] == []
    for bad in ("start=0&stop=501", "start=5&stop=5", "since=3&start=0", "start=-1", "since=-1"):
        answer = client.get(f"{url}?{bad}")
        assert answer.status_code == 422, bad
        assert answer.get_json()["error"]["message"], bad


def test_frames_since_follow_a_match(client: FlaskClient, world: World) -> None:
    url = f"/api/v1/matches/{world.running.id}/frames"
    first = client.get(url + "?start=0&stop=2").get_json()["data"]
    assert first["live"] is True and [f["index"] for f in first["frames"]] == [0, 1]
    total = first["total"]
    assert total > 3
    news = client.get(url + "?since=1").get_json()["data"]
    assert [f["index"] for f in news["frames"]] == list(range(2, total))
    assert all(set(f) == {"index", "event", "public"} for f in news["frames"])
    # every move of this game is made in the open: a spectator sees it as it is played
    assert all(f["event"]["action"]["type"] for f in news["frames"])
    assert all(f["event"]["debug"] is None for f in news["frames"])
    assert client.get(url + f"?since={total - 1}").get_json()["data"]["frames"] == []
    own = client.get(url + "?seat=0&since=1", headers=auth(world, "alice")).get_json()["data"]
    assert [f["index"] for f in own["frames"]] == list(range(2, total))
    assert all(f["seat"]["seat"] == 0 and "spectator" not in f for f in own["frames"])
    assert client.get(url + "?seat=1&since=1", headers=auth(world, "alice")).status_code == 403
    finished = f"/api/v1/matches/{world.finished.id}/frames"
    whole = client.get(finished).get_json()["data"]["frames"]
    assert client.get(finished + "?since=4").get_json()["data"]["frames"] == whole[5:]


def test_openapi_documents_the_frame_window(client: FlaskClient) -> None:
    spec = client.get("/api/v1/openapi.json").get_json()
    frames = spec["paths"]["/api/v1/matches/{match_id}/frames"]["get"]
    named = {p["name"] for p in frames["parameters"]}
    assert {"seat", "start", "stop", "since"} <= named


def test_the_bot_list_counts_placement_as_each_bot_does(client: FlaskClient, world: World) -> None:
    """The list counts every version's placement matches in one query; the same figures as
    one bot's own answer."""
    listed = client.get("/api/v1/bots?per_page=100").get_json()["data"]
    left = {v["id"]: v["placement_left"] for b in listed for v in b["versions"]}
    alone = {
        v["id"]: v["placement_left"]
        for b in listed
        for v in client.get(f"/api/v1/bots/{b['id']}").get_json()["data"]["versions"]
    }
    assert left == alone
    assert any(left.values()), "an active version with placement matches left"
