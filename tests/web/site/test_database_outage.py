"""While the database is unreachable every request that needs it answers 503 with
``Retry-After`` (the API's error envelope under /api, the site's error page elsewhere), never 500;
once it answers again, the same requests work at once.

The outage is real: the app reaches PostgreSQL through a TCP proxy that the test cuts (the
shared server itself keeps running).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import exc
from sqlalchemy.engine import make_url
from werkzeug.test import TestResponse

from tests.web.conftest import SAMPLES
from tests.web.site.conftest import PASSWORD, FreshClient, World, csrf_from, login
from tests.web.tcp_proxy import TcpProxy
from web import health

Request = Callable[[], TestResponse]


@pytest.fixture
def proxied(app: Flask) -> Iterator[tuple[Flask, TcpProxy]]:
    """The site's app again, reaching its database through a proxy the test can cut."""
    from web import create_app
    from web.extensions import db

    url = make_url(app.config["SQLALCHEMY_DATABASE_URI"])
    with TcpProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        through = url.set(port=proxy.port).render_as_string(hide_password=False)
        config = {k: v for k, v in app.config.items() if k.isupper()}
        served = create_app({**config, "DATABASE_URL": through, "UPLOAD_RATE_LIMIT": "99/hour"})
        served.test_client_class = FreshClient
        try:
            yield served, proxy
        finally:
            with served.app_context():
                db.engine.dispose()


def _spec_503(client: FlaskClient, path: str, method: str) -> dict[str, Any]:
    """The schema the OpenAPI document declares for a 503 of ``method path``."""
    spec = client.get("/api/v1/openapi.json").get_json()
    declared = spec["paths"][path][method]["responses"]["503"]
    if "$ref" in declared:
        declared = spec["components"]["responses"][declared["$ref"].rsplit("/", 1)[-1]]
    assert "Retry-After" in declared["headers"]
    schema = declared["content"]["application/json"]["schema"]
    return {**schema, "components": spec["components"]}


def _requests(served: Flask, world: World) -> dict[str, tuple[Request, int]]:
    """Each kind of request, with the status it answers while the database is up."""
    anonymous, alice, visitor = served.test_client(), served.test_client(), served.test_client()
    login(alice, "alice")
    upload_form = csrf_from(alice.get("/upload").get_data(as_text=True))
    account_form = csrf_from(alice.get("/account").get_data(as_text=True))
    login_form = csrf_from(visitor.get("/login").get_data(as_text=True))
    token = {"Authorization": f"Bearer {world.tokens['alice']}"}
    archive = _zipped(SAMPLES / "python" / "challenge-random")

    def site_upload() -> TestResponse:
        form = {"csrf_token": upload_form, "file": (io.BytesIO(archive), "bot.zip")}
        return alice.post("/upload", data=form, content_type="multipart/form-data")

    def api_upload() -> TestResponse:
        form = {"file": (io.BytesIO(archive), "bot.zip")}
        return anonymous.post("/api/v1/uploads", data=form, headers=token)

    def log_in() -> TestResponse:
        form = {"username": "mallory", "password": PASSWORD, "csrf_token": login_form}
        return visitor.post("/login", data=form)

    ladder = f"/ladders/{world.ladder.slug}"
    return {
        "home page, anonymous": (lambda: anonymous.get("/"), 200),
        "ladder page, logged in": (lambda: alice.get(ladder), 200),
        "API read, anonymous": (lambda: anonymous.get("/api/v1/ladders"), 200),
        "API read, by token": (lambda: anonymous.get("/api/v1/me", headers=token), 200),
        "API write (upload)": (api_upload, 201),
        "site upload": (site_upload, 302),
        "site form (new token)": (
            lambda: alice.post("/account/tokens", data={"csrf_token": account_form, "name": "x"}),
            303,
        ),
        "login": (log_in, 302),
        "health check": (lambda: anonymous.get("/healthz"), 200),
    }


def _zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.iterdir()):
            if path.is_file():
                archive.write(path, path.name)
    return buffer.getvalue()


def _unavailable(name: str, answer: TestResponse, api_schema: dict[str, Any]) -> None:
    body = answer.get_data(as_text=True)
    assert answer.status_code == 503, f"{name}: {answer.status_code} {body[-600:]}"
    if name == "health check":
        return
    # At least the outage's wait (a rate limit's window may end later: the later one is sent).
    assert int(answer.headers["Retry-After"]) >= health.RETRY_AFTER_S, name
    if answer.is_json:
        jsonschema.validate(answer.get_json(), api_schema)
        error = answer.get_json()["error"]
        assert (error["status"], error["code"]) == (503, "service_unavailable"), name
        assert "the database does not answer" in error["message"]
    else:
        assert "text/html" in answer.content_type, name
        assert "503 · Service Unavailable" in body and "the database does not answer" in body
        assert "Log in" in body, "the page is drawn without a user (loading one needs the database)"


def test_every_kind_of_request_answers_503_while_the_database_is_cut(
    proxied: tuple[Flask, TcpProxy], world: World
) -> None:
    served, proxy = proxied
    requests = _requests(served, world)
    checker = served.test_client()
    upload_503 = _spec_503(checker, "/api/v1/uploads", "post")
    assert _spec_503(checker, "/api/v1/ladders", "get") == upload_503

    proxy.cut()
    for name, (request, _up) in requests.items():
        _unavailable(name, request(), upload_503)

    proxy.restore()
    for name, (request, up) in requests.items():
        answer = request()
        assert answer.status_code == up, f"{name}: {answer.get_data(as_text=True)[-600:]}"
    assert "mallory" in {row.username for row in _logged_in_users()}


def _logged_in_users() -> list[Any]:
    """The users with a live session (the login made after the outage is among them)."""
    from sqlalchemy import select

    from web.extensions import db
    from web.models import User, UserSession

    return list(db.session.scalars(select(User).join(UserSession, UserSession.user_id == User.id)))


def test_no_pooled_connection_free_in_time_answers_503(app: Flask, world: World) -> None:
    """A pool that cannot hand out a connection in time is an outage too, not a bug."""
    from web import create_app
    from web.extensions import db

    config = {k: v for k, v in app.config.items() if k.isupper()}
    options = {"pool_size": 1, "max_overflow": 0, "pool_timeout": 0.5}
    small = create_app({**config, "SQLALCHEMY_ENGINE_OPTIONS": options})
    with small.app_context():
        held = db.engine.connect()  # the pool's one connection, taken
        try:
            answer = small.test_client().get("/api/v1/ladders")
        finally:
            held.close()
        assert answer.status_code == 503
        assert answer.get_json()["error"]["code"] == "service_unavailable"
        assert small.test_client().get("/api/v1/ladders").status_code == 200
        db.session.remove()
        db.engine.dispose()


def _raised_from(cause: BaseException) -> BaseException:
    try:
        try:
            raise cause
        except BaseException as inner:
            raise RuntimeError("a service failed") from inner
    except RuntimeError as outer:
        return outer


class _Driver(Exception):
    """A stand-in for a driver's exception with the attributes drivers set."""

    def __init__(self, message: str, **attributes: Any) -> None:
        super().__init__(message)
        for key, value in attributes.items():
            setattr(self, key, value)


def _operational(**attributes: Any) -> exc.OperationalError:
    return exc.OperationalError("SELECT 1", None, _Driver("driver error", **attributes))


@pytest.mark.parametrize(
    ("error", "unreachable"),
    [
        (_operational(sqlstate=None), True),  # refused, closed: no SQLSTATE from the server
        (_operational(sqlstate="57P01"), True),  # the server is shutting down
        (_operational(sqlstate="53300"), True),  # too many connections
        (_operational(sqlstate="08006"), True),  # connection failure
        (_operational(sqlite_errorcode=5), True),  # SQLITE_BUSY: database is locked
        (_operational(sqlite_errorcode=1), False),  # no such table: a bug
        (_operational(sqlstate="22012"), False),  # division by zero: a bug
        (exc.TimeoutError("QueuePool limit reached"), True),
        (exc.IntegrityError("INSERT", None, _Driver("duplicate")), False),
        (_raised_from(_operational(sqlstate=None)), True),  # wrapped by another error
        (_raised_from(ValueError("no")), False),
    ],
)
def test_which_errors_mean_the_database_is_unreachable(
    error: BaseException, unreachable: bool
) -> None:
    assert health.database_unreachable(error) is unreachable
