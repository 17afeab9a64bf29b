"""What the server's sandbox can run: listed on the upload page and at ``GET /api/v1/runtimes``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape

from sandbox.languages import LANGUAGES
from tests.web.conftest import require_bwrap
from tests.web.site.conftest import World, login


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    from web.services import runtimes

    runtimes.forget()
    yield
    runtimes.forget()


@pytest.mark.parametrize("backend", ["none", "bwrap"])
def test_the_upload_page_and_the_api_list_the_same_runtimes(
    app: Flask, client: FlaskClient, world: World, backend: str
) -> None:
    if backend == "bwrap":
        require_bwrap()
    app.config["SANDBOX"] = backend
    answer = client.get("/api/v1/runtimes")
    assert answer.status_code == 200
    data = answer.get_json()["data"]
    assert data["backend"] == backend and data["available"] is True, data
    commands = [r["command"] for r in data["runtimes"]]
    assert "python3" in commands and "sh" in commands, commands
    login(client, "alice")
    html = client.get("/upload").get_data(as_text=True)
    assert f"(<code>{backend}</code>) has" in html
    for command in commands:
        assert f"<td><code>{command}</code></td>" in html, command
    assert "could not be listed" not in html
    languages = {item["id"]: item for item in data["languages"]}
    assert list(languages) == [language.id for language in LANGUAGES]
    assert languages["python"]["available"] and languages["python"]["release"].startswith("3.")
    for item in languages.values():
        assert f"<td><code>{item['id']}</code></td>" in html
        if item["available"]:
            assert f"<td>{item['release']}</td>" in html
        else:
            assert item["reason"] and item["install"], item
            assert escape(f"missing: {item['reason']}") in html


def test_a_missing_language_is_shown_with_its_reason(
    app: Flask, client: FlaskClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sandbox without Java: the page and the API say it is missing and why."""
    import sandbox.runtimes

    found = [f for f in sandbox.runtimes.list_runtimes("none") if f.command not in ("javac",)]
    monkeypatch.setattr(sandbox.runtimes, "list_runtimes", lambda backend: tuple(found))
    app.config["SANDBOX"] = "none"
    java = next(
        item
        for item in client.get("/api/v1/runtimes").get_json()["data"]["languages"]
        if item["id"] == "java"
    )
    assert java["available"] is False and java["missing"] == ["javac"]
    assert java["reason"] == "javac: not found on this machine"
    assert "default-jdk-headless" in java["install"]
    login(client, "alice")
    html = client.get("/upload").get_data(as_text=True)
    assert '<tr class="missing"><td>Java</td>' in html
    assert "missing: javac: not found on this machine" in html


def test_a_sandbox_that_cannot_run_here_leaves_the_page_working(
    app: Flask, client: FlaskClient, world: World
) -> None:
    app.config["SANDBOX"] = "no-such-sandbox"
    login(client, "alice")
    page = client.get("/upload")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "could not be listed" in html
    assert "no sandbox &#39;no-such-sandbox&#39;" in html
    data = client.get("/api/v1/runtimes").get_json()["data"]
    assert data == {
        "backend": "no-such-sandbox",
        "available": False,
        "reason": data["reason"],
        "languages": [],
        "runtimes": [],
    }
    assert "no sandbox 'no-such-sandbox'" in data["reason"]


def test_a_probe_that_breaks_is_reported_and_kept_for_a_while(
    app: Flask, client: FlaskClient, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe that times out (here made to, at once) is a reason on the page, not a 500, and
    it is not started again on every page load."""
    import sandbox.runtimes

    calls: list[str] = []

    def stuck(backend: str) -> tuple[object, ...]:
        calls.append(backend)
        raise subprocess.TimeoutExpired(["sh"], 60.0)

    monkeypatch.setattr(sandbox.runtimes, "list_runtimes", stuck)
    app.config["SANDBOX"] = "none"
    login(client, "alice")
    for _ in range(3):
        page = client.get("/upload")
        assert page.status_code == 200
        assert "could not be listed (TimeoutExpired:" in page.get_data(as_text=True)
    answer = client.get("/api/v1/runtimes").get_json()["data"]
    assert answer["available"] is False and answer["reason"].startswith("TimeoutExpired")
    assert calls == ["none"]


def test_the_api_document_describes_the_runtimes(client: FlaskClient) -> None:
    spec = client.get("/api/v1/openapi.json").get_json()
    operation = spec["paths"]["/api/v1/runtimes"]["get"]
    assert "200" in operation["responses"]
    runtime = spec["components"]["schemas"]["Runtime"]
    assert set(runtime["required"]) == {"command", "language", "kind", "path", "version"}
    language = spec["components"]["schemas"]["Language"]
    assert {"id", "available", "version", "release", "reason", "install"} <= set(
        language["required"]
    )
