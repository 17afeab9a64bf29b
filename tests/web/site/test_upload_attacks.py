"""Hostile uploads against the real site: compression bombs, too many members, deep folders,
huge names and clashing paths are refused with a clear 4xx that names the member, before
anything is stored, and no answer shows a server path."""

from __future__ import annotations

import io
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.datastructures import FileStorage
from werkzeug.test import TestResponse, encode_multipart

from tests.web.site import bombs
from tests.web.site.conftest import LiveServer, World, csrf_from, login

HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "tar.gz of 3 GiB of zeros in 3 MB": (bombs.gzip_bomb, "'zeros': the archive decompresses"),
    "zip declaring 80 MiB of zeros": (lambda: bombs.zip_bomb(80), "unpacks to"),
    "many members": (lambda: bombs.many_members(2500), "entries"),
    "zip of 60,000 entries": (
        lambda: bombs.make_zip(
            [("bot.toml", bombs.MANIFEST)] + [(f"{i}", b"") for i in range(60_000)]
        ),
        "more than 2000 entries",
    ),
    "deep nesting": (lambda: bombs.deep_nesting(60), "nest deeper than"),
    "huge member name": (lambda: bombs.long_name(20_000), "is longer than"),
    "file used as a folder": (
        lambda: bombs.make_zip([("bot.toml", bombs.MANIFEST), ("lib", b"x"), ("lib/a.py", b"")]),
        "lib/a.py: lib is a file, not a folder",
    ),
    "one path twice": (
        lambda: bombs.tar_gz([("bot.toml", bombs.MANIFEST), ("a.py", b""), ("a.py", b"")]),
        "a.py: appears twice",
    ),
    "corrupt deflate data": (bombs.corrupt_zip, "b.py: corrupt member"),
}


def post_form(
    client: FlaskClient, url: str, fields: dict[str, Any], headers: dict[str, str] | None = None
) -> TestResponse:
    """POST multipart form data built in memory (the test client would spool a large body to
    a temporary file that it never closes)."""
    values = {
        key: FileStorage(value[0], filename=value[1]) if isinstance(value, tuple) else value
        for key, value in fields.items()
    }
    boundary, body = encode_multipart(values)
    kind = f"multipart/form-data; boundary={boundary}"
    return client.post(url, data=body, content_type=kind, headers=headers or {})


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def versions() -> int:
    from sqlalchemy import func, select

    from web.extensions import db
    from web.models import BotVersion

    db.session.expire_all()
    return int(db.session.scalar(select(func.count()).select_from(BotVersion)) or 0)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_archive_gets_a_clear_4xx_and_leaves_nothing(
    app: Flask, client: FlaskClient, world: World, kind: str
) -> None:
    build, expected = HOSTILE[kind]
    storage = Path(app.config["STORAGE_DIR"])
    before, count = files_under(storage), versions()
    headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
    data = {"file": (io.BytesIO(build()), "bot.tar.gz")}
    answer = post_form(client, "/api/v1/uploads", data, headers)
    body = answer.get_data(as_text=True)
    assert answer.status_code in (413, 422), body[:500]
    message = answer.get_json()["error"]["message"]
    assert expected in message, message
    assert str(storage) not in body and str(storage.resolve()) not in body
    assert "unpack-" not in body
    assert files_under(storage) == before, "a refused upload left files behind"
    assert versions() == count, "a refused upload became a version"


def test_the_upload_page_refuses_a_bomb_with_a_page_not_a_500(
    app: Flask, client: FlaskClient, world: World
) -> None:
    login(client, "alice")
    token = csrf_from(client.get("/upload").get_data(as_text=True))
    form = {"file": (io.BytesIO(bombs.gzip_bomb()), "bomb.tar.gz"), "csrf_token": token}
    answer = post_form(client, "/upload", form)
    body = answer.get_data(as_text=True)
    assert answer.status_code == 422
    assert "The upload was refused" in body and "decompresses to more than" in body
    assert app.config["STORAGE_DIR"] not in body


def post_file(url: str, token: str, name: str, content: bytes) -> int:
    """POST one file as multipart form data; the status code."""
    boundary = "----arena-test-boundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body = head + content + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
    request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_bombs_at_once_leave_the_site_answering(live_server: LiveServer, world: World) -> None:
    """Several bombs in parallel all get their 422, and the site answers other people meanwhile."""
    bomb, url = bombs.gzip_bomb(), f"{live_server.url}/api/v1/uploads"
    codes: list[int] = []
    threads = [
        threading.Thread(
            target=lambda: codes.append(post_file(url, world.tokens["alice"], "b.tgz", bomb))
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    with urllib.request.urlopen(f"{live_server.url}/api/v1/status", timeout=120) as status:
        assert status.status == 200
    for thread in threads:
        thread.join(120)
    assert codes == [422, 422, 422]


def test_a_good_archive_still_uploads(client: FlaskClient, world: World) -> None:
    """The checks refuse bombs, not bots: a bot in a folder inside a tar.gz is accepted."""
    archive = bombs.tar_gz([("mine/bot.toml", bombs.MANIFEST), ("mine/b.py", b"print(1)\n")])
    headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
    data = {"file": (io.BytesIO(archive), "bot.tar.gz")}
    answer = client.post("/api/v1/uploads", data=data, headers=headers)
    assert answer.status_code == 201, answer.get_json()


def test_a_refusal_found_while_unpacking_shows_no_server_path(app: Flask, world: World) -> None:
    """Past the first check (a stored upload unpacked later), the reason kept for the owner
    still names the member and never the scratch folder."""
    from web.models import VersionStatus
    from web.services import bots as bot_service

    clash = bombs.make_zip([("bot.toml", bombs.MANIFEST), ("lib", b"x"), ("lib/a.py", b"")])
    version = bot_service.submit(world.owner, "clash", bot_service.Upload(data=clash))
    assert version.status == VersionStatus.REJECTED
    assert "lib/a.py" in (version.error or "")
    storage = Path(app.config["STORAGE_DIR"])
    assert str(storage.resolve()) not in (version.error or "") and "unpack-" not in (
        version.error or ""
    )
    assert not list((storage / "tmp").glob("unpack-*")), "the scratch folder is removed"


@pytest.mark.parametrize("manifest", ['name = "Bad Name"\n', "games = 3", "[[[", 'run = "x"\n'])
def test_manifest_errors_show_no_server_path(
    client: FlaskClient, world: World, manifest: str
) -> None:
    import tempfile

    headers = {"Authorization": f"Bearer {world.tokens['alice']}"}
    for data in (
        {"file": (io.BytesIO(b"print(1)\n"), "bot.py"), "manifest": manifest},
        {"file": (io.BytesIO(bombs.make_zip([("bot.toml", manifest.encode())])), "b.zip")},
    ):
        answer = client.post("/api/v1/uploads", data=data, headers=headers)
        assert answer.status_code == 422
        message = answer.get_json()["error"]["message"]
        assert tempfile.gettempdir() + "/" not in message and "manifest-" not in message, message
