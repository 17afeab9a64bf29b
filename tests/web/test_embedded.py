"""``arena up``'s launcher: starts with no outside service, plays, stops, resumes, loses nothing."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.web.conftest import ROOT, wait_for

pytestmark = pytest.mark.slow

WAIT_S = 300.0
"""How long a stage of the platform may take: generous, since the machine may be busy (the
first matches took over 90 s once while other suites loaded both cores)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def counts(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    with sqlite3.connect(db) as conn:
        try:
            rows = conn.execute("SELECT status, count(*) FROM matches GROUP BY status").fetchall()
        except sqlite3.OperationalError:  # not migrated yet, or briefly locked
            return {}
    return dict(rows)


def unfinished(db: Path) -> set[int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id FROM matches WHERE status != 'finished'").fetchall()
    return {row[0] for row in rows}


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def leftovers(var: Path) -> list[str]:
    """Processes still running that belong to this platform (found by their state folder)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(var) in cmdline:
            found.append(cmdline)
    return found


class Platform:
    def __init__(self, var: Path, log: Path) -> None:
        self.var, self.log, self.port = var, log, free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        env.update(ARENA_DEMO_GAMES="challenge", ARENA_SCHEDULE_INTERVAL="2")
        self.env = env

    def start(self) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "web.embedded", "--var", str(self.var),
                   "--port", str(self.port), "--workers", "1"]  # fmt: skip
        with self.log.open("ab") as out:
            return subprocess.Popen(
                command, env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                start_new_session=True,
            )  # fmt: skip

    def stop(self, proc: subprocess.Popen[bytes]) -> int:
        proc.send_signal(signal.SIGINT)  # what Ctrl-C does
        try:
            return proc.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"the platform did not stop:\n{self.log.read_text()[-3000:]}")


def test_up_plays_stops_and_resumes_without_losing_a_match(shared_tmp: Path) -> None:
    var = shared_tmp / "var"
    platform = Platform(var, shared_tmp / "up.log")
    db = var / "arena.db"
    proc = platform.start()
    try:
        wait_for(lambda: healthy(platform.port), WAIT_S, "the web server")
        wait_for(lambda: counts(db).get("finished", 0) >= 3, WAIT_S, "ladder matches to be played")
    finally:
        assert platform.stop(proc) == 0
    assert leftovers(var) == []
    before = counts(db)
    pending = unfinished(db)

    proc = platform.start()
    try:
        wait_for(lambda: not (pending & unfinished(db)), WAIT_S, "the interrupted matches")
        more = before.get("finished", 0) + 2
        wait_for(lambda: counts(db).get("finished", 0) >= more, WAIT_S, "new matches after restart")
    finally:
        assert platform.stop(proc) == 0
    assert leftovers(var) == []
    after = counts(db)
    assert after.get("failed", 0) == 0, platform.log.read_text()[-3000:]
    assert "sample bot challenge-greedy: active" in platform.log.read_text()
