"""Frames of a finished match served through kept checkpoints are the frames of a re-play from
the start, whatever order a viewer jumps in (end first, then back, then windows that straddle
a checkpoint)."""

from __future__ import annotations

import pytest

from arena import replay as replays
from tests.web.conftest import ROOT
from web.api.replays import _replayable, frames_for
from web.models import Match

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("name", ["kozyr-boys.json", "svara.json", "svoi-kozyri.json"])
def test_windows_through_checkpoints_equal_a_replay_from_the_start(name: str) -> None:
    doc = dict(replays.read_replay(GOLDEN / name))
    total = len(doc["steps"]) + 1
    match = Match(id=1, game_config=dict(doc["game"]), seed=doc["seed"])
    checkpoints = replays.Checkpoints(_replayable(doc), every=7)
    windows = [
        range(total - 3, total + 10),
        range(total // 2, total // 2 + 9),
        range(0, 4),
        range(13, 15),
        range(6, 8),
        range(total - 1, total),
    ]
    for window in windows:
        kept = frames_for(match, doc, None, set(), window, False, checkpoints)
        whole = frames_for(match, doc, None, set(), window, False)
        assert [f["index"] for f in kept] == [i for i in window if i < total]
        assert kept == whole, (name, window)
    assert len(checkpoints.kept) > 3, "the jumps kept states along the way"
