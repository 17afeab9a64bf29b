"""The self-test's ending: a bot that leaves as soon as it reads ``match_end`` passes, even when
it is gone before ``shutdown`` is written (a race a loaded machine brings about)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from arena import selftest
from arena.bots import load_bot
from arena.protocol import Shutdown
from sandbox import get_sandbox

LEAVES_AT_MATCH_END = """
    import json, sys

    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
        elif message["type"] == "request":
            print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
        elif message["type"] == "match_end":
            sys.exit(0)
"""


def write_bot(folder: Path, body: str) -> None:
    (folder / "bot.py").write_text(textwrap.dedent(body))
    (folder / "bot.toml").write_text(
        'name = "leaver"\ngames = ["challenge"]\nlanguage = "python"\nrun = ["python3", "bot.py"]\n'
    )


def test_a_bot_gone_before_shutdown_is_written_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bot(tmp_path, LEAVES_AT_MATCH_END)
    told = selftest._Probe.tell
    refused: list[bool] = []

    def tell_after_it_left(probe: Any, message: Any) -> bool:
        if isinstance(message, Shutdown):  # let the bot read match_end and exit first
            assert probe.conn.process.wait(timeout=60.0) is not None
            accepted = told(probe, message)
            refused.append(not accepted)
            return accepted
        return told(probe, message)

    monkeypatch.setattr(selftest._Probe, "tell", tell_after_it_left)
    report = selftest.run_selftest(
        get_sandbox("none"), load_bot(tmp_path), "challenge", timeout=30.0
    )
    assert refused == [True], "shutdown reached a bot that had exited"
    assert report.passed, report.log
    assert "already left after match_end" in report.log
