"""Every page renders for an anonymous visitor, a bot owner, another user and an admin, and a
newcomer can find their way from the home page to a bot on a ladder and its replays."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.web.site.conftest import LiveServer, World, login

ROLES = ("anonymous", "owner", "other", "admin")
LOGIN_ONLY = {"/upload", "/account"}
ADMIN_ONLY = {"/admin", "/admin/collusion"}


def page_urls(world: World, tournament_id: int) -> list[str]:
    slug = world.ladder.slug
    return [
        "/",
        f"/ladders/{slug}",
        f"/ladders/{slug}?sort=mu&page=1",
        f"/ladders/{slug}?sort=nonsense&page=x",
        *(f"/bots/{bot.id}" for bot in world.bots),
        f"/bots/{world.bots[0].id}?ladder={slug}",
        "/matches",
        f"/matches?game=svoi-kozyri&status=finished&ladder={slug}&bot={world.bots[0].id}",
        f"/matches/{world.finished.id}",
        f"/matches/{world.running.id}",
        "/tournaments",
        f"/tournaments/{tournament_id}",
        "/users/alice",
        "/users/mallory",
        "/docs/api",
        "/login",
        "/register",
        "/upload",
        "/account",
        "/admin",
        "/admin/collusion",
    ]


def as_role(client: FlaskClient, world: World, role: str) -> None:
    names = {"owner": "alice", "other": "mallory", "admin": "root-admin"}
    if role in names:
        login(client, names[role])


def expected(url: str, role: str) -> int:
    path = url.split("?")[0]
    if path in ADMIN_ONLY and role != "admin":
        return 404
    if path in LOGIN_ONLY and role == "anonymous":
        return 302
    return 200


@pytest.fixture
def tournament_id(world: World) -> int:
    from web.services.tournaments import create_tournament

    made = create_tournament(
        "Autumn cup", world.ladder.game_config(), [v.id for v in world.versions], tables=1
    )
    return int(made.id)


@pytest.mark.parametrize("role", ROLES)
def test_every_page_renders(
    client: FlaskClient, world: World, tournament_id: int, role: str
) -> None:
    as_role(client, world, role)
    for url in page_urls(world, tournament_id):
        answer = client.get(url)
        assert answer.status_code == expected(url, role), (url, answer.status_code)
        if answer.status_code == 200:
            html = answer.get_data(as_text=True)
            assert "</html>" in html, url


def test_missing_things_are_404_pages(client: FlaskClient, world: World) -> None:
    for url in ("/bots/999999", "/matches/999999", "/ladders/nope", "/users/nobody",
                "/tournaments/999999"):  # fmt: skip
        answer = client.get(url)
        assert answer.status_code == 404
        assert "text/html" in answer.content_type


def test_ladder_table_shows_ranked_bots_with_trends(client: FlaskClient, world: World) -> None:
    html = client.get(f"/ladders/{world.ladder.slug}").get_data(as_text=True)
    assert "alice-bot" in html and "mallory-bot" in html
    assert html.count('class="spark"') == 2
    winner = world.finished.seats[world.finished.result["ranking"].index(1)].bot.name
    first_row = html.split("<tbody>")[1].split("</tr>")[0]
    assert winner in first_row, "the match winner ranks first"


def test_match_page_hosts_the_viewer(client: FlaskClient, world: World) -> None:
    login(client, "alice")
    html = client.get(f"/matches/{world.finished.id}").get_data(as_text=True)
    viewer = re.search(r'<div id="replay-viewer"(.*?)>', html, re.S)
    assert viewer, "no viewer element"
    attrs = dict(re.findall(r'(data-[a-z-]+)=["\']([^"\']*)["\']', viewer.group(1)))
    assert attrs["data-replay-url"] == f"/api/v1/matches/{world.finished.id}/replay"
    assert attrs["data-frames-url"] == f"/api/v1/matches/{world.finished.id}/frames"
    assert attrs["data-game"] == "svoi-kozyri"
    assert attrs["data-viewer-seat"] == "0", "alice owns seat 0"
    assert "alice-bot" in attrs["data-seats"]
    assert '<script type="module" src="/static/js/viewer/main.js">' in html


def test_viewer_seat_is_empty_for_someone_without_a_seat(client: FlaskClient, world: World) -> None:
    html = client.get(f"/matches/{world.finished.id}").get_data(as_text=True)
    assert 'data-viewer-seat=""' in html


def test_bot_page_has_the_rating_chart_hooks(client: FlaskClient, world: World) -> None:
    html = client.get(f"/bots/{world.bots[0].id}").get_data(as_text=True)
    src = f"/api/v1/bots/{world.bots[0].id}/ratings?ladder={world.ladder.slug}"
    assert f'<div id="rating-chart" data-src="{src}">' in html
    assert "Finished above" in html  # head-to-head table
    assert "mallory-bot" in html


def test_a_newcomer_finds_the_way_from_home_to_a_replay(client: FlaskClient, world: World) -> None:
    """Follow links only: home -> ladder -> bot -> match -> replay."""
    home = client.get("/").get_data(as_text=True)
    assert "Sign up" in home and "Upload" in home
    ladder_link = re.search(r'href="(/ladders/[^"]+)"', home)
    assert ladder_link
    ladder = client.get(ladder_link.group(1)).get_data(as_text=True)
    bot_link = re.search(r'href="(/bots/\d+[^"]*)"', ladder)
    assert bot_link
    bot = client.get(bot_link.group(1).replace("&amp;", "&")).get_data(as_text=True)
    match_link = re.search(r'href="(/matches/\d+)"', bot)
    assert match_link
    match = client.get(match_link.group(1)).get_data(as_text=True)
    replay_link = re.search(r'href="(/api/v1/matches/\d+/replay)"', match)
    assert replay_link
    assert client.get(replay_link.group(1)).status_code == 200


def test_empty_ladder_says_what_to_do(client: FlaskClient, app: object) -> None:
    from web.extensions import db
    from web.services import ladders

    ladder = ladders.get_or_create_ladder("svoi-kozyri", players=3)
    db.session.commit()
    html = client.get(f"/ladders/{ladder.slug}").get_data(as_text=True)
    assert "No bot plays on this ladder yet" in html and "/upload" in html


def test_session_cookie_is_httponly_and_lax(client: FlaskClient, world: World) -> None:
    page = client.get("/login")
    cookie = page.headers.get("Set-Cookie", "")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_ladder_pages_link_to_each_other(
    client: FlaskClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web.views import ladders

    monkeypatch.setattr(ladders, "PER_PAGE", 1)
    first = client.get(f"/ladders/{world.ladder.slug}?sort=mu").get_data(as_text=True)
    assert "page 1 of 2" in first
    link = re.search(r'href="([^"]*page=2[^"]*)"', first)
    assert link and "sort=mu" in link.group(1)
    second = client.get(link.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert "page 2 of 2" in second and "previous" in second


def test_anonymous_ladder_pages_are_cached_briefly(
    app: object, client: FlaskClient, world: World
) -> None:
    from web.extensions import db
    from web.views import cache

    cache.clear()
    app.config["PAGE_CACHE_SECONDS"] = 60.0  # type: ignore[attr-defined]
    url = f"/ladders/{world.ladder.slug}"
    assert "alice-bot" in client.get(url).get_data(as_text=True)
    world.bots[0].name = "renamed-bot"
    db.session.commit()
    assert "alice-bot" in client.get(url).get_data(as_text=True), "served from the cache"
    login(client, "mallory")
    assert "renamed-bot" in client.get(url).get_data(as_text=True), "logged-in users see it now"
    cache.clear()


def count_queries(client: FlaskClient, url: str) -> int:
    from sqlalchemy import event

    from web.extensions import db

    seen: list[str] = []

    def note(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        assert client.get(url).status_code == 200, url
    finally:
        event.remove(db.engine, "before_cursor_execute", note)
    return len(seen)


def test_pages_issue_a_fixed_number_of_queries(client: FlaskClient, world: World) -> None:
    """No query per row: more bots and matches must not mean more queries."""
    from tests.web.site.conftest import _bot, _finish, _match, record
    from web.extensions import db
    from web.models import MatchStatus

    urls = ["/", f"/ladders/{world.ladder.slug}", "/matches", f"/bots/{world.bots[0].id}",
            f"/matches/{world.finished.id}", "/users/alice", "/api/v1/matches"]  # fmt: skip
    before = {url: count_queries(client, url) for url in urls}
    for n in range(3):
        _, version = _bot(world.owner, f"extra-{n}")
        match = _match(world.ladder, [world.versions[0], version], 42, MatchStatus.FINISHED)
        _finish(match, record(42))
    db.session.commit()
    after = {url: count_queries(client, url) for url in urls}
    assert after == before


def test_bot_guide_offers_the_starter_kit_and_submit(client: FlaskClient, world: World) -> None:
    home = client.get("/").get_data(as_text=True)
    assert 'href="/docs/bots"' in home, "the guide is one click from home"
    guide = client.get("/docs/bots").get_data(as_text=True)
    assert "arena submit" in guide and "bot.toml" in guide
    kit = client.get("/docs/bots/files/kozyri_bot.py")
    assert kit.status_code == 200 and b"def run" in kit.get_data()
    kit.close()
    assert client.get("/docs/bots/files/..%2Fpyproject.toml").status_code == 404
    assert client.get("/docs/bots/files/python/bot.py/../../x").status_code == 404


def test_upload_page_explains_the_manifest(client: FlaskClient, world: World) -> None:
    login(client, "alice")
    html = client.get("/upload").get_data(as_text=True)
    assert 'run = ["python3", "bot.py"]' in html and 'href="/docs/bots"' in html


def test_api_docs_show_code_spans_as_code(client: FlaskClient, world: World) -> None:
    html = client.get("/docs/api").get_data(as_text=True)
    assert "``" not in html
    assert "<code>seat</code>" in html


def test_bot_page_after_one_rated_match_says_so(client: FlaskClient, world: World) -> None:
    html = client.get(f"/bots/{world.bots[0].id}").get_data(as_text=True)
    assert "One rated match so far" in html


PHONE = {"width": 390, "height": 844}


@pytest.mark.browser
def test_pages_fit_a_phone_screen(
    world: World, tournament_id: int, live_server: LiveServer, browser: Any
) -> None:
    """On a phone nothing widens the page: wide tables scroll inside themselves."""
    from tests.web.site.conftest import PASSWORD

    page = browser.new_page(viewport=PHONE)
    page.goto(live_server.url + "/login")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("main form button[type=submit]")
    wide = {}
    for url in page_urls(world, tournament_id):
        if url.split("?")[0] not in ADMIN_ONLY:
            # Let each page finish loading (the viewer's modules) before the next: a load cut
            # short leaves the test server's open file to the garbage collector.
            page.goto(live_server.url + url, wait_until="networkidle")
            width = page.evaluate("document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                wide[url] = width
    page.close()
    assert not wide, wide


def test_ladder_marks_the_visitors_own_bots(client: FlaskClient, world: World) -> None:
    login(client, "alice")
    html = client.get(f"/ladders/{world.ladder.slug}").get_data(as_text=True)
    mine = [row for row in html.split("<tr")[1:] if 'class="active mine"' in row]
    assert len(mine) == 1 and "alice-bot" in mine[0]


def _pending_bot(world: World, name: str, statuses: list[Any]) -> Any:
    """A bot of alice's with one version per status given, the last one newest."""
    from tests.web.site.conftest import _bot
    from web.extensions import db
    from web.models import BotVersion

    bot, first = _bot(world.owner, name)
    first.status = statuses[0]
    for number, status in enumerate(statuses[1:], start=2):
        db.session.add(BotVersion(bot_id=bot.id, number=number, sha256=first.sha256, status=status))
    db.session.commit()
    return bot


def badge(html: str) -> str:
    found = re.search(r'<span class="status ([\w-]+)" id="bot-state">([^<]*)</span>', html)
    assert found, "the bot page has a state badge"
    assert found.group(1) == found.group(2).replace(" ", "-")
    return found.group(2)


@pytest.mark.parametrize(
    ("status", "word", "step"),
    [
        ("uploaded", "queued", "waits in the queue"),
        ("building", "building", "being built"),
        ("validating", "validating", "validation match"),
    ],
)
def test_a_bot_not_validated_yet_is_not_shown_active(
    client: FlaskClient, world: World, status: str, word: str, step: str
) -> None:
    from web.models import VersionStatus

    bot = _pending_bot(world, "fresh-bot", [VersionStatus(status)])
    login(client, "alice")
    html = client.get(f"/bots/{bot.id}").get_data(as_text=True)
    assert badge(html) == word
    assert 'id="version-progress"' in html and step in html, "it says what happens now"
    assert "js/version-progress.js" in html, "and follows the version"
    home = client.get("/").get_data(as_text=True)
    mine = home.split("Your bots:")[1].split("</p>")[0]
    entry = mine.split("fresh-bot</a>")[1].split("</span>")[0]
    assert f">{word}" in entry and "active" not in entry


def test_an_active_bot_with_a_new_version_on_its_way_says_both(
    client: FlaskClient, world: World
) -> None:
    from web.models import VersionStatus

    bot = _pending_bot(world, "two-bot", [VersionStatus.ACTIVE, VersionStatus.BUILDING])
    html = client.get(f"/bots/{bot.id}").get_data(as_text=True)
    assert badge(html) == "active"
    assert "<b>Version 2</b>" in html and "being built" in html
    rejected = _pending_bot(world, "bad-bot", [VersionStatus.REJECTED])
    html = client.get(f"/bots/{rejected.id}").get_data(as_text=True)
    assert badge(html) == "rejected" and 'id="version-progress"' not in html
    settled = client.get(f"/bots/{world.bots[0].id}").get_data(as_text=True)
    assert badge(settled) == "active" and "version-progress" not in settled


def test_the_home_page_counts_running_matches_and_their_workers(
    client: FlaskClient, world: World
) -> None:
    from web.extensions import db

    world.running.worker = "worker-a"
    db.session.commit()
    login(client, "alice")
    html = client.get("/").get_data(as_text=True)
    line = html.split('aria-label="Match queue"')[1].split("</section>")[0]
    assert "<b>1</b> match playing now on <b>1</b> worker<" in line
    world.running.worker = None
    db.session.commit()


def test_the_site_has_an_icon(client: FlaskClient, world: World) -> None:
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200 and answer.mimetype == "image/vnd.microsoft.icon"
    assert answer.get_data()[:4] == b"\x00\x00\x01\x00", "an ICO file"
    answer.close()
    assert 'rel="icon" href="/favicon.ico"' in client.get("/").get_data(as_text=True)


def test_a_new_token_is_shown_once_after_a_redirect(client: FlaskClient, world: World) -> None:
    from tests.web.site.conftest import csrf_from

    login(client, "alice")
    page = client.get("/account").get_data(as_text=True)
    answer = client.post("/account/tokens", data={"name": "laptop", "csrf_token": csrf_from(page)})
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/account")
    shown = client.get("/account")
    assert shown.headers["Cache-Control"] == "no-store"
    token = re.search(r'<code class="token">([^<]+)</code>', shown.get_data(as_text=True))
    assert token, "the new token is on the page the browser lands on"
    me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token.group(1)}"})
    assert me.get_json()["data"]["username"] == "alice"
    again = client.get("/account").get_data(as_text=True)
    assert token.group(1) not in again and "laptop" in again, "shown once, listed after"


def test_the_tournament_table_says_how_points_are_counted(
    client: FlaskClient, world: World, tournament_id: int
) -> None:
    html = client.get(f"/tournaments/{tournament_id}").get_data(as_text=True)
    assert "<abbr title=" in html and "players − place" in html
    assert "1st 1, 2nd 0" in html, "a two-player table's points per place"
