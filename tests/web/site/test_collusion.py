"""The collusion report of the site: admins only, as a page and through the API.

Besides the world's svoi-kozyri match, three authors (alice, mallory, root-admin) play 30
finished three-seat Svara matches whose recorded answer times carry a signal from alice's bot
to mallory's (``tests.arena.test_collusion.simulated``): the report flags that pair.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.arena.test_collusion import simulated
from tests.web.browser.conftest import screenshot
from tests.web.site.conftest import PASSWORD, LiveServer, World, _bot, _store, login

PAGE = "/admin/collusion"
API = "/api/v1/admin/collusion"


@pytest.fixture
def signalled(world: World) -> World:
    """The world plus 30 finished Svara matches: alice's bot signals to mallory's."""
    from web.extensions import db
    from web.models import Match, MatchSeat, MatchStatus, utcnow

    owners = {"amy": world.owner, "bob": world.other, "cid": world.admin}
    versions = {name: _bot(user, f"{user.username}-svara")[1] for name, user in owners.items()}
    for seed, data in enumerate(simulated(signal=True)):
        replay = data.replay
        match = Match(game_config=replay["game"], seed=seed, status=MatchStatus.FINISHED)
        for seat, author in enumerate(data.authors):
            version = versions[author]
            match.seats.append(
                MatchSeat(seat=seat, bot_id=version.bot_id, bot_version_id=version.id)
            )
        match.replay_path = _store(dict(replay))
        match.result, match.outcome = replay["result"], replay["outcome"]
        match.finished_at = utcnow()
        db.session.add(match)
    db.session.commit()
    return world


def bearer(world: World, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[who]}"}


def test_the_api_flags_the_signalling_pair_for_an_admin(
    client: FlaskClient, signalled: World
) -> None:
    answer = client.get(API, headers=bearer(signalled, "root-admin"))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    report = answer.get_json()["data"]
    assert report["matches"] == 31 and report["alpha"] == 0.01
    flagged = [p for p in report["pairs"] if p["flagged"]]
    assert [p["authors"] for p in flagged] == [["alice", "mallory"]], report
    timing = {(t["sender"], t["reader"]): t for t in flagged[0]["timing"]}
    assert timing["alice", "mallory"]["flagged"] and not timing["mallory", "alice"]["flagged"]
    assert timing["alice", "mallory"]["adjusted_p_value"] < 0.01


def test_the_report_can_cover_one_game_and_fewer_matches(
    client: FlaskClient, signalled: World
) -> None:
    headers = bearer(signalled, "root-admin")
    one = client.get(f"{API}?game=svoi-kozyri", headers=headers).get_json()["data"]
    assert one["matches"] == 1 and one["flagged_pairs"] == 0
    few = client.get(f"{API}?matches=3", headers=headers).get_json()["data"]
    assert few["matches"] == 3


@pytest.mark.parametrize("query", ["alpha=0", "alpha=2", "matches=0", "matches=x", "alpha=nan"])
def test_bad_arguments_are_refused_not_crashed_on(
    client: FlaskClient, signalled: World, query: str
) -> None:
    api = client.get(f"{API}?{query}", headers=bearer(signalled, "root-admin"))
    assert api.status_code == 422 and api.get_json()["error"]["code"]
    login(client, "root-admin")
    assert client.get(f"{PAGE}?{query}").status_code == 400


@pytest.mark.parametrize("who", [None, "alice", "mallory"])
def test_nobody_but_an_admin_sees_the_report(app: Flask, signalled: World, who: str | None) -> None:
    client = app.test_client()
    headers = bearer(signalled, who) if who else {}
    assert client.get(API, headers=headers).status_code == 404
    if who:
        login(client, who)
    answer = client.get(PAGE)
    assert answer.status_code == 404
    assert "mallory-svara" not in answer.get_data(as_text=True)


def test_an_admin_reads_the_page(client: FlaskClient, signalled: World) -> None:
    login(client, "root-admin")
    html = client.get(PAGE).get_data(as_text=True)
    assert "1 flagged" in html and 'class="status failed">flagged' in html
    first_row = html.split("<tbody>")[1].split("</tr>")[0]
    assert "alice" in first_row and "mallory" in first_row, "the flagged pair comes first"
    assert 'href="/admin/collusion"' in client.get("/admin").get_data(as_text=True)


def test_a_missing_replay_file_is_counted_not_fatal(client: FlaskClient, signalled: World) -> None:
    from web.storage import get_storage

    get_storage().resolve(signalled.finished.replay_path).unlink()
    report = client.get(API, headers=bearer(signalled, "root-admin")).get_json()["data"]
    assert (report["matches"], report["unreadable_matches"]) == (30, 1)


@pytest.mark.browser
@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_in_a_browser(
    signalled: World, live_server: LiveServer, browser: Any, width: int
) -> None:
    """The report is readable on a desktop and on a phone: nothing widens the page, the
    table scrolls inside itself, and the flagged pair is marked."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(live_server.url + "/login")
    page.fill("input[name=username]", "root-admin")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    page.wait_for_url(lambda url: "/login" not in url)
    page.goto(live_server.url + PAGE)
    assert page.locator("tr.flagged").count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.select_option("select[name=game]", "svara")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(lambda url: "game=svara" in url)
    assert "30 finished matches of svara" in page.inner_text("main")
    screenshot(page, f"admin-collusion-{width}")
    page.close()
    assert not errors, errors


def test_a_match_of_a_sealed_group_is_left_out(client: FlaskClient, signalled: World) -> None:
    from web.extensions import db
    from web.models import Match

    finished = db.session.get(Match, signalled.finished.id)
    finished.mirror_group = "sealed-group"
    running = db.session.get(Match, signalled.running.id)
    running.mirror_group = "sealed-group"  # its sibling is still being played
    db.session.commit()
    headers = bearer(signalled, "root-admin")
    report = client.get(f"{API}?game=svoi-kozyri", headers=headers).get_json()["data"]
    assert report["matches"] == 0
