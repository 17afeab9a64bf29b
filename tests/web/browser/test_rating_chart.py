"""The bot page's interactive rating chart (uPlot) in a real browser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.web.browser.conftest import screenshot
from tests.web.browser.fixture_site import FixtureSite

pytestmark = pytest.mark.browser


def history(days: int) -> list[list[Any]]:
    """A rising rating over ``days`` days, three matches a day, sigma shrinking."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    points = []
    for i in range(days * 3):
        mu = 25 + 10 * (1 - 0.97**i)
        sigma = max(1.2, 8.33 * 0.96**i)
        when = (start + timedelta(hours=8 * i)).isoformat()
        points.append([when, round(mu - 3 * sigma, 3), round(mu, 3), round(sigma, 3)])
    return points


def open_chart(page: Any, site: FixtureSite, name: str, points: list[list[Any]]) -> Any:
    site.ratings[name] = points
    page.goto(f"{site.url}/chart/{name}")
    page.wait_for_selector("#rating-chart[data-points]")
    return page


def test_chart_draws_hovers_and_zooms(page: Any, site: FixtureSite) -> None:
    open_chart(page, site, "rising", history(60))
    assert page.get_attribute("#rating-chart", "data-points") == "180"
    assert page.get_attribute("#rating-chart", "data-axis") == "time"
    assert page.locator("#rating-chart canvas").count() == 1
    box = page.locator("#rating-chart .u-over").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    tip = page.locator(".rc-tip")
    tip.wait_for(state="visible")
    assert "score" in tip.inner_text() and "μ" in tip.inner_text()
    screenshot(page, "rating-chart")
    full = page.eval_on_selector(
        "#rating-chart", "r => r.chart.scales.x.max - r.chart.scales.x.min"
    )
    page.click('.rc-range[data-range="1w"]')
    week = page.eval_on_selector(
        "#rating-chart", "r => r.chart.scales.x.max - r.chart.scales.x.min"
    )
    assert week == pytest.approx(7 * 86400, rel=0.01)
    assert week < full
    page.click('.rc-range[data-range="All"]')
    back = page.eval_on_selector(
        "#rating-chart", "r => r.chart.scales.x.max - r.chart.scales.x.min"
    )
    assert back == pytest.approx(full)


def test_a_bot_without_history_says_so(page: Any, site: FixtureSite) -> None:
    open_chart(page, site, "newcomer", history(0)[:1])
    assert "No rating history" in page.inner_text("#rating-chart")
    assert page.locator("#rating-chart canvas").count() == 0


def test_matches_minutes_apart_are_drawn_one_after_another(page: Any, site: FixtureSite) -> None:
    points = history(1)  # three matches, eight hours apart
    open_chart(page, site, "burst", points)
    assert page.get_attribute("#rating-chart", "data-axis") == "match"
    assert page.locator(".rc-range").count() == 0, "no time ranges to choose from"
    box = page.locator("#rating-chart .u-over").bounding_box()
    page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)
    page.locator(".rc-tip").wait_for(state="visible")
    assert page.inner_text(".rc-tip").startswith("match 3 · 2026-01-01 16:00 UTC")
    screenshot(page, "rating-chart-few-matches")
