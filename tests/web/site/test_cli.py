"""``arena submit`` and ``arena fetch`` against a live server on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.web.conftest import ROOT, SAMPLES
from tests.web.site.conftest import LiveServer, World


def arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli.main", *args]


def test_fetch_downloads_a_replay_that_verifies_locally(
    live_server: LiveServer, world: World, tmp_path: Path
) -> None:
    out = tmp_path / "m.json"
    done = subprocess.run(
        arena("fetch", str(world.finished.id), "--server", live_server.url, "--out", str(out),
              "--verify"),
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "seed 42" in done.stdout and "OK" in done.stdout
    again = subprocess.run(arena("verify", str(out)), capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0 and "OK" in again.stdout


def test_fetch_refuses_a_running_match(
    live_server: LiveServer, world: World, tmp_path: Path
) -> None:
    done = subprocess.run(
        arena("fetch", str(world.running.id), "--server", live_server.url,
              "--out", str(tmp_path / "r.json")),
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1 and "still running" in done.stderr
    assert not (tmp_path / "r.json").exists()


def test_fetch_reports_a_missing_match(live_server: LiveServer, world: World) -> None:
    done = subprocess.run(
        arena("fetch", "99999", "--server", live_server.url),
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1 and "404" in done.stderr and "no match 99999" in done.stderr


def _version_of(name: str, timeout: float = 60.0) -> int:
    from sqlalchemy import select

    from web.extensions import db
    from web.models import Bot, BotVersion

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        db.session.rollback()
        found = db.session.scalar(
            select(BotVersion.id).join(Bot).where(Bot.name == name).order_by(BotVersion.id)
        )
        if found:
            return int(found)
        time.sleep(0.2)
    raise AssertionError(f"no version of {name} arrived")


def test_submit_uploads_and_follows_validation(live_server: LiveServer, world: World) -> None:
    """The server builds and self-tests the bot (here in the test, standing in for a worker)."""
    from arena.bots import load_bot
    from web.services import lifecycle

    folder = SAMPLES / "python" / "svoi-kozyri-random"
    name = load_bot(folder).name
    child = subprocess.Popen(
        arena("submit", str(folder), "--server", live_server.url,
              "--token", world.tokens["alice"], "--wait", "90"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        status = lifecycle.prepare(_version_of(name))
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert str(status) == "active"
    assert child.returncode == 0, out + err
    assert f"uploaded {name} version 1" in out and "status: active" in out


def test_submit_without_a_token_or_with_a_bad_one(live_server: LiveServer, world: World) -> None:
    folder = str(SAMPLES / "python" / "svoi-kozyri-random")
    bare = subprocess.run(
        arena("submit", folder, "--server", live_server.url),
        capture_output=True, text=True, timeout=60, cwd=ROOT, env={"PATH": "/usr/bin"},
    )  # fmt: skip
    assert bare.returncode == 2 and "token" in bare.stderr
    wrong = subprocess.run(
        arena("submit", folder, "--server", live_server.url, "--token", "ka_nope"),
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert wrong.returncode == 1 and "401" in wrong.stderr
