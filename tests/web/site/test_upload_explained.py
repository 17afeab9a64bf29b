"""Uploads that explain themselves: the size limit stated in every refusal (the API's 413, the
page, ``arena submit`` before it sends anything), a ``bot.toml`` one folder too deep named where
it was found, each manifest problem on its own line, and the bot page's address printed."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from arena.cli.remote import multipart
from tests.web.conftest import SAMPLES
from tests.web.site.conftest import LiveServer, World, csrf_from, login
from tests.web.site.test_cli import arena

pytestmark = pytest.mark.services

BOT = SAMPLES / "python" / "svara-random"


def nested_zip() -> bytes:
    """A bot zipped with its folder two levels down, as a careless archiver makes it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mybot/", "")
        archive.writestr("mybot/src/bot.toml", (BOT / "bot.toml").read_text())
        archive.writestr("mybot/src/bot.py", (BOT / "bot.py").read_text())
        archive.writestr("mybot/README", "x")
    return buffer.getvalue()


def post_api(client: FlaskClient, world: World, data: bytes, name: str = "bot.zip") -> dict:
    """POST an upload as ``arena submit`` does (one body in memory: no spooled temporary file)."""
    body, content_type = multipart({}, {"file": (name, data)})
    headers = {"Authorization": f"Bearer {world.tokens['alice']}", "Content-Type": content_type}
    answer = client.post("/api/v1/uploads", data=body, headers=headers)
    found = answer.get_json()
    found["status_code"] = answer.status_code
    return found


def test_a_manifest_one_folder_down_is_named(client: FlaskClient, world: World) -> None:
    body = post_api(client, world, nested_zip())
    assert body["status_code"] == 422
    message = body["error"]["message"]
    assert "no bot.toml at its top level" in message
    assert "found at mybot/src/bot.toml" in message and "zip the contents of mybot/src" in message


def test_the_api_413_names_the_limit_and_the_size(
    app: Flask, client: FlaskClient, world: World
) -> None:
    app.config["MAX_CONTENT_LENGTH"] = 1024 * 1024
    body = post_api(client, world, os.urandom(3 * 512 * 1024))
    assert body["status_code"] == 413
    assert body["error"]["code"] == "request_entity_too_large"
    assert re.fullmatch(r"the upload is 1\.5 MiB; the limit is 1 MiB", body["error"]["message"])


def test_the_page_states_the_limits_and_lists_each_problem(
    app: Flask, client: FlaskClient, world: World
) -> None:
    login(client, "alice")
    page = client.get("/upload").get_data(as_text=True)
    assert "Size: at most 32 MiB as sent, 64 MiB and 2000 files unpacked." in page
    manifest = 'name = "Bad Name!"\ngames = ["no-such-game"]\nlanguage = "python"\n'
    answer = client.post(
        "/upload",
        data={
            "csrf_token": csrf_from(page),
            "file": (io.BytesIO(b"print(1)\n"), "b.py"),
            "manifest": manifest,
        },
    )
    html = answer.get_data(as_text=True)
    assert answer.status_code == 422
    problems = re.findall(r"<li>(.*?)</li>", html.split('class="problems"')[1].split("</ul>")[0])
    assert len(problems) >= 3, problems  # the name, the game, the missing run command
    assert any("no-such-game" in p for p in problems) and any("run" in p for p in problems)
    assert "Choose the file again" in html and "<code>b.py</code>" in html
    assert "no-such-game" in html.split("<textarea")[1]  # the manifest text is kept


def test_arena_submit_prints_the_bot_page(live_server: LiveServer, world: World) -> None:
    done = subprocess.run(
        arena("submit", str(BOT), "--server", live_server.url, "--wait", "0"),
        env={**os.environ, "ARENA_TOKEN": world.tokens["alice"]},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = re.search(rf"^bot page: ({re.escape(live_server.url)}/bots/\d+)$", done.stdout, re.M)
    assert found, done.stdout
    assert (
        "svara-random"
        in subprocess.run(
            ["curl", "-fsS", found.group(1)], capture_output=True, text=True, timeout=60
        ).stdout
    )


def test_arena_submit_refuses_an_oversized_folder_before_sending(
    live_server: LiveServer, world: World, tmp_path: Path
) -> None:
    folder = tmp_path / "big"
    shutil.copytree(BOT, folder)
    (folder / "weights.bin").write_bytes(os.urandom(33 * 1024 * 1024))
    done = subprocess.run(
        arena("submit", str(folder), "--server", live_server.url, "--wait", "0"),
        env={**os.environ, "ARENA_TOKEN": world.tokens["alice"]},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "not sent: the upload is 33.0 MiB; the limit is 32 MiB" in done.stderr, done.stderr
    assert "Broken pipe" not in done.stderr
