"""A person plays a whole match of every game against the sample bots, in a real browser.

At 1280 and at 390 px, a signed-up person opens each game's shortest table from the Play page
and answers every turn through the page: by clicking an action, by its number key, by Tab and
Enter, or by clicking a card of the hand that a legal action plays, in turn. The game viewer
draws the table from the person's seat as it is played. Each finished match's replay verifies,
and the page says where the person finished.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from flask import Flask

from arena import replay as replays
from tests.web.browser.conftest import screenshot
from tests.web.browser.test_site_flow import live_site as live_site
from tests.web.browser.test_site_flow import sign_up
from tests.web.services.test_tables import SHORT, full_replay, house_bots, seats_of
from web.extensions import db
from web.models import Match, MatchStatus

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.slow]

WIDTHS = {"1280": {"width": 1280, "height": 860}, "390": {"width": 390, "height": 844}}
WAIT_MS = 240_000
TURN_OR_END = """last => {
  const panel = document.querySelector('#play-panel');
  if (panel.dataset.over) return true;
  const ready = panel.querySelector('.play-action:not([disabled])');
  return Boolean(ready) && panel.dataset.request !== last;
}"""


def answer_turn(page: Any, number: int, rng: random.Random) -> str:
    """Answer the turn on screen: by clicking an action or a playable card of the hand on the
    table, by its number key, or by Tab and Enter; returns how."""
    buttons = page.locator("#play-actions .play-action")
    count = buttons.count()
    index = rng.randrange(count)
    way = ("click", "key", "tab", "card")[number % 4]
    cards = page.eval_on_selector("#play-panel", "p => p.dataset.cards === '1'")
    if way == "card" and not cards:
        way = "click"
    if way == "card":  # a card of the hand that a legal action plays, on the table
        # the corner: in a fanned hand the next card covers the rest of it
        page.locator("#replay-viewer .rv-card.playable").first.click(position={"x": 5, "y": 12})
    elif way == "click":
        buttons.nth(index).click()
    elif way == "key":
        for digit in str(index + 1):
            page.keyboard.press(digit)
        if count > 9 and (index + 1) * 10 <= count:
            page.keyboard.press("Enter")
    else:  # the first action has the focus: Tab moves on to the second
        page.keyboard.press("Tab" if count > 1 else "Shift+Tab")
        if count > 1:
            page.keyboard.press("Enter")
        else:
            buttons.first.focus()
            page.keyboard.press("Enter")
    return way


def play_table(page: Any, rng: random.Random, shot: str, ways: set[str]) -> int:
    """Answer every turn until the match is over (adding to ``ways`` how); the turns."""
    last, turns = "", 0
    while True:
        page.wait_for_function(TURN_OR_END, arg=last, timeout=WAIT_MS)
        if page.eval_on_selector("#play-panel", "p => Boolean(p.dataset.over)"):
            return turns
        last = page.eval_on_selector("#play-panel", "p => p.dataset.request")
        if turns == 2:
            page.wait_for_selector("#replay-viewer .seat", timeout=WAIT_MS)
            screenshot(page, shot)
        ways.add(answer_turn(page, turns, rng))
        turns += 1


@pytest.mark.timeout(600)  # a busy machine: some hundred moves, each a round trip
@pytest.mark.parametrize("width", list(WIDTHS))
def test_a_person_plays_every_game_through_the_page(
    pg_app: Flask, live_site: str, start_worker: Any, browser: Any, width: str
) -> None:
    pg_app.config["LIVE_STREAM_SECONDS"] = 600.0  # the streams here last the whole match
    for game in SHORT:
        house_bots(game)
    start_worker(pg_app)
    play_every_game(browser, live_site, width)


def choice_query(game: str) -> str:
    """The Play page's address that chooses ``game``'s shortest table."""
    cfg = SHORT[game]
    parts = [f"game={game}", f"deals={cfg.get('deals', '')}"]
    parts += [f"{k}={cfg[k]}" for k in ("variant", "players") if k in cfg]
    parts += [f"param.{k}={v}" for k, v in cfg.get("params", {}).items()]
    return "&".join(parts)


def play_every_game(browser: Any, site: str, width: str) -> None:
    context = browser.new_context(viewport=WIDTHS[width])
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(f"uncaught: {exc}"))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    rng = random.Random(int(width))
    ways: set[str] = set()
    sign_up(page, site, f"player{width}")
    for number, game in enumerate(SHORT):
        page.goto(f"{site}/play?{choice_query(game)}")
        seat = (number + int(width == "390")) % seats_of(game)
        page.select_option('#play-form select[name="seat"]', str(seat))
        if number == 0:
            screenshot(page, f"play-form-{width}")
        page.click("#play-start")
        page.wait_for_url("**/play/*")
        match_id = int(page.url.split("/play/", 1)[1].split("?")[0])
        turns = play_table(page, rng, f"play-{game}-{width}", ways)
        assert turns > 0, f"{game}: the person was never asked"
        page.wait_for_selector("#play-match-link")
        assert "you finished in place" in page.inner_text("#play-status")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{game} at {width} px: the page is {overflow} px too wide"
        if number == len(SHORT) - 1:
            screenshot(page, f"play-over-{width}")
        db.session.expire_all()
        match = db.session.get(Match, match_id)
        assert match is not None and match.status == MatchStatus.FINISHED
        replay = full_replay(match_id)
        assert replays.verify(replay) == []  # type: ignore[arg-type]
        assert replay["seats"][seat]["kind"] == "human"
        assert match.outcome is not None and match.outcome["strikes"][seat] == 0
    context.close()
    assert ways == {"click", "key", "tab", "card"}
    assert not problems, "errors in the page:\n" + "\n".join(problems)
