"""Accounts under attack, against the real site: open redirects after login, session cookies
kept past logout or a password change, fixation, telling names apart by timing, weak passwords,
guessing passwords, other people's tokens, and the headers and cookie flags every answer needs."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.web.site.conftest import PASSWORD, World, csrf_from, login

GOOD_PASSWORD = "purple giraffe under seven bridges"

OPEN_REDIRECTS = [
    "/\t/evil.example",
    "/%09/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "//evil.example",
    "///evil.example",
    "////evil.example/a",
    "/\\evil.example",
    "\\\\evil.example",
    "/%5Cevil.example",
    "/%2F/evil.example",
    "/%252F%252Fevil.example",
    "%2F%2Fevil.example",
    "https://evil.example/",
    "http:evil.example",
    "//evil.example@self/",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " /\x0b/evil.example",
    "data:text/html,<script>alert(1)</script>",
    "evil.example",
    "/" + "a" * 5000,
]


def post_login(
    client: FlaskClient, query: str, username: str = "alice", password: str = PASSWORD
) -> Any:
    token = csrf_from(client.get("/login").get_data(as_text=True))
    form = {"username": username, "password": password, "csrf_token": token}
    return client.post(f"/login{query}", data=form)


@pytest.mark.parametrize("target", OPEN_REDIRECTS)
def test_login_never_redirects_off_the_site(app: Flask, world: World, target: str) -> None:
    client = app.test_client()
    answer = post_login(client, "?next=" + quote(target, safe=""))
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/", (target, answer.headers["Location"])


def test_login_keeps_a_path_on_this_site(app: Flask, world: World) -> None:
    for target in ("/account", f"/bots/{world.bots[0].id}?tab=versions#top", "/ladders"):
        answer = post_login(app.test_client(), "?next=" + quote(target, safe=""))
        assert answer.headers["Location"] == target


def test_login_page_passes_next_through_the_form(client: FlaskClient, world: World) -> None:
    """Visiting a page logged out sends to the login form, which posts back with ``next``."""
    first = client.get("/account")
    assert first.status_code == 302 and "next=" in first.location
    answer = post_login(client, first.location[first.location.index("?") :])
    assert answer.headers["Location"] == "/account"


# --- sessions ---------------------------------------------------------------------------------


def session_cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie("session")
    assert cookie is not None, "no session cookie"
    return cookie.value


def with_cookie(app: Flask, value: str) -> FlaskClient:
    """A fresh client (another machine) holding a copied session cookie."""
    thief = app.test_client()
    thief.set_cookie("session", value)
    return thief


def is_logged_in(client: FlaskClient) -> bool:
    page = client.get("/account")
    api = client.get("/api/v1/me")
    assert (page.status_code == 200) == (api.status_code == 200), "page and API disagree"
    return page.status_code == 200


def post_action(client: FlaskClient, url: str, fields: dict[str, str] | None = None) -> Any:
    token = csrf_from(client.get("/account").get_data(as_text=True))
    return client.post(url, data={**(fields or {}), "csrf_token": token})


def test_a_cookie_saved_before_logout_is_dead_after_it(
    app: Flask, client: FlaskClient, world: World
) -> None:
    login(client, "alice")
    saved = session_cookie(client)
    assert is_logged_in(with_cookie(app, saved))
    assert post_action(client, "/logout").status_code == 302
    assert not is_logged_in(client)
    thief = with_cookie(app, saved)
    assert thief.get("/account").status_code == 302
    assert thief.get("/api/v1/me").status_code == 401


def test_a_new_password_ends_every_other_session(
    app: Flask, client: FlaskClient, world: World
) -> None:
    login(client, "alice")
    laptop = app.test_client()
    login(laptop, "alice")
    stolen = session_cookie(laptop)
    form = {"current": PASSWORD, "password": GOOD_PASSWORD, "confirm": GOOD_PASSWORD}
    answer = post_action(client, "/account/password", form)
    assert answer.status_code == 302, answer.get_data(as_text=True)[-600:]
    assert is_logged_in(client), "the session that changed the password goes on"
    assert not is_logged_in(laptop)
    assert not is_logged_in(with_cookie(app, stolen))
    assert post_login(app.test_client(), "").status_code == 200, "the old password is refused"
    assert post_login(app.test_client(), "", password=GOOD_PASSWORD).status_code == 302


def test_changing_the_password_needs_the_current_one_and_a_good_new_one(
    client: FlaskClient, world: World
) -> None:
    login(client, "alice")
    cases = [
        ({"current": "not it at all", "password": GOOD_PASSWORD}, "not your current password"),
        ({"current": PASSWORD, "password": "password"}, "at least 12 characters"),
        ({"current": PASSWORD, "password": "alice-forever-and-ever"}, "user name"),
    ]
    for fields, message in cases:
        answer = post_action(client, "/account/password", {**fields, "confirm": fields["password"]})
        assert answer.status_code == 422
        assert message in answer.get_data(as_text=True)
    assert post_login(client.application.test_client(), "").status_code == 302, "unchanged"


@pytest.mark.parametrize("revoke_tokens", [False, True])
def test_log_out_everywhere(
    app: Flask, client: FlaskClient, world: World, revoke_tokens: bool
) -> None:
    login(client, "alice")
    phone = app.test_client()
    login(phone, "alice")
    stolen = session_cookie(phone)
    bystander = app.test_client()
    login(bystander, "mallory")
    fields = {"revoke_tokens": "y"} if revoke_tokens else {}
    answer = post_action(client, "/account/logout-everywhere", fields)
    assert answer.status_code == 302
    for gone in (client, phone, with_cookie(app, stolen)):
        assert not is_logged_in(gone)
    assert is_logged_in(bystander), "another account's sessions go on"
    token = {"Authorization": f"Bearer {world.tokens['alice']}"}
    assert client.get("/api/v1/me", headers=token).status_code == (401 if revoke_tokens else 200)
    other = {"Authorization": f"Bearer {world.tokens['mallory']}"}
    assert client.get("/api/v1/me", headers=other).status_code == 200


def test_the_account_page_offers_password_and_logout_everywhere(
    client: FlaskClient, world: World
) -> None:
    login(client, "alice")
    page = client.get("/account")
    body = page.get_data(as_text=True)
    assert 'action="/account/password"' in body and 'action="/account/logout-everywhere"' in body
    assert "no-store" in page.headers["Cache-Control"]


def test_logging_in_starts_a_fresh_session(app: Flask, world: World) -> None:
    """Session fixation: a cookie handed out before the login never becomes logged in."""
    victim = app.test_client()
    victim.get("/login")
    planted = session_cookie(victim)
    login(victim, "alice")
    assert session_cookie(victim) != planted
    assert not is_logged_in(with_cookie(app, planted))
    again = app.test_client()
    login(again, "alice")
    assert session_cookie(again) != session_cookie(victim)


def test_a_session_ends_after_its_lifetime(app: Flask, client: FlaskClient, world: World) -> None:
    login(client, "alice")
    assert is_logged_in(client)
    app.config["SESSION_MAX_AGE"] = 0
    assert not is_logged_in(client)


def test_a_forged_or_foreign_session_key_is_refused(app: Flask, world: World) -> None:
    """A session naming alice's id with mallory's session key is nobody's session."""
    mallory = app.test_client()
    login(mallory, "mallory")
    with mallory.session_transaction() as state:
        state["_user_id"] = str(world.owner.id)
    assert not is_logged_in(mallory)


# --- passwords ------------------------------------------------------------------------------


def register(client: FlaskClient, name: str, password: str) -> Any:
    token = csrf_from(client.get("/register").get_data(as_text=True))
    form = {"username": name, "password": password, "confirm": password, "csrf_token": token}
    return client.post("/register", data=form)


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("password", "at least 12 characters"),
        ("short1!", "at least 12 characters"),
        ("password1234", "most common"),
        ("Password2024!", "most common"),
        ("qwertyuiop123", "most common"),
        ("iloveyouiloveyou", "most common"),
        ("aaaaaaaaaaaaaaaa", "most common"),
        ("123456789012", "most common"),
        ("newcomer", "at least 12 characters"),
        ("newcomer-is-great", "user name"),
        ("NEWCOMER2024bridges", "user name"),
    ],
)
def test_weak_passwords_are_refused_with_a_reason(
    client: FlaskClient, world: World, password: str, message: str
) -> None:
    answer = register(client, "newcomer", password)
    assert answer.status_code == 422
    assert message in answer.get_data(as_text=True)
    from web.extensions import db
    from web.models import User

    assert db.session.query(User).filter_by(username="newcomer").count() == 0


def test_a_good_password_registers_and_logs_in(app: Flask, client: FlaskClient) -> None:
    assert register(client, "newcomer", GOOD_PASSWORD).status_code == 302
    assert is_logged_in(client)
    assert client.get_cookie("known_device") is not None, "the browser that signed up is known"
    fresh = app.test_client()
    login(fresh, "newcomer", GOOD_PASSWORD)


@pytest.mark.parametrize("name", ["alice\n", "ALICE", "Alice", "alice\r", "alice\u200b", "bob\n"])
def test_no_name_can_pass_for_another(app: Flask, world: World, name: str) -> None:
    """A name with a trailing newline (which a page shows as the same name), a zero-width
    character, or another case of a taken name is refused: nobody can pass for alice."""
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import User

    answer = register(app.test_client(), name, GOOD_PASSWORD)
    assert answer.status_code != 302
    core = name.strip().replace("\u200b", "").lower()
    count = select(func.count()).where(func.lower(User.username).like(core + "%"))
    assert db.session.scalar(count) == (1 if core == "alice" else 0)


def test_the_admin_command_refuses_a_name_that_passes_for_another(app: Flask, world: World) -> None:
    runner = app.test_cli_runner()
    for name in ("alice\n", "Alice"):
        answer = runner.invoke(args=["user", "create", name, "--password", GOOD_PASSWORD])
        assert answer.exit_code != 0, answer.output


def test_the_common_password_list_is_shipped_and_large() -> None:
    from web.services.users import _common_passwords

    common = _common_passwords()
    assert len(common) > 30_000
    assert {"password", "123456", "qwerty", "iloveyou"} <= common


# --- login work and guessing ------------------------------------------------------------------


class HashSpy:
    """Counts password-hash checks and the algorithm of each (the real check still runs)."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.methods: list[str] = []

    def __call__(self, pwhash: str, password: str) -> bool:
        self.methods.append(pwhash.split("$", 1)[0].split(":", 1)[0])
        return bool(self.real(pwhash, password))


def test_unknown_names_cost_the_same_hash_work(
    client: FlaskClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Known or unknown, every login attempt checks one hash made the way the site makes them."""
    from werkzeug.security import generate_password_hash

    from web.extensions import db
    from web.services import users

    world.owner.password_hash = generate_password_hash(PASSWORD)
    house = users.create_user("house-account", house=True)
    db.session.commit()
    spy = HashSpy(users.check_password_hash)
    monkeypatch.setattr(users, "check_password_hash", spy)
    for name in ("alice", "nobody-by-this-name", house.username):
        before = len(spy.methods)
        answer = post_login(client, "", username=name, password="a wrong guess")
        assert answer.status_code == 200
        assert spy.methods[before:] == ["scrypt"], name


def test_guessing_is_rate_limited_and_the_right_password_waits_too(
    app: Flask, world: World
) -> None:
    app.config["AUTH_RATE_LIMIT"] = "3 per minute"
    client = app.test_client()
    codes = [post_login(client, "", password=f"guess {i}").status_code for i in range(3)]
    assert codes == [200, 200, 200]
    assert post_login(client, "").status_code == 429, "the right password waits as well"
    assert not is_logged_in(client)


def proxied_app(app: Flask, **settings: Any) -> Flask:
    from web import create_app

    config = {k: v for k, v in app.config.items() if k.isupper()}
    return create_app({**config, "TRUSTED_PROXIES": 1, **settings})


def test_a_stranger_guessing_slows_only_themselves(app: Flask, world: World) -> None:
    """Failed logins count per account *and* address (behind a trusted proxy, the client's): a
    stranger's wrong passwords from one address hold back that address alone, the owner still
    signs in from their own, and the stranger's window reopens."""
    site = proxied_app(app, AUTH_RATE_LIMIT="1000 per minute")
    client = site.test_client()

    def attempt(address: str, name: str = "alice", password: str = "wrong guess") -> int:
        token = csrf_from(client.get("/login").get_data(as_text=True))
        form = {"username": name, "password": password, "csrf_token": token}
        headers = {"X-Forwarded-For": address}
        return client.post("/login", data=form, headers=headers).status_code

    stranger, owner = "198.51.100.7", "203.0.113.9"
    try:
        assert [attempt(stranger) for _ in range(30)] == [200] * 30
        assert attempt(stranger) == 429, "the stranger is slowed"
        assert attempt(stranger, name=" ALICE ", password=PASSWORD) == 429, "even guessing right"
        assert attempt(owner, password="a typo") == 200
        assert attempt(owner, password=PASSWORD) == 302, "the owner signs in from elsewhere"
        assert attempt(stranger, name="mallory", password=PASSWORD) == 302, "other accounts open"
    finally:
        from web.extensions import db

        with site.app_context():
            db.session.remove()
            db.engine.dispose()


def test_failed_logins_of_one_address_wait_out_their_window(app: Flask, world: World) -> None:
    site = proxied_app(
        app, AUTH_RATE_LIMIT="100 per minute", LOGIN_ACCOUNT_RATE_LIMIT="3 per 5 seconds"
    )
    client = site.test_client()

    def attempt(password: str = "wrong guess") -> Any:
        token = csrf_from(client.get("/login").get_data(as_text=True))
        form = {"username": "alice", "password": password, "csrf_token": token}
        return client.post("/login", data=form, headers={"X-Forwarded-For": "198.51.100.8"})

    try:
        assert [attempt().status_code for _ in range(3)] == [200, 200, 200]
        assert attempt(PASSWORD).status_code == 429
        deadline = time.monotonic() + 60
        while (answer := attempt(PASSWORD)).status_code == 429:
            assert time.monotonic() < deadline, "the address stayed locked out"
            assert int(answer.headers["Retry-After"]) <= 5
            time.sleep(0.5)
        assert answer.status_code == 302
    finally:
        from web.extensions import db

        with site.app_context():
            db.session.remove()
            db.engine.dispose()


def test_one_account_guessed_from_many_addresses_is_slowed_but_its_owner_signs_in(
    app: Flask, world: World
) -> None:
    """Failed logins also count per account from any address (a wider limit): past it even the
    right password from a new address waits, while a browser that signed in to the account
    before (its device cookie) still signs in. A forged cookie, one of another account or one
    from before a password change does not count."""
    site = proxied_app(
        app, AUTH_RATE_LIMIT="1000 per minute", LOGIN_ACCOUNT_WIDE_RATE_LIMIT="6 per hour"
    )

    def attempt(
        client: FlaskClient, address: str, name: str = "alice", password: str = "wrong guess"
    ) -> int:
        token = csrf_from(client.get("/login").get_data(as_text=True))
        form = {"username": name, "password": password, "csrf_token": token}
        headers = {"X-Forwarded-For": address}
        return client.post("/login", data=form, headers=headers).status_code

    owner, other = site.test_client(), site.test_client()
    try:
        assert attempt(owner, "203.0.113.9", password=PASSWORD) == 302
        device = owner.get_cookie("known_device")
        assert device is not None and device.http_only and device.same_site == "Lax"
        assert attempt(other, "203.0.113.10", name="mallory", password=PASSWORD) == 302
        stranger = site.test_client()
        codes = [attempt(stranger, f"198.51.100.{i}") for i in range(6)]
        assert codes == [200] * 6, "each address is far from its own limit"
        assert attempt(stranger, "198.51.100.99", name=" Alice ") == 429, "the account is slowed"
        assert attempt(site.test_client(), "192.0.2.1", password=PASSWORD) == 429, "a new browser"
        assert attempt(stranger, "198.51.100.7", name="mallory", password=PASSWORD) == 302

        assert attempt(other, "203.0.113.10", password=PASSWORD) == 429, "mallory's cookie"
        forged = site.test_client()
        forged.set_cookie("known_device", device.value[:-2] + "xx")
        assert attempt(forged, "192.0.2.2", password=PASSWORD) == 429, "a forged cookie"
        from itsdangerous import URLSafeTimedSerializer

        wrong_key = URLSafeTimedSerializer("not the secret key", salt="known-device")
        forged.set_cookie("known_device", wrong_key.dumps([world.owner.id, "0" * 16]))
        assert attempt(forged, "192.0.2.2", password=PASSWORD) == 429, "signed with another key"

        copied = site.test_client()
        copied.set_cookie("known_device", device.value)
        assert attempt(owner, "203.0.113.9", password="a typo") == 200, "the owner may fail too"
        assert attempt(owner, "203.0.113.9", password=PASSWORD) == 302, "the owner signs in"
        fields = {"current": PASSWORD, "password": GOOD_PASSWORD, "confirm": GOOD_PASSWORD}
        assert post_action(owner, "/account/password", fields).status_code == 302
        assert attempt(copied, "192.0.2.3", password=GOOD_PASSWORD) == 429, "the old password's"
        assert attempt(owner, "203.0.113.9", password=GOOD_PASSWORD) == 302, "renewed on change"
    finally:
        from web.extensions import db

        with site.app_context():
            db.session.remove()
            db.engine.dispose()


def test_registering_and_token_creation_are_rate_limited(app: Flask, world: World) -> None:
    app.config["AUTH_RATE_LIMIT"] = "2 per minute"
    client = app.test_client()
    codes = [register(client, f"flood{i}", "x").status_code for i in range(3)]
    assert codes[-1] == 429
    login(client, "alice")
    token = csrf_from(client.get("/account").get_data(as_text=True))
    made = [
        client.post("/account/tokens", data={"name": f"t{i}", "csrf_token": token}).status_code
        for i in range(3)
    ]
    assert made == [303, 303, 429]  # each token shown on the page it redirects to


# --- authorization --------------------------------------------------------------------------


def test_nobody_revokes_another_users_token(client: FlaskClient, world: World) -> None:
    from web.extensions import db
    from web.models import ApiToken

    theirs = db.session.query(ApiToken).filter_by(user_id=world.owner.id).one()
    login(client, "mallory")
    answer = post_action(client, f"/account/tokens/{theirs.id}/revoke")
    assert answer.status_code == 302
    token = {"Authorization": f"Bearer {world.tokens['alice']}"}
    assert client.get("/api/v1/me", headers=token).status_code == 200
    page = client.get("/account").get_data(as_text=True)
    assert theirs.prefix not in page, "the account page lists only one's own tokens"


def test_nobody_acts_on_another_users_bot(client: FlaskClient, world: World) -> None:
    login(client, "mallory")
    token = csrf_from(client.get("/account").get_data(as_text=True))
    bot = world.bots[0].id
    assert client.post(f"/bots/{bot}/resume", data={"csrf_token": token}).status_code == 404
    version = world.versions[0].id
    assert client.get(f"/versions/{version}/archive").status_code == 404
    api = client.get(f"/api/v1/versions/{version}").get_data(as_text=True)
    assert "SECRET-BUILD-LOG" not in api


def test_tokens_are_stored_hashed(world: World) -> None:
    from web.extensions import db
    from web.models import ApiToken, UserSession

    stored = " ".join(t.token_hash + t.prefix for t in db.session.query(ApiToken).all())
    assert all(token not in stored for token in world.tokens.values())
    assert all(len(s.key_hash) == 64 for s in db.session.query(UserSession).all())


# --- headers and cookies --------------------------------------------------------------------


def csp(answer: Any) -> dict[str, str]:
    policy = answer.headers["Content-Security-Policy"]
    return {p.split()[0]: p.partition(" ")[2] for p in re.split(r";\s*", policy) if p}


@pytest.mark.parametrize("url", ["/", "/login", "/api/v1/status", "/no-such-page"])
def test_every_answer_carries_the_security_headers(client: FlaskClient, url: str) -> None:
    answer = client.get(url)
    policy = csp(answer)
    assert policy["base-uri"] == "'none'"
    assert policy["form-action"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["object-src"] == "'none'"
    assert "unsafe-inline" not in policy["script-src"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Referrer-Policy"] == "same-origin"
    assert "camera=()" in answer.headers["Permissions-Policy"]
    assert "Strict-Transport-Security" not in answer.headers, "no HSTS over plain HTTP"


def test_cookies_are_http_only_same_site_and_secure_when_configured(
    app: Flask, world: World
) -> None:
    client = app.test_client()
    token = csrf_from(client.get("/login").get_data(as_text=True))
    form = {"username": "alice", "password": PASSWORD, "csrf_token": token}
    cookie = client.post("/login", data=form).headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    app.config["SESSION_COOKIE_SECURE"] = True
    secure = app.test_client()
    token = csrf_from(secure.get("/login", base_url="https://localhost").get_data(as_text=True))
    form["csrf_token"] = token
    referer = {"Referer": "https://localhost/login"}  # checked on HTTPS (CSRF, strict mode)
    answer = secure.post("/login", data=form, base_url="https://localhost", headers=referer)
    assert answer.status_code == 302
    assert "Secure" in answer.headers["Set-Cookie"]
    assert answer.headers["Strict-Transport-Security"].startswith("max-age=")


def test_error_pages_leak_nothing(client: FlaskClient, world: World) -> None:
    for url in ("/bots/999999", "/api/v1/bots/999999", "/matches/x", "/api/v1/matches/x"):
        body = client.get(url).get_data(as_text=True)
        assert "Traceback" not in body and "/work/" not in body and "sqlalchemy" not in body


def test_the_admin_command_refuses_weak_passwords_too(app: Flask) -> None:
    runner = app.test_cli_runner()
    weak = runner.invoke(args=["user", "create", "carol", "--password", "password1234"])
    assert weak.exit_code != 0 and "most common" in weak.output
    good = runner.invoke(args=["user", "create", "carol", "--password", GOOD_PASSWORD])
    assert good.exit_code == 0, good.output
    login(app.test_client(), "carol", GOOD_PASSWORD)


def test_the_browser_fixture_site_uses_the_same_policy() -> None:
    from tests.web.browser.fixture_site import CSP
    from web.views import CONTENT_SECURITY_POLICY

    assert CSP == CONTENT_SECURITY_POLICY
