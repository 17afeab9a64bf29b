"""The viewer reads well at a desktop's width (1280 px) and a phone's (390 px).

Every card face shows its rank and suit whole, even where a fanned hand leaves only a strip of
it; a seat's name is never cut where there is room, and where it is cut the whole name is in its
tooltip; every mark drawn on the table or the slider has a line in the legend; on a phone the
step controls stay on screen while the table is.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from arena.games import names
from arena.replay import read_replay
from tests.web.browser.conftest import screenshot
from tests.web.browser.fixture_site import GOLDEN, FixtureSite

pytestmark = [pytest.mark.browser]

ROOT_SEL = "#replay-viewer"
WIDTHS = [1280, 390]
RANKS = {"T": "10"}
SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}

CORNERS = """root => [...root.querySelectorAll(".rv-card.face")].map((card) => {
  const box = card.getBoundingClientRect();
  const next = card.nextElementSibling;
  let right = box.right;
  if (next && next.classList.contains("rv-card") && !card.closest(".zone-trick")) {
    const other = next.getBoundingClientRect();
    const sameRow = Math.abs(other.top - box.top) < box.height / 2;
    if (sameRow && other.left < right && other.left > box.left) right = other.left;
  }
  const rank = card.querySelector(".corner .rank").getBoundingClientRect();
  const suit = card.querySelector(".corner .suit").getBoundingClientRect();
  return {
    card: card.dataset.card,
    rank: card.querySelector(".corner .rank").textContent,
    suit: card.querySelector(".corner .suit").textContent,
    left: box.left, visible: right,
    inside: (() => {
      const table = root.querySelector(".rv-table").getBoundingClientRect();
      return box.left >= table.left - 0.5 && box.right <= table.right + 0.5;
    })(),
    ends: [rank.left, rank.right, suit.left, suit.right],
  };
})"""


def open_at(page: Any, url: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 860 if width > 600 else 844})
    page.goto(url)
    page.wait_for_selector(f"{ROOT_SEL}[data-step]")


def go_to(page: Any, step: int) -> None:
    page.eval_on_selector(
        ".rv-range", f"r => {{ r.value = '{step}'; r.dispatchEvent(new Event('input')); }}"
    )
    page.wait_for_selector(f'{ROOT_SEL}[data-step="{step}"]')
    page.wait_for_timeout(350)  # let the cards' glide end before measuring


def steps_of(game: str) -> int:
    return len(read_replay(GOLDEN / f"{game}.json")["steps"])


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("game", names())
def test_every_card_shows_its_rank_and_suit_whole(
    page: Any, site: FixtureSite, game: str, width: int
) -> None:
    open_at(page, f"{site.url}/viewer/{game}", width)
    steps = steps_of(game)
    checked = tens = 0
    for step in sorted({1, steps // 3, steps // 2, steps - 1}):
        go_to(page, step)
        for face in page.eval_on_selector(ROOT_SEL, CORNERS):
            rank, suit = face["card"][:-1], face["card"][-1]
            assert face["rank"] == RANKS.get(rank, rank), face
            assert face["suit"] == SUITS[suit], face
            rank_left, rank_right, suit_left, suit_right = face["ends"]
            assert face["left"] <= min(rank_left, suit_left), face
            assert face["inside"], f"{face['card']} at step {step} is cut by the table's edge"
            assert max(rank_right, suit_right) <= face["visible"] + 0.5, (
                f"{face['card']} at step {step}: its corner is covered ({face})"
            )
            checked += 1
            tens += rank == "T"
    assert checked, "cards were shown face up"
    assert tens or game == "svara", "a ten was among them"
    screenshot(page, f"viewer-cards-{game}-{width}")


LONG = "a-bot-with-a-24-char-nm"
LONGEST = "an-extraordinarily-long-bot-name-that-no-seat-panel-can-hold-whole-at-all"


@pytest.mark.parametrize("width", WIDTHS)
def test_names_are_whole_where_there_is_room_and_in_a_tooltip_where_not(
    page: Any, site: FixtureSite, width: int
) -> None:
    replay = copy.deepcopy(read_replay(GOLDEN / "svoi-kozyri.json"))
    given = [LONG + "0", LONG + "1", LONGEST, LONG + "3"]
    for seat, name in zip(replay["seats"], given, strict=True):
        seat["name"] = name
    open_at(page, site.add("named", replay), width)
    go_to(page, 20)
    seats = page.eval_on_selector_all(
        ".seat .seat-name",
        "ls => ls.map(l => ({text: l.textContent, title: l.title,"
        " cut: l.scrollWidth > l.clientWidth + 1}))",
    )
    assert [s["text"] for s in seats] == given
    for seat in seats:
        assert seat["text"] in seat["title"], "the whole name is in the tooltip"
        if len(seat["text"]) <= 24:
            assert not seat["cut"], f"{seat['text']} is cut at {width} px"
    log = page.eval_on_selector_all(
        ".rv-log li[data-step] .who",
        "ls => ls.map(l => ({text: l.textContent, title: l.title,"
        " cut: l.scrollWidth > l.clientWidth + 1}))",
    )
    assert log and all(line["title"] == line["text"] for line in log if line["cut"])
    assert all(line["text"] in given for line in log)
    screenshot(page, f"viewer-names-{width}")


TABLE_MARKS = """root => {
  const kinds = new Set();
  const table = root.querySelector(".rv-table");
  for (const kind of ["marked", "on-top", "winner", "trumped"])
    if (table.querySelector(`.rv-card.${kind}`)) kinds.add(kind);
  if (table.querySelector(".seat.to-move")) kinds.add("to-move");
  if (table.querySelector(".seat.out")) kinds.add("out");
  if (table.querySelector(".badge.secret")) kinds.add("secret");
  return [...kinds];
}"""


@pytest.mark.parametrize("game", names())
def test_every_mark_has_a_line_in_the_legend(page: Any, site: FixtureSite, game: str) -> None:
    open_at(page, f"{site.url}/viewer/{game}", 1280)
    steps = steps_of(game)
    drawn: set[str] = set()
    for step in range(1, steps + 1, max(1, steps // 40)):
        go_to(page, step)
        marks = page.eval_on_selector(ROOT_SEL, TABLE_MARKS)
        legend = page.eval_on_selector_all(".rv-legend li", "ls => ls.map(l => l.dataset.mark)")
        missing = set(marks) - set(legend)
        assert not missing, f"step {step}: no legend for {missing}"
        drawn |= set(marks)
    assert "to-move" in drawn
    ticks = page.eval_on_selector_all(
        ".rv-marks .tick", "ts => [...new Set(ts.map(t => t.classList[1]))]"
    )
    legend = page.eval_on_selector_all(".rv-legend li", "ls => ls.map(l => l.dataset.mark)")
    assert ticks and {f"tick-{kind}" for kind in ticks} <= set(legend)
    texts = page.eval_on_selector_all(".rv-legend li", "ls => ls.map(l => l.textContent)")
    assert all(text.strip() for text in texts)
    screenshot(page, f"viewer-legend-{game}")


def test_on_a_phone_the_controls_stay_in_reach_while_the_table_is_on_screen(
    page: Any, site: FixtureSite
) -> None:
    open_at(page, f"{site.url}/viewer/svoi-kozyri", 390)
    go_to(page, 30)
    table = page.eval_on_selector(".rv-table", "t => t.getBoundingClientRect().toJSON()")
    side = page.eval_on_selector(".rv-side", "s => s.getBoundingClientRect().toJSON()")
    assert side["top"] >= table["bottom"], "the log comes under the table on a phone"
    seen = 0
    top = int(table["top"] + page.evaluate("window.scrollY"))
    for y in range(max(0, top - 200), top + int(table["height"]), 120):
        page.evaluate(f"window.scrollTo(0, {y})")
        page.wait_for_timeout(50)
        box = page.eval_on_selector(".rv-table", "t => t.getBoundingClientRect().toJSON()")
        if box["bottom"] < 0 or box["top"] > 844:
            continue
        controls = page.eval_on_selector(".rv-controls", "c => c.getBoundingClientRect().toJSON()")
        assert controls["top"] >= 0 and controls["bottom"] <= 844 + 0.5, (y, controls)
        seen += 1
    assert seen >= 3
    page.evaluate(f"window.scrollTo(0, {top})")
    page.click(".rv-controls .rv-btn.next")
    page.wait_for_selector(f'{ROOT_SEL}[data-step="31"]')
    whole = screenshot(page, "viewer-phone-controls")
    page.screenshot(path=str(whole.with_name("viewer-phone-controls-screen.png")))
