"""Every internal link reachable from the home page answers without a 4xx or 5xx, for an
anonymous visitor and for a logged-in bot owner."""

from __future__ import annotations

import html
import re
from collections import deque
from urllib.parse import urldefrag

import pytest
from flask.testing import FlaskClient

from tests.web.site.conftest import World, login

LINK = re.compile(r'(?:href|src)="([^"]+)"')
MOST_PAGES = 400
"""A bound on the crawl, so a page that links to ever new pages cannot make it run forever."""


def internal_links(page: str) -> set[str]:
    """The site-relative addresses a page links to, fragments dropped."""
    found = set()
    for raw in LINK.findall(page):
        address = urldefrag(html.unescape(raw)).url
        if address.startswith("/") and not address.startswith("//"):
            found.add(address)
    return found


def crawl(client: FlaskClient) -> dict[str, int]:
    """Status of every address reached by following links from ``/``."""
    seen: dict[str, int] = {}
    todo = deque(["/"])
    while todo and len(seen) < MOST_PAGES:
        address = todo.popleft()
        if address in seen:
            continue
        answer = client.get(address)
        seen[address] = answer.status_code
        if answer.status_code == 200 and answer.mimetype == "text/html":
            todo.extend(internal_links(answer.get_data(as_text=True)) - seen.keys())
        answer.close()  # static files answer with an open file
    return seen


@pytest.mark.parametrize("who", ["anonymous", "alice"])
def test_no_internal_link_is_broken(client: FlaskClient, world: World, who: str) -> None:
    from web.services.tournaments import create_tournament

    create_tournament(
        "Link cup", world.ladder.game_config(), [v.id for v in world.versions], tables=1
    )
    if who != "anonymous":
        login(client, who)
    seen = crawl(client)
    broken = {address: status for address, status in seen.items() if status >= 400}
    assert not broken, broken
    reached = " ".join(seen)
    for part in ("/ladders/", "/bots/", "/matches/", "/users/", "/tournaments/", "/static/"):
        assert part in reached, f"no link leads to {part}"
    if who != "anonymous":
        assert "/account" in seen and "/upload" in seen
