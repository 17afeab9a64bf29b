"""What the site must never do: accept a form without its CSRF token, show an owner's logs,
sources or debug text to anyone else, serve a hidden card of a running match, run script from a
bot's name or debug text, or let a client hammer the login, upload or API endpoints."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import orjson
import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.web.conftest import base_config
from tests.web.site.conftest import PASSWORD, World, csrf_from, login

SCRIPT = "<script>alert(1)</script>"


def forms(world: World) -> list[tuple[str, dict[str, str]]]:
    """Every form of the site, as (action, fields without the token)."""
    return [
        ("/login", {"username": "alice", "password": PASSWORD}),
        ("/register", {"username": "eve", "password": PASSWORD, "confirm": PASSWORD}),
        ("/logout", {}),
        ("/account/tokens", {"name": "x"}),
        ("/account/tokens/1/revoke", {}),
        ("/account/password", {"current": PASSWORD, "password": "x" * 20, "confirm": "x" * 20}),
        ("/account/logout-everywhere", {"revoke_tokens": "y"}),
        ("/upload", {"manifest": ""}),
        (f"/bots/{world.bots[0].id}/resume", {}),
        (f"/admin/bots/{world.bots[1].id}/pause", {}),
        (f"/admin/matches/{world.running.id}/requeue", {}),
        ("/admin/tournaments", {"name": "t", "ladder": world.ladder.slug, "tables": "1"}),
    ]


def test_every_form_refuses_a_post_without_its_csrf_token(
    client: FlaskClient, world: World
) -> None:
    login(client, "root-admin")  # the admin may use every form
    for action, fields in forms(world):
        answer = client.post(action, data=fields)
        assert answer.status_code == 400, action
        assert "CSRF" in answer.get_data(as_text=True), action
    from web.extensions import db
    from web.models import Bot

    db.session.expire_all()
    assert str(db.session.get(Bot, world.bots[1].id).status) == "active", "nothing was paused"


def test_a_form_with_its_token_works(client: FlaskClient, world: World) -> None:
    login(client, "root-admin")
    page = client.get(f"/bots/{world.bots[1].id}").get_data(as_text=True)
    answer = client.post(
        f"/admin/bots/{world.bots[1].id}/pause", data={"csrf_token": csrf_from(page)}
    )
    assert answer.status_code == 302
    assert "paused by an administrator" in client.get(answer.location).get_data(as_text=True)


def test_admin_actions_are_hidden_from_others(client: FlaskClient, world: World) -> None:
    login(client, "alice")
    page = client.get(f"/bots/{world.bots[1].id}").get_data(as_text=True)
    token = csrf_from(page)
    for action in (
        f"/admin/bots/{world.bots[1].id}/pause",
        f"/admin/matches/{world.running.id}/requeue",
    ):
        assert client.post(action, data={"csrf_token": token}).status_code == 404
    assert "Pause (admin)" not in page


def test_logs_and_sources_are_for_their_owner(client: FlaskClient, world: World) -> None:
    bot_id, version_id = world.bots[0].id, world.versions[0].id
    for who in (None, "mallory"):
        viewer = client.application.test_client()
        if who:
            login(viewer, who)
        page = viewer.get(f"/bots/{bot_id}").get_data(as_text=True)
        api = viewer.get(f"/api/v1/bots/{bot_id}").get_data(as_text=True)
        version = viewer.get(f"/api/v1/versions/{version_id}").get_data(as_text=True)
        for body in (page, api, version):
            assert "SECRET-BUILD-LOG" not in body and "SECRET-VALIDATION-LOG" not in body
        archive = viewer.get(f"/versions/{version_id}/archive")
        assert archive.status_code == (404 if who else 302)
        assert b"SECRET-SOURCE" not in archive.data
    login(client, "alice")
    with client.get(f"/versions/{version_id}/archive") as archive:
        assert archive.status_code == 200 and archive.data == b"SECRET-SOURCE of alice-bot"
    assert "SECRET-BUILD-LOG of alice-bot" in client.get(f"/bots/{bot_id}").get_data(as_text=True)
    token = {"Authorization": f"Bearer {world.tokens['alice']}"}
    version = client.get(f"/api/v1/versions/{version_id}", headers=token).get_json()["data"]
    assert version["validation_log"] == "SECRET-VALIDATION-LOG of alice-bot"


def test_debug_text_goes_to_the_seat_owner_only(client: FlaskClient, world: World) -> None:
    url = f"/api/v1/matches/{world.finished.id}/replay"
    anonymous = client.get(url).get_data(as_text=True)
    assert "DEBUG-OF-SEAT" not in anonymous and "STDERR-OF-SEAT" not in anonymous
    token = {"Authorization": f"Bearer {world.tokens['alice']}"}
    mine = client.get(url, headers=token).get_data(as_text=True)
    assert "DEBUG-OF-SEAT-0" in mine and "STDERR-OF-SEAT-0" in mine
    assert "DEBUG-OF-SEAT-1" not in mine and "STDERR-OF-SEAT-1" not in mine
    frames = client.get(f"{url[:-7]}/frames?seat=1", headers=token).get_data(as_text=True)
    assert "DEBUG-OF-SEAT-1" not in frames


def running_urls(world: World) -> list[str]:
    m = world.running.id
    return [
        f"/api/v1/matches/{m}/replay",
        f"/api/v1/matches/{m}/frames",
        f"/api/v1/matches/{m}/frames?seat=0",
        f"/api/v1/matches/{m}/frames?seat=1",
        f"/api/v1/matches/{m}",
        "/api/v1/matches",
        "/api/v1/matches?status=running",
        f"/matches/{m}",
        "/matches",
        "/",
        f"/bots/{world.bots[0].id}",
        f"/bots/{world.bots[1].id}",
        f"/ladders/{world.ladder.slug}",
        f"/users/{world.other.username}",
        f"/api/v1/ladders/{world.ladder.slug}",
        f"/api/v1/bots/{world.bots[1].id}",
        f"/api/v1/bots/{world.bots[1].id}/ratings",
        f"/api/v1/versions/{world.versions[1].id}",
        "/api/v1/bots",
        "/api/v1/status",
        "/api/v1/games",
    ]


def leaked_cards(body: str, cards: set[str]) -> set[str]:
    """Hidden cards found in a body, as JSON strings or as words of a page."""
    found = {c for c in cards if f'"{c}"' in body}
    found |= {c for c in cards if re.search(rf"(?<![A-Za-z0-9]){c}(?![A-Za-z0-9])", body)}
    return found


@pytest.mark.parametrize("who", [None, "alice", "root-admin"])
def test_no_hidden_card_of_a_running_match_is_served(
    client: FlaskClient, world: World, who: str | None
) -> None:
    """Seat 1 is mallory's: no onlooker, not alice (seat 0), not even an admin sees its hand."""
    from tests.web.site.conftest import RUNNING_SEED

    headers = {}
    if who is not None:
        login(client, who)
        headers = {"Authorization": f"Bearer {world.tokens[who]}"}
    cards = world.hidden
    for url in running_urls(world):
        answer = client.get(url, headers=headers)
        body = answer.get_data().decode("utf-8", "replace")  # the favicon is binary
        assert answer.status_code in (200, 403), (url, answer.status_code)
        assert not leaked_cards(body, cards), (url, leaked_cards(body, cards))
        assert str(RUNNING_SEED) not in body, f"{url} gives away the seed"


def test_a_seat_of_a_running_match_is_only_for_its_owner(client: FlaskClient, world: World) -> None:
    url = f"/api/v1/matches/{world.running.id}/frames?seat="
    assert client.get(url + "1").status_code == 403
    alice = {"Authorization": f"Bearer {world.tokens['alice']}"}
    assert client.get(url + "1", headers=alice).status_code == 403
    own = client.get(url + "0", headers=alice)
    assert own.status_code == 200
    frames = own.get_json()["data"]["frames"]
    assert frames and all("seat" in f and "spectator" not in f for f in frames)
    mallory = {"Authorization": f"Bearer {world.tokens['mallory']}"}
    theirs = client.get(url + "1", headers=mallory).get_data(as_text=True)
    assert leaked_cards(theirs, world.hidden), "mallory sees her own hand"


def test_script_in_names_and_debug_text_is_escaped(client: FlaskClient, world: World) -> None:
    from web.extensions import db

    world.bots[1].name = SCRIPT
    db.session.commit()
    login(client, "mallory")
    for url in (f"/bots/{world.bots[1].id}", f"/ladders/{world.ladder.slug}", "/",
                f"/matches/{world.finished.id}", "/matches", "/users/mallory"):  # fmt: skip
        body = client.get(url).get_data(as_text=True)
        assert SCRIPT not in body, url
        assert "&lt;script&gt;" in body, url
    seats = client.get(f"/matches/{world.finished.id}").get_data(as_text=True)
    attr = re.search(r"data-seats='([^']*)'", seats)
    assert attr and "<" not in attr.group(1)


def test_debug_text_with_script_stays_json(client: FlaskClient, world: World) -> None:
    from web.storage import get_storage

    storage, key = get_storage(), world.finished.replay_path
    doc = orjson.loads(storage.read(key))
    first = next(i for i, step in enumerate(doc["steps"]) if step["seat"] == 0)
    doc["steps"][first]["debug"] = SCRIPT
    storage.write(key, orjson.dumps(doc))
    from web.api import replays

    replays.forget()
    token = {"Authorization": f"Bearer {world.tokens['alice']}"}
    answer = client.get(f"/api/v1/matches/{world.finished.id}/replay", headers=token)
    assert answer.content_type == "application/json"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.get_json()["steps"][first]["debug"] == SCRIPT


def test_login_is_rate_limited(app: Flask, world: World) -> None:
    app.config["AUTH_RATE_LIMIT"] = "3 per minute"
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = csrf_from(page)
    codes = [
        client.post(
            "/login", data={"username": "alice", "password": "wrong", "csrf_token": token}
        ).status_code
        for _ in range(5)
    ]
    assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]


def test_api_is_rate_limited_with_a_json_error(app: Flask, world: World) -> None:
    client = app.test_client()
    app.config["API_RATE_LIMIT"] = "600 per minute"
    from web.extensions import limiter

    limiter.reset()
    answers = [client.get("/api/v1/ladders") for _ in range(3)]
    assert all(a.status_code == 200 for a in answers)
    app.config["UPLOAD_REFUSED_RATE_LIMIT"] = "2 per minute"
    headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
    codes = []
    for _ in range(3):
        data = {"file": (io.BytesIO(b"not an archive"), "bot.py")}
        codes.append(client.post("/api/v1/uploads", data=data, headers=headers).status_code)
    assert codes == [422, 422, 429]
    last = client.post("/api/v1/uploads", data={"file": (io.BytesIO(b"x"), "b")}, headers=headers)
    assert last.get_json()["error"]["status"] == 429


def test_upload_needs_a_token_not_a_cookie(client: FlaskClient, world: World) -> None:
    login(client, "alice")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "bot.toml",
            'name = "x"\ngames = ["svoi-kozyri"]\nlanguage = "python"\nrun = ["python3", "b.py"]\n',
        )
    answer = client.post("/api/v1/uploads", data={"file": (io.BytesIO(buffer.getvalue()), "b.zip")})
    assert answer.status_code == 401
    assert answer.get_json()["error"]["code"] == "unauthorized"


def test_revoked_tokens_stop_working(client: FlaskClient, world: World) -> None:
    headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
    assert client.get("/api/v1/me", headers=headers).get_json()["data"]["username"] == "alice"
    login(client, "alice")
    page = client.get("/account").get_data(as_text=True)
    revoke = re.search(r'action="(/account/tokens/\d+/revoke)"', page)
    assert revoke
    client.post(revoke.group(1), data={"csrf_token": csrf_from(page)})
    assert client.get("/api/v1/me", headers=headers).status_code == 401


def test_behind_a_proxy_each_client_has_its_own_limit(app: Flask, world: World) -> None:
    from web import create_app

    config = {k: v for k, v in app.config.items() if k.isupper()}
    proxied = create_app({**config, "TRUSTED_PROXIES": 1, "AUTH_RATE_LIMIT": "2 per minute"})
    client = proxied.test_client()
    token = csrf_from(client.get("/login").get_data(as_text=True))

    def attempt(address: str) -> int:
        form = {"username": "alice", "password": "wrong", "csrf_token": token}
        return client.post("/login", data=form, headers={"X-Forwarded-For": address}).status_code

    try:
        assert [attempt("203.0.113.1") for _ in range(3)] == [200, 200, 429]
        assert attempt("203.0.113.2") == 200, "another client behind the same proxy"
    finally:
        from web.extensions import db

        with proxied.app_context():
            db.session.remove()
            db.engine.dispose()


def test_a_match_error_shows_no_server_detail_but_to_admins(
    client: FlaskClient, world: World
) -> None:
    """A failed attempt's cause names server paths and services (storage folders, the
    broker's address): the match page says only that something went wrong, except to admins."""
    from web.extensions import db

    world.running.error = (
        "platform failure: FileNotFoundError: [Errno 2] No such file or directory: "
        "'/srv/arena-storage/bots/7/bot.toml'; not the match's fault: played again in 5 s"
    )
    db.session.commit()
    url = f"/matches/{world.running.id}"
    for who in (None, "alice", "mallory"):
        viewer = client.application.test_client()
        if who:
            login(viewer, who)
        page = viewer.get(url).get_data(as_text=True)
        assert "/srv/arena-storage" not in page and "FileNotFoundError" not in page
        assert "ran into a problem" in page
    login(client, "root-admin")
    assert "/srv/arena-storage/bots/7" in client.get(url).get_data(as_text=True)


def test_the_health_check_names_no_database_host_or_user(shared_tmp: Path) -> None:
    """Anyone may call ``/healthz``: when the database fails it says so, without the driver's
    message (host, port, database user)."""
    from web import create_app
    from web.extensions import db

    url = "postgresql+psycopg://secret-db-user@127.0.0.1:9/arena-db"
    config = base_config(shared_tmp, DATABASE_URL=url, SECRET_KEY="health", REDIS_URL="")
    config.pop("TESTING", None)
    app = create_app(config)
    with app.app_context():
        try:
            answer = app.test_client().get("/healthz")
        finally:
            db.session.remove()
            db.engine.dispose()
    assert answer.status_code == 503
    assert answer.get_json() == {"ok": False, "database": "unreachable"}


ALICE_PRIVATE = ("SOURCE of alice", "BUILD-LOG of alice", "VALIDATION-LOG of alice")
ALICE_SEAT = ("DEBUG-OF-SEAT-0", "STDERR-OF-SEAT-0")


def every_get_url(app: Flask, world: World) -> list[str]:
    """Each GET route of the site and API, with each of the world's ids for its arguments."""
    ids = {
        "bot_id": [b.id for b in world.bots],
        "version_id": [v.id for v in world.versions],
        "match_id": [world.finished.id, world.running.id],
        "username": ["alice", "mallory"],
        "seat": [0, 1],
    }
    urls = []
    for rule in app.url_map.iter_rules():
        if "GET" not in (rule.methods or set()) or rule.endpoint == "static":
            continue
        names = sorted(rule.arguments)
        if any(name not in ids for name in names):
            continue
        choices: list[dict[str, object]] = [{}]
        for name in names:
            choices = [{**c, name: value} for c in choices for value in ids[name]]
        with app.test_request_context():
            from flask import url_for

            urls += [url_for(rule.endpoint, **c) for c in choices]
    frames = [f"/api/v1/matches/{m.id}/frames" for m in (world.finished, world.running)]
    return urls + [f"{u}?seat={s}" for u in frames for s in (0, 1)]


def test_no_route_shows_another_owners_code_logs_or_seat_text(app: Flask, world: World) -> None:
    """Every GET route, with every id of the world, as anyone but alice: none of alice's
    sources, build and validation logs, or the debug and stderr text of her seat."""
    _store_seat_logs(world)
    urls = every_get_url(app, world)
    assert any("/archive" in u for u in urls) and any("/frames" in u for u in urls)
    assert any(u.endswith("/seats/0/log") for u in urls)
    assert shown_markers(app, world, urls, "alice") == {*ALICE_PRIVATE, *ALICE_SEAT}
    for who in (None, "mallory"):
        viewer = app.test_client()
        headers = {"Authorization": f"Bearer {world.tokens[who]}"} if who else {}
        if who:
            login(viewer, who)
        for url in urls:
            with viewer.get(url, headers=headers) as answer:
                body = answer.get_data().decode("utf-8", "replace")
            leaked = [m for m in (*ALICE_PRIVATE, *ALICE_SEAT) if m in body]
            assert not leaked, (who, url, leaked)


def _store_seat_logs(world: World) -> None:
    """The finished match's whole seat logs, alice's marked as her seat's text is."""
    from web.extensions import db
    from web.services import seatlogs

    match = world.finished
    sizes = seatlogs.store(match.id, ["STDERR-OF-SEAT-0 whole log\n", "mallory's log\n"])
    for seat in match.seats:
        seat.log_bytes = sizes[seat.seat]
    db.session.commit()


def shown_markers(app: Flask, world: World, urls: list[str], who: str) -> set[str]:
    """Which of alice's private markers ``who`` finds over all ``urls`` (alice: every one)."""
    viewer = app.test_client()
    login(viewer, who)
    headers = {"Authorization": f"Bearer {world.tokens[who]}"}
    found = set()
    for url in urls:
        for extra in ({}, headers):
            with viewer.get(url, headers=extra) as answer:
                body = answer.get_data().decode("utf-8", "replace")
            found |= {m for m in (*ALICE_PRIVATE, *ALICE_SEAT) if m in body}
    return found


def redirect_targets() -> list[tuple[str, int, str]]:
    """Every ``redirect(...)`` call in ``web/``: file, line and the source of its target."""
    import ast

    found = []
    for path in sorted(Path(__file__).resolve().parents[3].joinpath("web").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "redirect":
                found.append((path.name, node.lineno, ast.unparse(node.args[0])))
    return found


def test_every_redirect_goes_to_a_route_or_a_checked_path() -> None:
    """An open redirect needs a target taken from the request: every redirect of the site goes
    to ``url_for(...)``, or to ``auth.safe_next(...)`` of a request value (else a route)."""
    targets = redirect_targets()
    assert len(targets) >= 5
    for name, line, source in targets:
        plain = source.startswith("url_for(")
        checked = source.startswith("auth.safe_next(") and " or url_for(" in source
        assert plain or checked, (name, line, source)
