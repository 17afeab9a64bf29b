"""The engines play exactly as before a rewrite: random playouts against recorded fingerprints.

Every game and variant plays short matches (seeds 1, 2, ...) with uniformly random legal actions
until at least ``STEPS`` actions are played. Each step's
seat to act and legal actions, the acting seat's observation every few steps, the final full view
and the result are folded into one SHA-256 per case. The fingerprints in ``engine_digests.json``
were taken from the engines as they stood before they were made faster, so a rewrite of a state's
representation or of its legal-action and apply paths must reproduce every one.

After a deliberate rule change: ``python -m tests.arena.games.test_engine_equivalence`` rewrites
the file (then commit it with the change).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

from arena.games import make_game
from tests.golden import Case, case_id, game_cases, make_case, require_spec

DIGESTS = Path(__file__).with_name("engine_digests.json")
STEPS = 1500
MIN_MATCHES = 2
OBSERVE_EVERY = 7
"""Observations are costly next to a move; every seventh step still covers each kind of move."""
TABLE_SIZES = {"svoi-kozyri": (2, 3), "svoi-kozyri-tricks": (3, 5), "svara": (2, 6)}
"""Table sizes other than the default, played in each game's default setup."""

Sized = tuple[Case, int | None]


def sized_cases() -> list[Sized]:
    """Every game and variant at its default table size, then the other sizes listed above."""
    extra = [((name, None), n) for name, sizes in TABLE_SIZES.items() for n in sizes]
    return [(case, None) for case in game_cases()] + extra


def sized_id(sized: Sized) -> str:
    case, players = sized
    return case_id(case) if players is None else f"{case_id(case)}@{players}p"


def fingerprint(sized: Sized) -> str:
    """The digest of the random matches of a case at a table size."""
    case, players = sized
    game = make_case(case, deals=2)
    if players is not None:
        game = make_game(case[0], players, game.params)
    digest = hashlib.sha256()
    seed = steps = 0
    while steps < STEPS or seed < MIN_MATCHES:
        seed += 1
        state = game.new_state(seed)
        rng = random.Random(seed)
        step = 0
        while not state.is_terminal():
            legal = state.legal_actions()
            seat = state.current_player()
            digest.update(f"{seat}:{legal}\n".encode())
            if step % OBSERVE_EVERY == 0:
                digest.update(json.dumps(state.observation(seat), sort_keys=True).encode())
            state.apply_action(rng.choice(legal))
            step += 1
        digest.update(json.dumps(state.full_view(), sort_keys=True).encode())
        digest.update(json.dumps(state.result().to_json(), sort_keys=True).encode())
        steps += step
    return digest.hexdigest()


def fingerprints() -> dict[str, str]:
    return {sized_id(sized): fingerprint(sized) for sized in sized_cases()}


@pytest.mark.parametrize("sized", sized_cases(), ids=sized_id)
def test_random_playouts_match_the_recorded_engine(sized: Sized) -> None:
    require_spec(sized[0][0])
    recorded = json.loads(DIGESTS.read_text())
    name = sized_id(sized)
    assert name in recorded, f"no fingerprint for {name}: run python -m {__name__}"
    assert fingerprint(sized) == recorded[name], f"{name} plays differently from the record"


if __name__ == "__main__":
    DIGESTS.write_text(json.dumps(fingerprints(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {DIGESTS}", file=sys.stderr)
