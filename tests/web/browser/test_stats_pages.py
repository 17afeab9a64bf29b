"""A bot's statistics and its owner's matches with errors in a real browser, on a desktop and
a phone: the version selector reloads the figures, the charts and tables show, the error list
links to its matches; no script error, nothing wider than the screen."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.browser.conftest import screenshot
from tests.web.browser.test_versions_and_challenges import fits, log_in
from tests.web.site import conftest as site
from tests.web.site.conftest import World
from tests.web.site.test_stats import _stats_world

pytestmark = [pytest.mark.browser, pytest.mark.services]

app, world, live_server = site.app, site.world, site.live_server


@pytest.mark.parametrize("width", [1280, 390])
def test_statistics_and_errors_pages(page: Any, live_server: Any, world: World, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 860})
    bot, _, _ = _stats_world(world)
    url = live_server.url
    log_in(page, url, "alice")
    page.goto(f"{url}/bots/{bot.id}")
    page.click("#stats-link")
    page.wait_for_selector("#by-seat")
    assert "5 matches, won 2 (40.0%)" in page.inner_text("#stats-summary")
    assert page.locator("#by-seat-chart svg.rate-bars rect.bar").count() == 2
    assert page.locator("#by-day-chart svg.rate-line circle").count() == 3
    assert "mallory-bot" in page.inner_text("#by-opponent")
    assert page.inner_text("#errors-table tr[data-kind='timeout'] td.n") == "1"
    fits(page, "the statistics page")
    screenshot(page, f"stats-bot-{width}")

    page.select_option("#stats-form select[name=version]", "2")
    page.click("#stats-form button[type=submit]")
    page.wait_for_url(lambda u: "version=2" in u)
    assert "Version 2: 2 matches, won 1" in page.inner_text("#stats-summary")
    assert page.inner_text("#errors-table tr[data-kind='crash'] td.n") == "1"
    fits(page, "one version's statistics")

    page.click("text=Your matches with errors")
    page.wait_for_selector("#error-list")
    assert page.locator("#error-list tbody tr").count() == 2
    assert "the bot said crash" in page.inner_text("#error-list")
    fits(page, "the error list")
    screenshot(page, f"stats-errors-{width}")
    page.click("#error-list tbody tr:first-child td:first-child a")
    page.wait_for_url(lambda u: "/matches/" in u)
