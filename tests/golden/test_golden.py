"""Golden replays: every game and variant still plays its recorded greedy match exactly.

A failure after a deliberate rule change: regenerate with ``python -m tests.golden`` and commit.
"""

from __future__ import annotations

import pytest

from arena.replay import read_replay, verify
from tests.golden import Case, case_id, game_cases, golden_path, golden_replay, require_spec
from tests.golden.__main__ import main as regenerate

CASES = game_cases()
REGENERATE = "regenerate with `python -m tests.golden` if the change is deliberate"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_golden_replay_still_verifies(case: Case) -> None:
    require_spec(case[0])
    path = golden_path(case)
    assert path.exists(), f"no golden replay {path.name}: {REGENERATE}"
    problems = verify(read_replay(path))
    assert problems == [], f"{path.name} no longer replays: {problems}; {REGENERATE}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_greedy_play_still_matches_the_golden_replay(case: Case) -> None:
    require_spec(case[0])
    path = golden_path(case)
    if not path.exists():
        pytest.fail(f"no golden replay {path.name}: {REGENERATE}")
    recorded, fresh = read_replay(path), golden_replay(case)
    recorded_steps, fresh_steps = recorded.pop("steps"), fresh.pop("steps")
    pairs = enumerate(zip(recorded_steps, fresh_steps, strict=False))
    first = next((i for i, (a, b) in pairs if a != b), None)
    assert first is None, f"{path.name}: play differs from step {first}; {REGENERATE}"
    assert len(recorded_steps) == len(fresh_steps), f"{path.name}: length differs; {REGENERATE}"
    recorded.pop("engine")
    fresh.pop("engine")
    assert recorded == fresh, f"{path.name}: header or result differs; {REGENERATE}"


def test_regenerating_an_unknown_game_is_refused(capsys) -> None:
    assert regenerate(["no-such-game"]) == 2
    assert "no game or variant no-such-game; known: svoi-kozyri," in capsys.readouterr().err
