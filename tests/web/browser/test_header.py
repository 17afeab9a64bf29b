"""The site's header in a real browser: one row on a desktop, at most two on a phone, where the
sections fold into a menu that opens below it; every link stays reachable."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.web.browser.conftest import screenshot
from tests.web.browser.test_site_flow import sign_up

pytestmark = [pytest.mark.browser, pytest.mark.services]

SECTIONS = ["Ladders", "Matches", "Tournaments", "Challenges", "Play", "Write a bot", "API"]
LONG_NAME = "ada_lovelace_of_the_analytical_e"  # as long as a name may be
ROWS = """bar => {
  const boxes = [...bar.querySelectorAll(":scope > *, :scope > .sections > a")]
    .flatMap((item) => [...item.getClientRects()])
    .filter((box) => box.width > 0 && box.height > 0)
    .sort((a, b) => a.top - b.top);
  let rows = 0;
  let bottom = -Infinity;
  for (const box of boxes) {
    if (box.top >= bottom - 2) rows += 1;
    bottom = Math.max(bottom, box.bottom);
  }
  return rows;
}"""
"""How many rows the header's items take (items whose boxes overlap vertically share a row)."""


def rows(page: Any) -> int:
    return int(page.eval_on_selector("header.top .bar", ROWS))


def section(page: Any, name: str) -> Any:
    return page.locator("header .sections a", has_text=name).first


def sign_in_as(pg_app: Flask, page: Any, site: str, who: str) -> None:
    """A member with a short name, or an admin with the longest name a member may take (the
    most the header ever holds)."""
    if who == "visitor":
        return
    name = LONG_NAME if who == "admin" else "ada"
    sign_up(page, site, name)
    if who == "admin":
        from web.extensions import db
        from web.models import User

        user = db.session.execute(db.select(User).filter_by(username=name)).scalar_one()
        user.is_admin = True
        db.session.commit()


@pytest.mark.parametrize("who", ["visitor", "member", "admin"])
def test_the_header_takes_one_row_on_a_desktop_and_two_on_a_phone(
    pg_app: Flask, live_site: str, page: Any, who: str
) -> None:
    sign_in_as(pg_app, page, live_site, who)
    page.set_viewport_size({"width": 1280, "height": 860})
    page.goto(live_site)
    screenshot(page, f"header-1280-{who}")
    assert rows(page) == (2 if who == "admin" else 1), "an admin's four links may wrap once"
    assert not page.is_visible("header .menu-toggle"), "no menu where every link fits"
    assert all(section(page, name).is_visible() for name in SECTIONS)

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_site)
    screenshot(page, f"header-390-{who}")
    assert rows(page) <= 2
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "nothing runs off"
    toggle = page.locator("header .menu-toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not any(section(page, name).is_visible() for name in SECTIONS)
    account = {
        "visitor": ["Log in", "Sign up"],
        "member": ["Upload a bot", "My bots", "Log out"],
        "admin": ["Upload a bot", "My bots", "Admin", "Log out"],
    }[who]
    for name in account:
        assert page.locator(f"header :is(a, button):text-is('{name}')").is_visible(), name
    if who == "admin":
        me = page.locator("header a.me")
        assert me.is_visible() and me.get_attribute("title") == LONG_NAME, "whole in its tooltip"

    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    for name in SECTIONS:
        box = section(page, name).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, f"{name} is in view"
    screenshot(page, f"header-390-{who}-menu")
    page.keyboard.press("Escape")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.classList.contains('menu-toggle')")
    page.keyboard.press("Enter")  # the focused button opens it again from the keyboard
    guide = section(page, "Write a bot")
    href = guide.get_attribute("href")
    guide.click()
    page.wait_for_url(f"**{href}")
