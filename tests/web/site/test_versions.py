"""Version control and retirement through the API: the owner chooses the version that plays
(and a newer validated version leaves that choice alone), rolls back with the rating history
left exact and marked, compares versions, retires and deletes the bot; nobody else can."""

from __future__ import annotations

import io
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from tests.web.site.conftest import World, _finish, _match, record
from tests.web.site.test_api import auth, bot_zip


def _new_version(bot: Any, number: int) -> Any:
    """A version of ``bot`` that just passed validation, activated as the platform does."""
    from web.extensions import db
    from web.models import BotVersion, VersionStatus
    from web.services import lifecycle

    version = BotVersion(
        bot_id=bot.id,
        number=number,
        sha256=f"{number:064d}",
        status=VersionStatus.VALIDATING,
        games=["svoi-kozyri"],
    )
    db.session.add(version)
    db.session.flush()
    lifecycle.activate(version)
    db.session.commit()
    return version


def _statuses(bot: Any) -> dict[int, str]:
    from web.extensions import db
    from web.models import BotVersion

    rows = db.session.scalars(select(BotVersion).where(BotVersion.bot_id == bot.id)).all()
    return {v.number: str(v.status) for v in rows}


def _history() -> list[tuple[Any, ...]]:
    from web.extensions import db
    from web.models import RatingChange

    rows = db.session.scalars(select(RatingChange).order_by(RatingChange.id)).all()
    return [(c.id, c.match_id, c.bot_id, c.mu_before, c.mu_after, c.sigma_after) for c in rows]


def _play(client: FlaskClient, world: World, who: str, version: int | None) -> Any:
    bot_id = world.bots[0].id
    return client.post(
        f"/api/v1/bots/{bot_id}/play", json={"version": version}, headers=auth(world, who)
    )


def test_a_chosen_version_stays_when_a_newer_one_is_validated(
    client: FlaskClient, world: World
) -> None:
    bot = world.bots[0]
    _new_version(bot, 2)
    assert _statuses(bot) == {1: "retired", 2: "active"}, "the newest validated version plays"
    answer = _play(client, world, "alice", 1)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["data"]["playing"] == 1 and answer.get_json()["data"]["pinned"] == 1
    third = _new_version(bot, 3)
    assert _statuses(bot) == {1: "active", 2: "retired", 3: "retired"}
    assert "its owner chose version 1 to play" in third.validation_log
    # Back to following the newest: version 3 plays, and so would a version 4.
    answer = _play(client, world, "alice", None)
    assert answer.get_json()["data"]["playing"] == 3 and answer.get_json()["data"]["pinned"] is None
    _new_version(bot, 4)
    assert _statuses(bot) == {1: "retired", 2: "retired", 3: "retired", 4: "active"}


def test_a_rollback_leaves_the_rating_history_exact_and_marks_the_change(
    client: FlaskClient, world: World
) -> None:
    from web.extensions import db
    from web.models import Rating

    bot = world.bots[0]
    v2 = _new_version(bot, 2)
    played = _match(world.ladder, [v2, world.versions[1]], 7, "finished")
    _finish(played, record(7))
    db.session.commit()
    before = _history()
    rating = db.session.scalar(select(Rating).where(Rating.bot_id == bot.id))
    mu = rating.mu
    assert _play(client, world, "alice", 1).status_code == 200
    assert _history() == before, "a rollback rewrites no rating change"
    db.session.refresh(rating)
    assert rating.mu == mu, "the rating keeps its mu (its sigma widens, as for a new version)"
    again = _match(world.ladder, [world.versions[0], world.versions[1]], 8, "finished")
    _finish(again, record(8))
    db.session.commit()
    assert _history()[: len(before)] == before
    points = client.get(f"/api/v1/bots/{bot.id}/ratings").get_json()["data"]
    assert [p[4] for p in points] == [1, 2, 1], "each point names the version that played"
    records = client.get(f"/api/v1/bots/{bot.id}/versions").get_json()["data"]
    by_number = {r["number"]: r for r in records}
    assert by_number[1]["ladder_matches"] == 2 and by_number[2]["ladder_matches"] == 1
    assert set(by_number[2]["ratings"]) == {world.ladder.slug}
    pair = client.get(f"/api/v1/bots/{bot.id}/compare?a=1&b=2").get_json()["data"]
    assert pair["a"]["number"] == 1 and pair["b"]["number"] == 2
    for key in ("win_rate", "errors", "think_seconds", "ratings"):
        assert key in pair["a"] and key in pair["b"]
    missing = client.get(f"/api/v1/bots/{bot.id}/compare?a=1&b=9")
    assert missing.status_code == 404 and "no version 9" in missing.get_json()["error"]["message"]


def test_only_the_owner_controls_a_bot(client: FlaskClient, world: World) -> None:
    bot_id = world.bots[0].id
    for path, body in (
        ("play", {"version": 1}),
        ("retire", None),
        ("delete", {"confirm": "alice-bot"}),
    ):
        url = f"/api/v1/bots/{bot_id}/{path}"
        answer = client.post(url, json=body, headers=auth(world, "mallory"))
        assert answer.status_code == 403, path
        assert "only the bot's owner" in answer.get_json()["error"]["message"]
        assert client.post(url, json=body).status_code == 401, path
    assert _statuses(world.bots[0]) == {1: "active"}
    unknown = client.post("/api/v1/bots/99999/retire", headers=auth(world, "alice"))
    assert unknown.status_code == 404
    wrong = _play(client, world, "alice", 5)
    assert wrong.status_code == 422 and "no version 5" in wrong.get_json()["error"]["message"]


def test_retiring_stops_the_bot_and_a_chosen_version_brings_it_back(
    client: FlaskClient, world: World
) -> None:
    bot_id = world.bots[0].id
    answer = client.post(f"/api/v1/bots/{bot_id}/retire", headers=auth(world, "alice"))
    assert answer.status_code == 200 and answer.get_json()["data"]["status"] == "retired"
    assert answer.get_json()["data"]["playing"] is None
    assert world.running.status == "running", "a running match is left to finish"
    standing = client.get(f"/api/v1/ladders/{world.ladder.slug}").get_json()["data"]["standings"]
    assert {s["bot"]: s["status"] for s in standing}["alice-bot"] == "retired"
    page = client.get(f"/bots/{bot_id}").get_data(as_text=True)
    assert "Retired by its owner: no version plays." in page
    assert "a newer version does" not in page, "no version plays, newer or chosen"
    back = _play(client, world, "alice", 1).get_json()["data"]
    assert back["status"] == "active" and back["playing"] == 1
    # A paused bot, too, plays again once its owner chooses a version (as a new upload does).
    from web.extensions import db

    world.bots[0].status, world.bots[0].paused_reason = "paused", "paused after 5 failed matches"
    db.session.commit()
    back = _play(client, world, "alice", 1).get_json()["data"]
    assert back["status"] == "active" and back["paused_reason"] is None


def test_a_deleted_bot_leaves_the_site_but_its_matches_keep_its_name(
    client: FlaskClient, world: World
) -> None:
    bot_id = world.bots[0].id
    url = f"/api/v1/bots/{bot_id}/delete"
    wrong = client.post(url, json={"confirm": "alice"}, headers=auth(world, "alice"))
    assert wrong.status_code == 422 and "'alice-bot'" in wrong.get_json()["error"]["message"]
    assert (
        client.post(url, json={"confirm": "alice-bot"}, headers=auth(world, "alice")).status_code
        == 204
    )
    assert client.get(f"/api/v1/bots/{bot_id}").status_code == 404
    assert client.get(f"/bots/{bot_id}").status_code == 404
    standing = client.get(f"/api/v1/ladders/{world.ladder.slug}").get_json()
    assert [s["bot"] for s in standing["data"]["standings"]] == ["mallory-bot"]
    assert standing["meta"]["total"] == 1
    # A match that finished as the bot was deleted rates it again: it stays off the tables.
    from web.extensions import db
    from web.services import ratings

    ratings.ensure_rating(bot_id, world.ladder.id)
    db.session.commit()
    standing = client.get(f"/api/v1/ladders/{world.ladder.slug}").get_json()
    assert [s["bot"] for s in standing["data"]["standings"]] == ["mallory-bot"]
    assert f'href="/bots/{bot_id}' not in client.get("/").get_data(as_text=True), "no link to it"
    match = client.get(f"/api/v1/matches/{world.finished.id}").get_json()["data"]
    assert [s["bot"] for s in match["seats"]] == ["alice-bot", "mallory-bot"]
    assert client.get(match["replay_url"]).status_code == 200
    assert "alice-bot" in client.get(f"/matches/{world.finished.id}").get_data(as_text=True)
    assert (
        client.post(url, json={"confirm": "alice-bot"}, headers=auth(world, "alice")).status_code
        == 404
    )
    again = {"file": (io.BytesIO(bot_zip("alice-bot")), "bot.zip")}
    refused = client.post("/api/v1/uploads", data=again, headers=auth(world, "alice"))
    assert refused.status_code == 422
    assert "you deleted your bot 'alice-bot'" in refused.get_json()["error"]["message"]


def test_the_owner_controls_the_bot_from_its_page(
    app: Flask, client: FlaskClient, world: World
) -> None:
    from tests.web.site.conftest import csrf_from, login

    bot = world.bots[0]
    _new_version(bot, 2)
    page = client.get(f"/bots/{bot.id}").get_data(as_text=True)
    assert 'id="version-table"' in page and 'id="owner-tools"' not in page, "anonymous"
    other = app.test_client()
    login(other, "mallory")
    page = other.get(f"/bots/{bot.id}").get_data(as_text=True)
    assert 'id="owner-tools"' not in page and "Play v1" not in page
    token = csrf_from(page)
    for path, data in (("play", {"number": "1"}), ("retire", {}), ("delete", {"confirm": "x"})):
        refused = other.post(f"/bots/{bot.id}/{path}", data={**data, "csrf_token": token})
        assert refused.status_code == 403, path
        assert "only the bot&#39;s owner" in refused.get_data(as_text=True), path
    login(client, "alice")
    page = client.get(f"/bots/{bot.id}").get_data(as_text=True)
    assert 'id="owner-tools"' in page and "Play v1" in page
    answer = client.post(
        f"/bots/{bot.id}/play", data={"number": "1", "csrf_token": csrf_from(page)}
    )
    assert answer.status_code == 302
    page = client.get(f"/bots/{bot.id}").get_data(as_text=True)
    assert "Version 1 plays the ladders now" in page and "chosen by its owner" in page
    assert _statuses(bot) == {1: "active", 2: "retired"}
    compare = client.get(f"/bots/{bot.id}/compare?a=1&b=2").get_data(as_text=True)
    assert 'id="compare-table"' in compare and "Challenge v1 against v2" in compare
    assert client.get(f"/bots/{bot.id}/compare?a=1&b=9").status_code == 404
    assert client.get(f"/bots/{bot.id}/compare?a=\u00b2&b=2").status_code == 200
    wrong = client.post(
        f"/bots/{bot.id}/delete", data={"confirm": "nope", "csrf_token": csrf_from(page)}
    )
    assert wrong.status_code == 302
    assert "confirm with its name" in client.get(f"/bots/{bot.id}").get_data(as_text=True)
    gone = client.post(
        f"/bots/{bot.id}/delete", data={"confirm": "alice-bot", "csrf_token": csrf_from(page)}
    )
    assert gone.status_code == 302 and client.get(f"/bots/{bot.id}").status_code == 404
    listing = client.get(f"/matches/{world.finished.id}").get_data(as_text=True)
    assert "alice-bot" in listing and 'class="deleted"' in listing
