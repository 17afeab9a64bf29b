"""A remote seat (a person) in the referee: asked with its own view, policed like a bot."""

from __future__ import annotations

import random

import pytest

from arena.games import make_game, names
from arena.remote_seat import RemoteSeat, Turn
from arena.replay import observation_at, verify
from arena.runner import BuiltinBot, TimeControl, run_match
from sandbox import get_sandbox


@pytest.mark.parametrize("game_name", names())
def test_a_remote_seat_sees_its_own_view_and_its_answers_are_played(game_name: str) -> None:
    game = make_game(game_name)
    turns: list[Turn] = []
    rng = random.Random(3)

    def ask(turn: Turn) -> int:
        turns.append(turn)
        return rng.randrange(len(turn.legal_actions))

    seats = [BuiltinBot("greedy")] * game.players
    seats[0] = RemoteSeat("ada", ask)  # type: ignore[call-overload]
    outcome = run_match(game, seats, 7, sandbox=get_sandbox("none"), pin_cpu=False)
    replay = outcome.replay
    assert verify(replay) == []
    assert turns, "the person was never asked"
    assert replay["seats"][0]["kind"] == "human"
    for turn in turns:
        assert turn.observation == observation_at(replay, turn.step, 0)
        assert replay["steps"][turn.step]["seat"] == 0
        assert len(turn.labels) == len(turn.legal_actions)
    assert outcome.seats[0].status == "ok" and not outcome.seats[0].forfeited


def test_a_remote_seat_that_never_answers_forfeits_like_a_silent_bot() -> None:
    game = make_game("svara")
    asked: list[float] = []

    def ask(turn: Turn) -> None:
        asked.append(turn.wait_s)
        return None

    seats: list = [BuiltinBot("greedy")] * game.players
    seats[1] = RemoteSeat("gone", ask, move_s=0.01, bank_s=0.02)
    outcome = run_match(game, seats, 5, sandbox=get_sandbox("none"), pin_cpu=False,
                        time_control=TimeControl(max_strikes=2))  # fmt: skip
    assert len(asked) == 2, "a forfeited seat is asked no more"
    report = outcome.seats[1]
    assert report.forfeited and report.status == "timeout" and report.strikes == 2
    assert outcome.result.ranking[1] == max(outcome.result.ranking)
    assert verify(outcome.replay) == []


def test_an_answer_out_of_range_is_an_illegal_action() -> None:
    game = make_game("svara")
    seats: list = [BuiltinBot("greedy")] * game.players
    seats[0] = RemoteSeat("wild", lambda turn: len(turn.legal_actions))
    outcome = run_match(game, seats, 5, sandbox=get_sandbox("none"), pin_cpu=False)
    assert outcome.seats[0].status == "illegal_action"
    assert verify(outcome.replay) == []


@pytest.mark.parametrize("game_name", names())
def test_every_move_before_a_persons_turn_is_reported_before_they_are_asked(
    game_name: str,
) -> None:
    """The live feed hears of each step before the person is asked: the table on their screen
    shows the bots' last moves when they choose (the steps reported equal the turn's step)."""
    game = make_game(game_name)
    reported: list[int] = []
    behind: list[tuple[int, int]] = []
    rng = random.Random(5)

    def ask(turn: Turn) -> int:
        if len(reported) != turn.step:
            behind.append((turn.step, len(reported)))
        return rng.randrange(len(turn.legal_actions))

    seats = [BuiltinBot("greedy")] * game.players
    seats[1] = RemoteSeat("ada", ask)  # type: ignore[call-overload]
    run_match(
        game,
        seats,
        11,
        sandbox=get_sandbox("none"),
        pin_cpu=False,
        on_step=lambda _state, _step: reported.append(1),
    )
    assert behind == [], f"(turn step, steps reported) when asked: {behind[:5]}"
