"""Version control and challenges in a real browser, on a desktop and a phone: the owner
rolls back from the bot page (the chart marks the versions), compares two versions, challenges
one against the other, and retires then deletes the bot; no script error, nothing wider than
the screen."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.browser.conftest import screenshot
from tests.web.site import conftest as site
from tests.web.site.conftest import PASSWORD, World, _finish, _match, record
from tests.web.site.test_versions import _new_version

pytestmark = [pytest.mark.browser, pytest.mark.services]

# The site tests' app (PostgreSQL, Redis), their world of users, bots and matches, and the
# app served over HTTP.
app, world, live_server = site.app, site.world, site.live_server


def fits(page: Any, what: str) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{what} is wider than the screen ({width} px)"


def log_in(page: Any, url: str, username: str) -> None:
    page.goto(f"{url}/login")
    page.fill('input[name="username"]', username)
    page.fill('input[name="password"]', PASSWORD)
    page.click('main button[type="submit"]')
    page.wait_for_url(lambda u: "/login" not in u)


@pytest.mark.parametrize("width", [1280, 390])
def test_roll_back_compare_challenge_retire_and_delete(
    page: Any,
    live_server: Any,
    world: World,
    width: int,
) -> None:
    from web.extensions import db

    page.set_viewport_size({"width": width, "height": 860})
    bot = world.bots[0]
    v2 = _new_version(bot, 2)
    played = _match(world.ladder, [v2, world.versions[1]], 7, "finished")
    _finish(played, record(7))
    db.session.commit()
    url = live_server.url
    log_in(page, url, "alice")
    page.goto(f"{url}/bots/{bot.id}")
    page.wait_for_selector("#rating-chart[data-points]")
    assert page.get_attribute("#rating-chart", "data-version-marks") == "2"
    assert "v2 from rated match 2" in page.inner_text("#version-marks")
    assert "Version 2 plays the ladders" in page.inner_text("#playing-note")
    fits(page, "the bot page")
    screenshot(page, f"versions-bot-{width}")

    page.click("#version-table tr[data-number='1'] .play-form button")
    page.wait_for_selector(".flash.ok")
    assert "Version 1 plays the ladders now" in page.inner_text(".flash.ok")
    assert "chosen by its owner" in page.inner_text("#playing-note")
    assert "playing, chosen" in page.inner_text("#version-table tr[data-number='1']")

    page.click("text=Compare versions")
    page.wait_for_selector("#compare-table")
    fits(page, "the comparison")
    screenshot(page, f"versions-compare-{width}")
    page.click("#challenge-versions")
    page.wait_for_selector("#challenge-form")
    seats = page.eval_on_selector_all(
        "#challenge-form select[name=seat]", "s => s.map(x => x.value)"
    )
    assert seats == [f"{bot.id}:1", f"{bot.id}:2"], "the compared versions, one per seat"
    fits(page, "the challenge form")
    screenshot(page, f"challenge-form-{width}")
    page.click("#challenge-form button[type=submit]")
    page.wait_for_selector("#challenge-results")
    assert "queued" in page.inner_text("#challenge-status")
    rows = page.inner_text("#challenge-results")
    assert "alice-bot v2" in rows and "alice-bot v1" in rows
    fits(page, "the challenge page")
    screenshot(page, f"challenge-{width}")
    page.click("nav >> text=Challenges")
    page.wait_for_selector("table.challenges")
    fits(page, "the challenges list")
    screenshot(page, f"challenges-{width}")

    page.goto(f"{url}/bots/{bot.id}")
    page.click("#owner-tools >> text=Retire the bot")
    page.wait_for_selector(".flash.ok")
    assert page.inner_text("#bot-state") == "retired"
    page.fill("#delete-form input[name=confirm]", "alice-bot")
    page.click("#delete-form button")
    page.wait_for_url(f"{url}/users/alice")
    assert "alice-bot is deleted" in page.inner_text(".flash.ok")
    page.goto(f"{url}/matches/{world.finished.id}")
    assert "alice-bot" in page.inner_text("main")
