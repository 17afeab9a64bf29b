"""``arena submit`` against a stand-in server that fails the way a loaded one does.

The real upload and validation flow runs against the real site in
``tests/web/site/test_cli.py``; here a local HTTP server answers with the faults that cannot be
produced on demand there (5xx answers, a refused connection) to check that the wait survives
them and says what it knows.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from arena.cli.main import main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_bots" / "python" / "challenge-random"
HANG_UP = 0
"""A scripted "answer" that closes the connection without a word."""


class Script:
    """The answers the stand-in server gives to ``GET /versions/1``, in order (the last repeats)."""

    def __init__(self, answers: list[tuple[int, str]]) -> None:
        self.answers, self.polls = answers, 0

    def next(self) -> tuple[int, str]:
        self.polls += 1
        return self.answers[min(self.polls, len(self.answers)) - 1]


def version(status: str) -> str:
    data = {"id": 1, "bot_id": 7, "number": 1, "status": status, "error": None}
    return json.dumps({"data": data})


def serve(script: Script) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self._answer(201, version("uploaded"))

        def do_GET(self) -> None:
            code, body = script.next()
            if code == HANG_UP:
                self.close_connection = True
                return
            self._answer(code, body)

        def _answer(self, code: int, body: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def stand_in() -> Iterator[tuple[Script, str]]:
    script = Script([])
    server, url = serve(script)
    yield script, url
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def quick_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in answers at once; the pauses between polls need not be real."""
    monkeypatch.setattr("arena.cli.submit.time.sleep", lambda _s: None)


def submit(url: str, *extra: str) -> int:
    return main(["submit", str(SAMPLE), "--server", url, "--token", "ka_test", *extra])


def test_a_wait_survives_server_errors_and_says_each_stage(
    stand_in: tuple[Script, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script, url = stand_in
    error = json.dumps({"error": {"message": "internal error"}})
    script.answers = [(500, error), (503, error), (200, version("building")),
                      (502, "<html>bad gateway</html>"), (200, version("validating")),
                      (200, version("active"))]  # fmt: skip
    assert submit(url, "--wait") == 0
    out = capsys.readouterr().out
    assert "uploaded challenge-random version 1 (version id 1)" in out
    assert f"bot page: {url}/bots/7\n" in out  # the bot id `arena challenge` takes, and its page
    assert out.count("server trouble (500") == 1 and "server trouble (503" in out
    assert "still uploaded, retrying" in out and "still building, retrying" in out
    stages = [line.split(" ", 1)[1] for line in out.splitlines() if line[:2].isdigit()]
    assert [stage.split(":")[0].split(",")[0] for stage in stages] == [
        "uploaded", "building", "self-test and validation match", "active"
    ]  # fmt: skip
    assert out.rstrip().endswith("status: active")


def test_a_rejected_version_exits_1_with_its_reason(
    stand_in: tuple[Script, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script, url = stand_in
    rejected = {"id": 1, "number": 1, "status": "rejected", "error": "self-test: no ready"}
    script.answers = [(200, json.dumps({"data": rejected}))]
    assert submit(url, "--wait", "30") == 1
    assert "reason: self-test: no ready" in capsys.readouterr().out


def test_a_refusal_ends_the_wait_at_once(
    stand_in: tuple[Script, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script, url = stand_in
    script.answers = [(404, json.dumps({"error": {"message": "no bot version 1"}}))]
    assert submit(url) == 1
    assert script.polls == 1
    assert "404: no bot version 1" in capsys.readouterr().err


def test_wait_may_come_before_the_folder(
    stand_in: tuple[Script, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script, url = stand_in
    script.answers = [(200, version("active"))]
    argv = ["submit", "--wait", str(SAMPLE), "--server", url, "--token", "ka_test"]
    assert main(argv) == 0
    assert "status: active" in capsys.readouterr().out


def test_no_wait_and_bad_waits(
    stand_in: tuple[Script, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script, url = stand_in
    assert submit(url, "--wait", "0") == 0
    assert script.polls == 0
    assert "still uploaded; follow it on the bot's page" in capsys.readouterr().out
    assert submit(url, "--wait", "soon") == 2
    assert "--wait takes a number of seconds, not 'soon'" in capsys.readouterr().err
    assert submit(url, "--wait", "-5") == 2


def test_a_connection_dropped_during_the_wait_is_retried(
    stand_in: tuple[Script, str], capsys: pytest.CaptureFixture[str]
) -> None:
    script, url = stand_in
    script.answers = [(HANG_UP, ""), (HANG_UP, ""), (200, version("active"))]
    assert submit(url, "--wait", "60") == 0
    out = capsys.readouterr().out
    assert out.count("server trouble (cannot reach") == 2
    assert "status: active" in out
