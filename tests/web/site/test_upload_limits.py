"""Two upload allowances per author (the account, not the address), shared by the upload page
and the API: accepted uploads, and (a larger one) uploads refused for the author's own mistake.
The 429 says which one ran out and when it resets; the upload page states both."""

from __future__ import annotations

import io
import re
import time

import jsonschema
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.web.site.conftest import World, csrf_from, login

MANIFEST = (
    'name = "limited"\ngames = ["svoi-kozyri"]\nlanguage = "python"\nrun = ["python3", "b.py"]\n'
)


def _api(
    client: FlaskClient,
    world: World,
    fields: dict[str, object],
    author: str = "alice",
    address: str = "127.0.0.1",
) -> TestResponse:
    headers = {"Authorization": f"Bearer {world.tokens[author]}"}
    environ = {"REMOTE_ADDR": address}
    return client.post("/api/v1/uploads", data=fields, headers=headers, environ_base=environ)


def good(
    client: FlaskClient, world: World, author: str = "alice", address: str = "127.0.0.1"
) -> TestResponse:
    fields = {"file": (io.BytesIO(b"print(1)\n"), "b.py"), "manifest": MANIFEST}
    return _api(client, world, fields, author, address)


def broken_archive(client: FlaskClient, world: World) -> TestResponse:
    return _api(client, world, {"file": (io.BytesIO(b"PK\x03\x04 not really"), "bot.zip")})


def broken_manifest(client: FlaskClient, world: World) -> TestResponse:
    manifest = MANIFEST.replace("run =", "walk =")
    return _api(client, world, {"file": (io.BytesIO(b"print(1)\n"), "b.py"), "manifest": manifest})


def _limits(app: Flask, accepted: str, refused: str) -> None:
    app.config.update(UPLOAD_RATE_LIMIT=accepted, UPLOAD_REFUSED_RATE_LIMIT=refused)


def _used_up(answer: TestResponse, allowance: str) -> str:
    """The 429's message, checked to name ``allowance`` and a reset time within the hour."""
    assert answer.status_code == 429, answer.get_data(as_text=True)[-600:]
    message = str(answer.get_json()["error"]["message"])
    assert f"has used up its {allowance}" in message, message
    found = re.search(r"resets at (\d\d:\d\d:\d\d) UTC \(in (\d+) min\)", message)
    assert found, message
    retry_after = int(answer.headers["Retry-After"])
    assert 3540 <= retry_after <= 3601 and round(retry_after / 60) == int(found.group(2))
    reset = time.strftime("%H:%M:%S", time.gmtime(time.time() + retry_after))
    assert abs(_seconds(reset) - _seconds(found.group(1))) in (0, 1, 2, 86398, 86399)
    return message


def _seconds(clock: str) -> int:
    hours, minutes, seconds = (int(x) for x in clock.split(":"))
    return hours * 3600 + minutes * 60 + seconds


def test_refused_uploads_do_not_use_up_the_accepted_allowance(
    client: FlaskClient, world: World
) -> None:
    _limits(client.application, accepted="2 per hour", refused="5 per hour")
    codes = [
        broken_archive(client, world).status_code,
        broken_manifest(client, world).status_code,
        good(client, world).status_code,
        broken_archive(client, world).status_code,
        broken_manifest(client, world).status_code,
        good(client, world).status_code,
    ]
    assert codes == [422, 422, 201, 422, 422, 201]
    _used_up(good(client, world), "2 accepted uploads per hour")
    _used_up(broken_archive(client, world), "2 accepted uploads per hour")


def test_the_refused_allowance_runs_out_on_its_own(client: FlaskClient, world: World) -> None:
    _limits(client.application, accepted="5 per hour", refused="3 per hour")
    assert good(client, world).status_code == 201
    assert [broken_archive(client, world).status_code for _ in range(3)] == [422] * 3
    allowance = "3 refused uploads (a broken archive or manifest) per hour"
    _used_up(broken_manifest(client, world), allowance)
    _used_up(good(client, world), allowance)  # no upload is read while one allowance is spent


def test_the_429_is_the_documented_envelope(client: FlaskClient, world: World) -> None:
    _limits(client.application, accepted="1 per hour", refused="1 per hour")
    assert broken_archive(client, world).status_code == 422
    answer = broken_archive(client, world)
    _used_up(answer, "1 refused upload (a broken archive or manifest) per hour")
    spec = client.get("/api/v1/openapi.json").get_json()
    declared = spec["paths"]["/api/v1/uploads"]["post"]["responses"]["429"]
    assert "Retry-After" in declared["headers"]
    schema = declared["content"]["application/json"]["schema"]
    jsonschema.validate(answer.get_json(), {**schema, "components": spec["components"]})


def test_the_page_and_the_api_share_the_allowances(client: FlaskClient, world: World) -> None:
    _limits(client.application, accepted="1 per hour", refused="1 per hour")
    login(client, "alice")
    page = client.get("/upload").get_data(as_text=True)
    form = {"csrf_token": csrf_from(page), "file": (io.BytesIO(b"print(1)\n"), "b.py")}
    answer = client.post("/upload", data=form, content_type="multipart/form-data")
    assert answer.status_code == 422  # a single file without its manifest
    assert "a single source file, give its manifest too" in answer.get_data(as_text=True)
    text = _used_up(broken_manifest(client, world), "1 refused upload")
    form = {"csrf_token": csrf_from(page), "file": (io.BytesIO(b"print(1)\n"), "b.py")}
    answer = client.post(
        "/upload", data={**form, "manifest": MANIFEST}, content_type="multipart/form-data"
    )
    assert answer.status_code == 429
    page = answer.get_data(as_text=True)
    assert "429 · Too Many Requests" in page and text.split(";")[0] in page


def test_an_empty_form_counts_as_refused(client: FlaskClient, world: World) -> None:
    _limits(client.application, accepted="1 per hour", refused="1 per hour")
    login(client, "alice")
    token = csrf_from(client.get("/upload").get_data(as_text=True))
    answer = client.post("/upload", data={"csrf_token": token})
    assert answer.status_code == 422
    assert client.post("/upload", data={"csrf_token": token}).status_code == 429
    assert good(client, world).status_code == 429


def test_the_upload_page_states_both_allowances(client: FlaskClient, world: World) -> None:
    _limits(client.application, accepted="20 per hour", refused="60 per hour")
    login(client, "alice")
    page = client.get("/upload").get_data(as_text=True)
    assert "Each author (your account" in page
    assert "20 accepted uploads per hour" in page
    assert "60 refused uploads (a broken archive or manifest) per hour" in page


def test_the_default_refused_allowance_is_the_larger() -> None:
    from web.api.upload_limits import ACCEPTED, REFUSED
    from web.config import default_settings

    settings = default_settings()
    accepted, refused = (int(settings[a.setting].split()[0]) for a in (ACCEPTED, REFUSED))
    assert settings[ACCEPTED.setting].endswith("per hour")
    assert settings[REFUSED.setting].endswith("per hour")
    assert refused > accepted


def test_two_authors_behind_one_address_do_not_share_an_allowance(
    client: FlaskClient, world: World
) -> None:
    _limits(client.application, accepted="1 per hour", refused="1 per hour")
    assert good(client, world, "alice", "10.0.0.7").status_code == 201
    _used_up(good(client, world, "alice", "10.0.0.7"), "1 accepted upload per hour")
    assert good(client, world, "mallory", "10.0.0.7").status_code == 201
    _used_up(good(client, world, "mallory", "10.0.0.7"), "1 accepted upload per hour")


def test_one_author_from_two_addresses_has_one_allowance(client: FlaskClient, world: World) -> None:
    _limits(client.application, accepted="1 per hour", refused="1 per hour")
    assert good(client, world, "alice", "10.0.0.7").status_code == 201
    message = _used_up(good(client, world, "alice", "10.0.0.8"), "1 accepted upload per hour")
    assert message.startswith("this account has used up")
    login(client, "alice")  # the upload page counts against the same account
    page = client.get("/upload", environ_base={"REMOTE_ADDR": "10.0.0.9"}).get_data(as_text=True)
    form = {"csrf_token": csrf_from(page), "file": (io.BytesIO(b"print(1)\n"), "b.py")}
    answer = client.post(
        "/upload",
        data={**form, "manifest": MANIFEST},
        content_type="multipart/form-data",
        environ_base={"REMOTE_ADDR": "10.0.0.9"},
    )
    assert answer.status_code == 429


def test_a_stray_token_on_the_upload_page_counts_against_the_login(
    client: FlaskClient, world: World
) -> None:
    """The upload page takes its author from the login: an ``Authorization`` header it does
    not use (an unknown token, or another account's) does not move the upload to another
    allowance, whatever the address."""
    _limits(client.application, accepted="1 per hour", refused="1 per hour")
    login(client, "alice")

    def upload(address: str, token: str) -> TestResponse:
        environ = {"REMOTE_ADDR": address}
        page = client.get("/upload", environ_base=environ).get_data(as_text=True)
        form = {"csrf_token": csrf_from(page), "file": (io.BytesIO(b"print(1)\n"), "b.py")}
        return client.post(
            "/upload",
            data={**form, "manifest": MANIFEST},
            content_type="multipart/form-data",
            headers={"Authorization": f"Bearer {token}"},
            environ_base=environ,
        )

    first = upload("10.0.1.1", "not-a-token")
    assert first.status_code == 302, first.get_data(as_text=True)[-600:]
    for address, token in (
        ("10.0.1.2", "another-made-up-one"),
        ("10.0.1.3", world.tokens["mallory"]),
    ):
        assert upload(address, token).status_code == 429, (address, token)
    assert good(client, world, "mallory").status_code == 201, "mallory's allowance is untouched"
