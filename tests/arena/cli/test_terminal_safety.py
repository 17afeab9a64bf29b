"""No subcommand lets a bot, a replay or a server write control sequences to the terminal.

The ``hostile/escapes`` bot puts every family of sequence (OSC 52 clipboard writes, OSC title
changes, CSI clear-screen and hidden text, DCS, the one-character C1 CSI and OSC, BEL, a
right-to-left override and rich markup) into its self-reported name, its ``debug`` text and
its stderr, then crashes. Each command that shows such text runs for real on it (the bot in a
real process), on a replay holding the sequences, or against a local stand-in server whose
answers hold them. Every output is read twice: as a pipe gets it, and as a colour terminal
gets it (where rich's own colour codes are the only escapes allowed).
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from arena.cli.main import main
from arena.cli.match import EXIT_FORFEIT
from arena.replay import FORMAT, VERSION, read_replay, write_replay

SAMPLES = Path(__file__).resolve().parents[3] / "sample_bots"
ESCAPES = str(SAMPLES / "hostile" / "escapes")
GREEDY = str(SAMPLES / "python" / "svoi-kozyri-greedy")

PAYLOAD = (
    "osc52=\x1b]52;c;aGk=\x07 title=\x1b]0;owned\x1b\\ clear=\x1b[2J hidden=\x1b[8m "
    "dcs=\x1bP+q544e\x1b\\ csi8=\x9b2J osc8=\x9d0;t\x9c bel=\x07 bidi=\u202eevil\u202c "
    "markup=[link=http://127.0.0.1/][bold]x[/]"
)
"""Every family in one string, as a replay or a server could hold it."""

BAD_SEED = {key: {} for key in ("game", "result", "outcome")} | {
    "format": FORMAT, "version": VERSION, "engine": "e", "seats": [], "steps": [],
    "final_hash": "", "seed": PAYLOAD,
}  # fmt: skip
"""A replay whose only fault is a seed a server should not have sent."""

SGR = re.compile(r"\x1b\[[0-9;]*m")
CURSOR = re.compile(r"\x1b\[\?25[lh]|\x1b\[2K|\x1b\[1A|\r")
"""What rich's own live progress line writes on a terminal (hide the cursor, go up a line...)."""
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def assert_terminal_safe(out: str, progress: bool = False) -> None:
    """No control character but newline and tab, once rich's own colour codes (and with
    ``progress``, its progress line's cursor moves) are taken out; no hyperlink made from
    markup."""
    ours = CURSOR.sub("", SGR.sub("", out)) if progress else SGR.sub("", out)
    found = sorted({f"U+{ord(c):04X}" for c in RAW.findall(ours)})
    assert not found, f"raw control characters reached the terminal: {found}"
    assert "http://127.0.0.1/" not in out or "[link=http://127.0.0.1/]" in SGR.sub("", out)


@pytest.fixture(params=["pipe", "colour-terminal"])
def terminal(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "240")
    if request.param == "colour-terminal":
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
        monkeypatch.setenv("TERM", "dumb")
    return str(request.param)


def test_match_shows_the_name_stderr_and_debug_of_a_hostile_bot_safely(
    tmp_path: Path, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", "svoi-kozyri", ESCAPES, "builtin:greedy", "--deals", "1", "--sandbox",
            "none", "--no-build", "--verbose", "--replay", str(tmp_path / "m.json")]  # fmt: skip
    assert main(argv) == EXIT_FORFEIT
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert_terminal_safe(out)
    plain = SGR.sub("", out)
    assert "# osc52=\\x1b]52;c;aGFja2VkIQ==\\x07" in plain  # --verbose debug text
    assert "turn 3: osc52=\\x1b]52;c;" in plain  # stderr in the failure box
    assert "raw bytes: \ufffd2J \\x1b]52;c;eA==\\x07" in plain  # undecodable bytes
    assert "\\u202e[bold]n)" in plain  # self-reported name: bidi shown, markup not read


@pytest.fixture(scope="module")
def hostile_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real match of the escapes bot, its seat names and result then given the sequences."""
    path = tmp_path_factory.mktemp("replay") / "m.json"
    argv = ["match", "svoi-kozyri", ESCAPES, GREEDY, "--deals", "1", "--sandbox", "none",
            "--no-build", "--quiet", "--replay", str(path)]  # fmt: skip
    assert main(argv) == EXIT_FORFEIT
    replay = read_replay(path)
    assert any("\x1b]52" in (step.get("debug") or "") for step in replay["steps"])
    assert any("\x1b]52" in (step.get("stderr") or "") for step in replay["steps"])
    replay["seats"][0]["name"] = PAYLOAD
    replay["result"]["note"] = PAYLOAD  # ``verify`` quotes the result it finds wrong
    write_replay(path, replay)
    return path


@pytest.mark.parametrize("seat", [None, 0, 1])
def test_replay_shows_names_debug_and_stderr_safely(
    hostile_replay: Path, seat: int | None, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    view = [] if seat is None else ["--seat", str(seat)]
    assert main(["replay", str(hostile_replay), "--no-interactive", *view]) == 0
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "P0 osc52=\\x1b]52;c;aGk=\\x07" in SGR.sub("", out)
    if seat != 1:  # seat 1 may not see seat 0's debug text
        assert "debug: osc52=\\x1b]52;c;aGFja2VkIQ==\\x07" in SGR.sub("", out)
        assert "stderr: turn 1: osc52=" in SGR.sub("", out)


def test_verify_quotes_a_replay_safely(
    hostile_replay: Path, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", str(hostile_replay)]) == 1
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "result differs" in out and "\\x1b]52;c;aGk=" in out


class StandIn:
    """A local server answering every request with a fixed status and body."""

    def __init__(self) -> None:
        self.status, self.body = 200, b"{}"
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self._answer()

            def _answer(self) -> None:
                self.send_response(stand_in.status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(stand_in.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, status: int, doc: object) -> None:
        self.status, self.body = status, json.dumps(doc).encode()


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server = StandIn()
    threading.Thread(target=server.server.serve_forever, daemon=True).start()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_fetch_shows_a_replay_and_its_problems_safely(
    hostile_replay: Path,
    stand_in: StandIn,
    tmp_path: Path,
    terminal: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stand_in.answer(200, json.loads(hostile_replay.read_bytes()))
    out_file = tmp_path / "fetched.json"
    argv = ["fetch", "7", "--server", stand_in.url, "--out", str(out_file), "--verify"]
    assert main(argv) == 1
    assert read_replay(out_file)["seats"][0]["name"] == PAYLOAD  # kept as it is in the file
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "result differs" in out and "\\x1b]52;c;aGk=" in out
    assert main(["replay", str(out_file), "--no-interactive"]) == 0
    assert_terminal_safe(capsys.readouterr().out)


@pytest.mark.parametrize(
    "answer",
    [
        (404, {"error": {"message": PAYLOAD, "details": {"x": PAYLOAD}}}),
        (200, {"sealed": PAYLOAD}),
        (200, {"live": True, "status": PAYLOAD}),
        (200, BAD_SEED),
    ],
    ids=["error", "sealed", "live", "bad-seed"],
)
def test_fetch_shows_a_refusal_safely(
    answer: tuple[int, object], stand_in: StandIn, tmp_path: Path, terminal: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    stand_in.answer(*answer)
    assert main(["fetch", "7", "--server", stand_in.url, "--out", str(tmp_path / "f.json")]) == 1
    captured = capsys.readouterr()
    assert_terminal_safe(captured.out + captured.err)
    assert "\\x1b" in captured.err


def test_submit_shows_a_rejection_safely(
    stand_in: StandIn, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    version = {"id": PAYLOAD, "number": PAYLOAD, "status": "rejected", "error": PAYLOAD,
               "build_log": PAYLOAD + "\nline two", "validation_log": PAYLOAD}  # fmt: skip
    stand_in.answer(201, {"data": version})
    argv = ["submit", ESCAPES, "--server", stand_in.url, "--token", "t", "--wait", "0"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "reason: osc52=\\x1b]52;c;aGk=\\x07" in out and "\nline two" in out


def test_submit_shows_an_unknown_status_and_a_refusal_safely(
    stand_in: StandIn, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in.answer(201, {"data": {"id": 1, "number": 1, "status": PAYLOAD}})
    argv = ["submit", ESCAPES, "--server", stand_in.url, "--token", "t", "--wait", "0"]
    assert main(argv) == 0
    stand_in.answer(400, {"error": {"message": PAYLOAD}})
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert_terminal_safe(captured.out + captured.err)
    assert "still osc52=\\x1b]52" in captured.out and "400: osc52=\\x1b]52" in captured.err


def test_tournament_with_a_hostile_bot_prints_safely(
    tmp_path: Path, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tournament", "svoi-kozyri", ESCAPES, GREEDY, "--matches", "2", "--sandbox", "none",
            "--no-build", "--param", "deals=1", "--out", str(tmp_path / "t")]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert_terminal_safe(captured.out)
    assert_terminal_safe(captured.err, progress=terminal == "colour-terminal")
    assert "hostile-escapes" in captured.out


def test_repeat_names_the_seats_of_a_hostile_replay_safely(
    hostile_replay: Path, tmp_path: Path, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["match", ESCAPES, GREEDY, "--repeat", str(hostile_replay), "--sandbox", "none",
            "--no-build", "--quiet", "--replay", str(tmp_path / "again.json")]  # fmt: skip
    assert main(argv) == EXIT_FORFEIT
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "seats were 0: osc52=\\x1b]52;c;aGk=\\x07" in SGR.sub("", out)


def test_a_build_command_is_shown_safely(
    tmp_path: Path, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A downloaded bot's ``bot.toml`` is someone else's text too: its build command is shown."""
    bot = tmp_path / "bot"
    shutil.copytree(GREEDY, bot)
    manifest = (bot / "bot.toml").read_text()
    build = 'build = ["true", "\\u001b]52;c;aGk=\\u0007", "[link=http://127.0.0.1/]x"]\n'
    (bot / "bot.toml").write_text(manifest + build)
    argv = ["match", "svoi-kozyri", str(bot), "builtin:greedy", "--deals", "1", "--sandbox",
            "none", "--quiet", "--replay", str(tmp_path / "m.json")]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "true \\x1b]52;c;aGk=\\x07 [link=http://127.0.0.1/]x" in SGR.sub("", out)


def test_challenge_shows_a_hostile_answer_safely(
    stand_in: StandIn, terminal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {key: PAYLOAD for key in ("bot", "version", "owner", "wins", "matches", "errors")}
    match = {"id": PAYLOAD, "status": PAYLOAD, "replay_url": PAYLOAD}
    challenge = {"id": PAYLOAD, "status": "finished", "matches": [match],
                 "standings": [row | {"average_place": PAYLOAD}]}  # fmt: skip
    stand_in.answer(201, {"data": challenge})
    argv = ["challenge", "some-ladder", "1", "2", "--server", stand_in.url, "--token", "t"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert "osc52=\\x1b]52;c;aGk=\\x07 title" in out and "average place osc52=\\x1b" in out
