"""The embedded platform (SQLite, embedded Redis) serves pages while its workers finish matches.

A functional bound, not a speed goal (those live in ``bench/soak.py``): under steady page load
no page takes 2 s or more, no page fails, and no process logs "database is locked".
"""

from __future__ import annotations

import sqlite3
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.web.conftest import require_bwrap, wait_for
from tests.web.test_embedded import Platform, counts, healthy, leftovers

pytestmark = pytest.mark.slow

PAGE_BOUND = 2.0
THINK = 0.25
"""Seconds a reader pauses between two pages."""


def pages(db: Path) -> list[str]:
    """The home page, every ladder and bot page, the match list and the match API."""
    with sqlite3.connect(db) as conn:
        slugs = [row[0] for row in conn.execute("SELECT slug FROM ladders")]
        bots = [row[0] for row in conn.execute("SELECT id FROM bots")]
    return [
        "/",
        *(f"/ladders/{slug}" for slug in slugs),
        *(f"/bots/{bot}" for bot in bots),
        "/matches",
        "/api/v1/matches",
    ]


class PageLoad:
    """Readers that request pages in turn (with a short pause between two pages, as people
    browsing do) and keep the slowest answer of each page."""

    def __init__(self, port: int, pages: list[str], threads: int) -> None:
        self.base, self.pages = f"http://127.0.0.1:{port}", pages
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.slowest: dict[str, float] = {}
        self.failures: list[str] = []
        self.requests = 0
        self.threads = [threading.Thread(target=self._run, args=(k,)) for k in range(threads)]

    def _run(self, k: int) -> None:
        n = k
        while not self.stop.is_set():
            page = self.pages[n % len(self.pages)]
            n += 1
            started = time.perf_counter()
            try:
                with urllib.request.urlopen(self.base + page, timeout=30) as reply:
                    reply.read()
                    status = reply.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            except OSError as exc:
                status, page = 0, f"{page} ({exc})"
            took = time.perf_counter() - started
            self.stop.wait(THINK)
            with self.lock:
                self.requests += 1
                self.slowest[page] = max(self.slowest.get(page, 0.0), took)
                if status != 200:
                    self.failures.append(f"{page}: {status}")

    def __enter__(self) -> PageLoad:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(60)


def _warm_up(port: int, paths: list[str]) -> None:
    """Each page once per web process and thread (templates compiled, caches filled)."""
    for _ in range(4):
        for path in paths:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as reply:
                reply.read()


def test_pages_stay_fast_while_matches_finish(shared_tmp: Path) -> None:
    require_bwrap()
    var = shared_tmp / "var"
    platform = Platform(var, shared_tmp / "up.log")
    db = var / "arena.db"
    proc = platform.start()
    try:
        wait_for(lambda: healthy(platform.port), 120, "the web server")
        wait_for(lambda: counts(db).get("finished", 0) >= 2, 120, "the first ladder matches")
        before = counts(db).get("finished", 0)
        _warm_up(platform.port, pages(db))
        with PageLoad(platform.port, pages(db), threads=6) as load:
            wait_for(
                lambda: counts(db).get("finished", 0) >= before + 10,
                240,
                "ten more matches to finish under page load",
            )
    finally:
        assert platform.stop(proc) == 0
    assert leftovers(var) == []
    logs = "".join(path.read_text(errors="replace") for path in var.glob("*.log"))
    assert "database is locked" not in logs
    assert load.failures == []
    assert load.requests > 50
    slow = {page: took for page, took in load.slowest.items() if took >= PAGE_BOUND}
    assert slow == {}, f"pages slower than {PAGE_BOUND} s: {slow}"
