"""A bot written only from docs/protocol.md (tests/fixtures/doc_bot) plays full matches."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.bots import load_bot
from arena.games import make_game
from arena.runner import BuiltinBot, SeatStatus, TimeControl, run_match
from sandbox import get_sandbox

DOC_BOT = Path(__file__).resolve().parents[1] / "fixtures" / "doc_bot"


def test_the_doc_bot_imports_nothing_of_the_project() -> None:
    source = (DOC_BOT / "doc_bot.py").read_text()
    imports = {line.split()[1] for line in source.splitlines() if line.startswith("import ")}
    assert imports <= {"json", "sys"}
    assert not [line for line in source.splitlines() if line.startswith("from ")]


@pytest.mark.parametrize(("game", "players"), [("svoi-kozyri", 3), ("challenge", 2)])
def test_the_doc_bot_plays_a_full_match(game: str, players: int) -> None:
    bot = load_bot(DOC_BOT)
    seats = [bot, *[BuiltinBot("greedy")] * (players - 1)]
    match = make_game(game, players=players, params={"deals": 2})
    tc = TimeControl(init_s=5.0, move_s=1.0, bank_s=5.0)
    outcome = run_match(match, seats, 9, sandbox=get_sandbox("none"), time_control=tc)
    report = outcome.seats[0]
    assert (report.status, report.strikes, report.self_name) == (SeatStatus.OK, 0, "doc")
    mine = [s for s in outcome.replay["steps"] if s["seat"] == 0]
    assert mine and all(s["debug"].startswith("bank ") for s in mine)
    seen = json.loads(report.stderr.split("doc-bot saw ", 1)[1].splitlines()[0])
    assert seen == {"deal_end": 2, "hello": 1, "match_end": 1, "request": len(mine)}


def test_the_minimal_bot_printed_in_the_docs_plays(tmp_path: Path) -> None:
    doc = (DOC_BOT.parents[2] / "docs" / "protocol.md").read_text()
    code = re.search(r"A dozen lines are enough.*?```python\n(.*?)```", doc, re.S)
    assert code is not None
    (tmp_path / "bot.py").write_text(code.group(1))
    (tmp_path / "bot.toml").write_text(
        'name = "minimal"\ngames = ["svoi-kozyri"]\nlanguage = "python"\n'
        'run = ["python3", "bot.py"]\n'
    )
    match = make_game("svoi-kozyri", players=2, params={"deals": 1})
    seats = [load_bot(tmp_path), BuiltinBot("greedy")]
    outcome = run_match(match, seats, 4, sandbox=get_sandbox("none"))
    assert outcome.seats[0].status is SeatStatus.OK and outcome.seats[0].strikes == 0
