"""The bot lifecycle's table of moves, and who is told when a match ends."""

from __future__ import annotations

import subprocess
import sys

import pytest
from flask import Flask

from tests.web.conftest import ROOT
from web.models import BotVersion, MatchKind, VersionStatus
from web.services import ladders, lifecycle, matches, tournaments

S = VersionStatus


def test_the_table_of_moves_covers_every_status_and_ends_in_rejected_or_retired() -> None:
    assert set(lifecycle.MOVES) == set(S)
    assert lifecycle.MOVES[S.REJECTED] == frozenset()
    # A retired version passed validation: only its owner's choice brings it back to play.
    assert lifecycle.MOVES[S.RETIRED] == frozenset({S.ACTIVE})
    reachable, todo = {S.UPLOADED}, [S.UPLOADED]
    while todo:
        for nxt in lifecycle.MOVES[todo.pop()] - reachable:
            reachable.add(nxt)
            todo.append(nxt)
    assert reachable == set(S)


@pytest.mark.parametrize(
    ("start", "to"),
    [
        (S.REJECTED, S.ACTIVE),
        (S.RETIRED, S.BUILDING),
        (S.UPLOADED, S.ACTIVE),
        (S.ACTIVE, S.UPLOADED),
    ],
)
def test_a_move_the_table_does_not_allow_is_refused(start: S, to: S) -> None:
    version = BotVersion(id=7, status=start)
    with pytest.raises(lifecycle.IllegalMove, match=f"version 7: {start} cannot become {to}"):
        lifecycle.move(version, to)
    assert version.status == start


def test_a_move_the_table_allows_is_made() -> None:
    version = BotVersion(id=7, status=S.VALIDATING)
    lifecycle.move(version, S.ACTIVE)
    assert version.status == S.ACTIVE


def test_every_listening_service_is_told_of_its_matches_ending(pg_app: Flask) -> None:
    assert matches.listeners(MatchKind.VALIDATION) == (lifecycle.validation_ended,)
    assert matches.listeners(MatchKind.LADDER) == (ladders.ladder_match_ended,)
    assert matches.listeners(MatchKind.TOURNAMENT) == (tournaments.tournament_match_ended,)


@pytest.mark.parametrize(
    ("entry", "told"),
    [
        ("web.services.play", "['ladder', 'tournament', 'validation']"),
        ("web.services.lifecycle", "['ladder', 'validation']"),
    ],
)
def test_a_worker_has_every_listener_registered_by_importing_its_entry(
    entry: str, told: str
) -> None:
    """A fresh interpreter that imports only what a worker imports to play matches (``play``)
    or to reap them (the reaper's task imports ``lifecycle`` and ``tournaments``)."""
    code = (
        f"import {entry}\n"
        "from web.services import matches\n"
        "from web.models import MatchKind\n"
        "print(sorted(str(k) for k in MatchKind if matches.listeners(k)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == told
