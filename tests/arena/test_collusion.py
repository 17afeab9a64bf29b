"""``arena.collusion``: a pair that talks by answer time is flagged; honest pairs are not.

The main test plays real matches between real bot processes: the colluding pair
``hostile/time-signal-sender`` (author "sam") and ``hostile/time-signal-reader`` ("rita") and
two honest bots, ``svara-heuristic`` ("hal") and ``tests/fixtures/jittery_bot`` ("jay", random
moves after random pauses of 0-15 ms: times as varied as a signal's), at every table of
three of the four, each seat order twice (``MATCHES`` matches of ``DEALS`` deals, fixed seeds),
without a sandbox and under bubblewrap.
The sender answers 50 ms later when its hand is strong; the reader folds when the table took
over 30 ms since its last turn.
"""

from __future__ import annotations

import random
from itertools import combinations
from pathlib import Path

import pytest

from arena.agents import get_agent
from arena.bots import load_bot
from arena.collusion import (
    Finding,
    MatchData,
    analyse,
    chi_square_survival,
    holm,
    mann_whitney_greater,
    place_scores,
)
from arena.games import make_game
from arena.replay import Replay, agent_rng, record_builtin_match
from arena.runner import TimeControl, run_match
from sandbox import get_sandbox
from tests.sandbox.conftest import backend_or_skip

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"
AUTHORS = {
    "sam": SAMPLES / "hostile" / "time-signal-sender",
    "rita": SAMPLES / "hostile" / "time-signal-reader",
    "hal": SAMPLES / "python" / "svara-heuristic",
    "jay": Path(__file__).resolve().parents[1] / "fixtures" / "jittery_bot",
}
DEALS = 40
ROUNDS = 2
MATCHES = ROUNDS * 4 * 3
"""Two rounds of the four tables of three, each in its three seat orders: 24 matches."""
LEVEL = 1e-3
"""The report's family-wise level here: stricter than the site's default (0.01), so that
an honest pair is flagged by bad luck at most once in a thousand runs."""


@pytest.mark.parametrize(
    ("x", "df", "p"),
    [(3.841459, 1, 0.05), (5.991465, 2, 0.05), (7.814728, 3, 0.05), (18.307038, 10, 0.05),
     (6.634897, 1, 0.01), (30.577914, 15, 0.01), (0.0, 4, 1.0)],
)  # fmt: skip
def test_the_chi_square_tail_matches_the_tables(x: float, df: int, p: float) -> None:
    assert chi_square_survival(x, df) == pytest.approx(p, abs=1e-6)


def test_the_chi_square_tail_of_a_huge_statistic_is_zero_not_an_error() -> None:
    assert chi_square_survival(1e6, 41) == 0.0


def test_mann_whitney_sees_a_shift_and_not_its_absence() -> None:
    _, shifted = mann_whitney_greater([0.6, 0.7, 0.8, 0.9, 1.0, 1.0], [0.0, 0.1, 0.2, 0.5, 0.5])
    _, same = mann_whitney_greater([0.0, 0.5, 1.0, 0.5, 0.0], [0.0, 0.5, 1.0, 0.5, 0.0])
    assert shifted < 0.01 < 0.5 <= same


def test_holm_adjusts_in_steps_and_flags_below_alpha() -> None:
    tests = [Finding(p_value=p) for p in (0.001, 0.004, 0.03, 0.5)] + [Finding()]
    holm(tests, 0.01)
    assert [t.adjusted for t in tests] == [0.004, 0.012, 0.06, 0.5, None]
    assert [t.flagged for t in tests] == [True, False, False, False, False]


def simulated(signal: bool, matches: int = 30) -> list[MatchData]:
    """Matches of built-in random agents at 3-seat Svara between authors amy, bob and cid
    (seats rotating), whose recorded answer times are rewritten: noise (now and then a pause of
    6-60 ms, as a loaded host gives), plus (with ``signal``) 40 ms more for amy's answers that
    come just before bob folds."""
    data = []
    for seed in range(matches):
        state = make_game("svara", players=3, params={"deals": 8}).new_state(seed)
        agents = [get_agent("random")] * 3
        replay = record_builtin_match(state, agents, ["a", "b", "c"], agent_rng(seed), timed=False)
        authors = ("amy", "bob", "cid")[seed % 3 :] + ("amy", "bob", "cid")[: seed % 3]
        retime(replay, random.Random(seed), authors if signal else None)
        data.append(MatchData(authors, replay))
    return data


def retime(replay: Replay, rng: random.Random, authors: tuple[str, ...] | None) -> None:
    steps = replay["steps"]
    for index, step in enumerate(steps):
        step["time_ms"] = rng.uniform(0.5, 3.0) + (rng.uniform(6, 60) if rng.random() < 0.2 else 0)
        nxt = steps[index + 1] if index + 1 < len(steps) else None
        if authors is None or nxt is None or authors[step["seat"]] != "amy":
            continue
        if authors[nxt["seat"]] == "bob" and nxt["action"]["type"] == "fold":
            step["time_ms"] += 40.0


def test_a_simulated_signal_is_flagged_and_its_absence_is_not() -> None:
    report = analyse(simulated(signal=True))
    assert report.matches == 30 and report.skipped == 0
    assert [(p.a, p.b) for p in report.flagged] == [("amy", "bob")], report.to_json()
    assert report.flagged[0].a_to_b.flagged and not report.flagged[0].b_to_a.flagged
    quiet = analyse(simulated(signal=False))
    assert not quiet.flagged, quiet.to_json()
    assert all(p.a_to_b.p_value is not None for p in quiet.pairs), "the noise is tested"


def test_a_replay_that_does_not_replay_is_skipped_not_fatal() -> None:
    data = simulated(signal=False, matches=3)
    broken = dict(data[0].replay)
    broken["steps"] = [{"seat": 9, "deal": 0, "action": {"type": "fold"}, "time_ms": 1.0}]
    report = analyse([*data, MatchData(data[0].authors, broken)])  # type: ignore[arg-type]
    assert (report.matches, report.skipped) == (3, 1)


def test_place_scores_run_from_first_to_last() -> None:
    replay = simulated(signal=False, matches=1)[0].replay
    replay["result"]["ranking"] = [2, 1, 3]
    assert place_scores(replay) == [0.5, 1.0, 0.0]


@pytest.fixture(scope="module", params=["none", "bwrap"])
def played(request: pytest.FixtureRequest) -> list[MatchData]:
    """The ``MATCHES`` real matches, the bots in real processes: without a sandbox (all four
    are this project's own and only play cards), and under bubblewrap, where every bot not to
    move is frozen (its clock still runs: that is the channel)."""
    bots = {author: load_bot(path) for author, path in AUTHORS.items()}
    sandbox = get_sandbox("none") if request.param == "none" else backend_or_skip("bwrap")
    data, seed = [], 1000
    for _ in range(ROUNDS):
        for table in combinations(sorted(AUTHORS), 3):
            for turn in range(3):
                seats = table[turn:] + table[:turn]
                seed += 1
                game = make_game("svara", players=3, params={"deals": DEALS})
                outcome = run_match(
                    game,
                    [bots[a] for a in seats],
                    seed,
                    sandbox=sandbox,
                    time_control=TimeControl(move_s=5.0, bank_s=60.0),
                )
                assert all(s.status == "ok" for s in outcome.seats), outcome.seats
                data.append(MatchData(tuple(seats), outcome.replay))  # type: ignore[arg-type]
    return data


def test_the_colluding_pair_is_flagged_and_the_honest_pair_is_not(
    played: list[MatchData],
) -> None:
    report = analyse(played, alpha=LEVEL)
    assert report.matches == MATCHES
    pairs = {(p.a, p.b): p for p in report.pairs}
    colluders = pairs["rita", "sam"]
    assert colluders.b_to_a.flagged, colluders.to_json()  # sam's times -> rita's choices
    assert colluders.b_to_a.adjusted is not None and colluders.b_to_a.adjusted < LEVEL / 100
    honest = pairs["hal", "jay"]
    assert not honest.flagged, honest.to_json()
    assert honest.b_to_a.p_value is not None, "the jittery bot's times are tested, not skipped"
    # Only the reader reads time: nobody's times may seem to steer the others' choices. (Any
    # seat's delay changes what the reader sees, so an honest seat -> reader test may flag.)
    for pair in report.pairs:
        for test, reader in ((pair.a_to_b, pair.b), (pair.b_to_a, pair.a)):
            assert reader == "rita" or not test.flagged, pair.to_json()
