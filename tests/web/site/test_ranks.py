"""Ranks on the ladder page, the bot page, the home page and the API: a bot still placing shows
"placing, k of n" and no rank; a bot without rated matches is unranked and listed last."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.web.browser.conftest import screenshot
from tests.web.site.conftest import LiveServer, World, _bot


def _standings(client: FlaskClient, world: World) -> list[dict[str, Any]]:
    body = client.get(f"/api/v1/ladders/{world.ladder.slug}").get_json()
    rows: list[dict[str, Any]] = body["data"]["standings"]
    return rows


def test_a_bot_in_placement_shows_its_progress_and_no_rank(
    app: Flask, client: FlaskClient, world: World
) -> None:
    app.config["PLACEMENT_MATCHES"] = 10  # each bot of the world has played one
    rows = _standings(client, world)
    assert [(r["rank"], r["rank_label"], r["placing"]) for r in rows] == [
        (None, "placing, 1 of 10", {"played": 1, "of": 10})
    ] * 2
    ladder_page = client.get(f"/ladders/{world.ladder.slug}").get_data(as_text=True)
    assert ladder_page.count("placing, 1 of 10") == 2
    bot_id = world.bots[0].id
    bot_page = client.get(f"/bots/{bot_id}").get_data(as_text=True)
    assert "<b>placing, 1 of 10</b>" in bot_page, "the placement note"
    assert '<td class="n rank unranked">placing, 1 of 10</td>' in bot_page, "the ladders table"
    rating = client.get(f"/api/v1/bots/{bot_id}").get_json()["data"]["ratings"][0]
    assert rating["rank"] is None and rating["placing"] == {"played": 1, "of": 10}
    home = client.get("/").get_data(as_text=True)
    assert '<ol class="top">' not in home and "No ranked bot yet" in home

    app.config["PLACEMENT_MATCHES"] = 1  # placement over: ranks by mu, the winner first
    rows = _standings(client, world)
    assert [r["rank"] for r in rows] == [1, 2] and rows[0]["mu"] > rows[1]["mu"]
    assert [r["placing"] for r in rows] == [None, None]
    assert "placing," not in client.get(f"/bots/{bot_id}").get_data(as_text=True)
    rating = client.get(f"/api/v1/bots/{bot_id}").get_json()["data"]["ratings"][0]
    assert rating["rank"] in (1, 2) and rating["rank_label"] == str(rating["rank"])


def test_a_bot_without_rated_matches_is_unranked_and_listed_last(
    app: Flask, client: FlaskClient, world: World
) -> None:
    from web.extensions import db
    from web.models import Rating, VersionStatus

    app.config["PLACEMENT_MATCHES"] = 1
    # A bot whose version is not active (so not placing) and that never played, with a mean
    # above everyone's: by mu alone it would be first.
    idle, version = _bot(world.other, "idle-bot")
    version.status = VersionStatus.REJECTED
    db.session.add(Rating(bot_id=idle.id, ladder_id=world.ladder.id, mu=40.0, sigma=8.0, games=0))
    db.session.commit()
    for sort in ("rank", "score", "mu", "bot"):
        answer = client.get(f"/api/v1/ladders/{world.ladder.slug}?sort={sort}").get_json()
        rows = answer["data"]["standings"]
        assert [r["bot"] for r in rows][-1] == "idle-bot", sort
        assert [r["rank"] for r in rows] == [1, 2, None], sort
        assert rows[-1]["rank_label"] == "unranked" and rows[-1]["placing"] is None
    page = client.get(f"/ladders/{world.ladder.slug}").get_data(as_text=True)
    assert '<td class="n rank unranked">unranked</td>' in page
    assert page.index("alice-bot") < page.index("idle-bot")
    bot_page = client.get(f"/bots/{idle.id}").get_data(as_text=True)
    assert '<td class="n rank unranked">unranked</td>' in bot_page
    home = client.get("/").get_data(as_text=True)
    top = re.search(r'<ol class="top">(.*?)</ol>', home, re.S)
    assert top is not None and "alice-bot" in top.group(1) and "idle-bot" not in top.group(1)


RANK_CELLS = """() => [...document.querySelectorAll('td.rank')].map(td => {
  const text = document.createRange();
  text.selectNodeContents(td);
  const tops = new Set([...text.getClientRects()].map(r => Math.round(r.top)));
  return {text: td.textContent.trim(), whole: td.scrollWidth <= td.clientWidth, lines: tops.size};
})"""
"""Each rank cell: its text, whether it fits its cell, and on how many lines it is set."""


@pytest.mark.browser
def test_rank_cells_read_whole_on_desktop_and_phone(
    app: Flask, world: World, live_server: LiveServer, browser: Any
) -> None:
    from web.extensions import db
    from web.models import Rating, VersionStatus

    app.config["PLACEMENT_MATCHES"] = 1  # the world's two bots are ranked
    placing, _ = _bot(world.other, "placing-bot")
    idle, version = _bot(world.other, "idle-bot")
    version.status = VersionStatus.REJECTED
    for bot in (placing, idle):
        db.session.add(Rating(bot_id=bot.id, ladder_id=world.ladder.id, mu=30, sigma=8, games=0))
    db.session.commit()
    for width in (1280, 390):
        page = browser.new_page(viewport={"width": width, "height": 800})
        page.goto(f"{live_server.url}/ladders/{world.ladder.slug}", wait_until="networkidle")
        cells = page.evaluate(RANK_CELLS)
        screenshot(page, f"ladder-ranks-{width}")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.close()
        assert [c["text"] for c in cells] == ["1", "2", "placing, 0 of 1", "unranked"], width
        assert all(c["whole"] and c["lines"] <= 1 for c in cells), (width, cells)


def test_a_new_version_of_a_ranked_bot_places_again(
    app: Flask, client: FlaskClient, world: World
) -> None:
    from web.extensions import db
    from web.models import BotVersion, VersionStatus, utcnow

    app.config["PLACEMENT_MATCHES"] = 1
    assert [r["rank"] for r in _standings(client, world)] == [1, 2]
    old = world.versions[0]
    old.status, old.activated_at = VersionStatus.RETIRED, utcnow()
    db.session.add(
        BotVersion(
            bot_id=old.bot_id,
            number=2,
            sha256=old.sha256,
            status=VersionStatus.ACTIVE,
            games=old.games,
            language=old.language,
            activated_at=utcnow(),
        )
    )
    db.session.commit()
    # Its rating row still counts the first version's match: the new version has played none.
    rows = {r["bot"]: r for r in _standings(client, world)}
    assert rows["alice-bot"]["matches"] == 1
    assert rows["alice-bot"]["rank"] is None
    assert rows["alice-bot"]["rank_label"] == "placing, 0 of 1"
    assert rows["mallory-bot"]["rank"] == 1


def test_the_home_pages_top_of_every_ladder_is_read_in_one_query_alike(
    app: Flask, world: World
) -> None:
    """PostgreSQL reads the top of every ladder in one query (a lateral subquery per ladder):
    the same rows in the same order as asking each ladder alone, a deleted bot and unplayed
    ratings left out, every ladder's own bots only."""
    from sqlalchemy import select, update

    from web.api import queries
    from web.extensions import db
    from web.models import Bot, BotStatus, Ladder, Rating
    from web.services import ladders

    other = ladders.get_or_create_ladder(world.ladder.game, world.ladder.players + 1)
    mus = [31.0, 12.0, 27.5, 27.5, 19.0, 40.0]
    for k, mu in enumerate(mus):
        bot, _ = _bot(world.owner if k % 2 else world.other, f"top-{k}")
        ladder = world.ladder if k < 3 else other
        db.session.add(Rating(bot_id=bot.id, ladder_id=ladder.id, mu=mu, sigma=2.0, games=k))
    db.session.flush()
    deleted = db.session.scalar(select(Bot.id).where(Bot.name == "top-5"))
    db.session.execute(update(Bot).where(Bot.id == deleted).values(status=BotStatus.DELETED))
    db.session.commit()

    every = {x: queries._best_of_ladder(x, 3) for x in db.session.scalars(select(Ladder.id))}
    alike = {x: rows for x, rows in every.items() if rows}
    assert dict(queries._best_of_ladders_lateral(3)) == alike
    assert [n for _, n, _ in alike[other.id]] == ["top-3", "top-4"], "no unplayed, no deleted"
    assert len(alike[world.ladder.id]) == 3, "at most the limit"
