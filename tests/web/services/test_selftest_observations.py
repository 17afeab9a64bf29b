"""The self-test sends observations the way the bot asked for them in ``ready``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from arena.bots import load_bot
from arena.selftest import run_selftest
from sandbox import get_sandbox

STRICT_BOT = """
    import json, sys

    mode = sys.argv[1]
    wanted, other = ("delta", "observation") if mode == "delta" else ("observation", "delta")
    seen = {}
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            print(json.dumps({"type": "ready", "protocol": 1, "observations": mode}), flush=True)
        elif kind in ("request", "deal_end"):
            if wanted not in message or other in message:
                sys.exit(f"{kind} without {wanted}: {sorted(message)}")
            if mode == "delta":
                seen.update(message["delta"].get("set", {}))
            else:
                seen = message["observation"]
            if "hand" not in seen or "history" not in seen:
                sys.exit(f"no whole observation from {kind}: {sorted(seen)}")
            if kind == "request":
                print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
        elif kind == "shutdown":
            break
"""


@pytest.mark.parametrize("mode", ["delta", "full"])
def test_the_self_test_sends_observations_as_asked(tmp_path: Path, mode: str) -> None:
    (tmp_path / "bot.py").write_text(textwrap.dedent(STRICT_BOT))
    (tmp_path / "bot.toml").write_text(
        'name = "strict"\ngames = ["svoi-kozyri"]\nlanguage = "python"\n'
        f'run = ["python3", "bot.py", "{mode}"]\n'
    )
    report = run_selftest(get_sandbox("none"), load_bot(tmp_path), "svoi-kozyri", timeout=30.0)
    assert report.passed, report.log
    assert "the bot exited cleanly" in report.log
