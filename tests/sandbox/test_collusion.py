"""Two colluding bots at one table learn nothing of each other's cards, under every backend.

The ``collude`` hostile bot sits in both seats of a two-player Svara: seat 0 publishes its hand
at every turn through every channel it knows (locks of each kind, the lock table in ``/proc``,
the session keyring, ``/tmp``, System V memory, abstract sockets, CPU timing through a
background thread); seat 1 reads each channel at its turns and names one card per channel that
it believes seat 0 holds (``COLLUDE <channel><TAB><card>`` on stderr, kept in the replay's step).

Neither bot's play depends on its cards, so without a channel seat 0's hand is, for seat 1, a
uniformly random 3 of the 33 cards it cannot see: each guess is right with probability at most
3/33, whatever rule produced it. The first guess of each deal is scored (deals are independent);
over a match the number of right guesses of a closed channel is then at most Binomial(n, 3/33),
and the test fails a channel whose count reaches a level that chance reaches with probability
below ``ALPHA`` (for all channels together). The control matches show the same test catching
every channel where nothing isolates the bots, and the timing channel where bots are not frozen.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.bots import load_bot
from arena.games import make_game
from arena.games.base import State
from arena.runner import TimeControl, run_match
from sandbox import get_sandbox
from sandbox.base import Sandbox
from sandbox.bwrap import BwrapSandbox
from sandbox.cgroups import Cgroup
from tests.sandbox.conftest import HOSTILE, backend_or_skip
from tests.sandbox.driver import fresh_slot, survivors

CHANNELS = ["posix", "ofd", "flock", "proc_locks", "keyring", "tmp", "sysv", "abstract", "timing"]
DEALS = 30
HAND, UNSEEN = 3, 36 - 3
CHANCE = HAND / UNSEEN
"""The probability that a guess made without a channel names one of seat 0's cards (at most)."""
ALPHA = 1e-6
"""How rarely a closed channel may fail the test by bad luck (all channels together)."""
CONTROL_ALPHA = 1e-3
"""How unlikely by chance a control's count must be for the channel to count as carrying the
hand. Lower than ``ALPHA``'s level: a timing channel is weak on a heavily loaded machine."""
MIN_SCORED = DEALS * 2 // 3
"""Deals that must have a scored guess for the match to count at all."""


@dataclass(frozen=True)
class Tally:
    """Per channel: deals with a scored guess, and how many of those guesses were right."""

    scored: dict[str, int]
    right: dict[str, int]

    def p_value(self, channel: str) -> float:
        """Probability that chance alone gets at least this many right."""
        return binomial_tail(self.scored[channel], CHANCE, self.right[channel])


def binomial_tail(n: int, p: float, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def threshold(n: int, alpha: float = ALPHA / len(CHANNELS)) -> int:
    """The fewest right guesses out of ``n`` that chance reaches with probability < ``alpha``."""
    k = 0
    while binomial_tail(n, CHANCE, k) >= alpha:
        k += 1
    return k


def test_the_threshold_is_far_above_chance_and_far_below_a_working_channel() -> None:
    assert threshold(DEALS) == 14  # chance expects 2.7 right out of 30; an open channel ~30
    assert binomial_tail(DEALS, CHANCE, threshold(DEALS)) < ALPHA / len(CHANNELS)


def ensure_session_keyring() -> None:
    """Give the referee a session keyring, as a service started from a login session has one
    (bots that inherit it could otherwise not share it: the keyring channel must be there to
    be closed)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.syscall.restype = ctypes.c_long
    keyctl, get_keyring_id, session, create = 250, 0, -3, 1
    assert libc.syscall(keyctl, get_keyring_id, session, create) > 0


def play(sandbox: Sandbox) -> Tally:
    """One match of the colluding pair under ``sandbox``; the receiver's guesses scored."""
    ensure_session_keyring()
    root = Path(tempfile.mkdtemp(prefix="arena-collude-", dir="/tmp"))
    try:
        return _play(sandbox, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _play(sandbox: Sandbox, root: Path) -> Tally:
    root.chmod(0o755)
    bot = root / "collude"
    shutil.copytree(HOSTILE / "collude", bot)
    token = f"collude-{os.getpid()}-{os.urandom(4).hex()}"
    (bot / "target.json").write_text(json.dumps({"token": token}))
    for path in [bot, *bot.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    manifest = load_bot(bot)
    game = make_game("svara", players=2, params={"deals": DEALS})
    seed = int.from_bytes(os.urandom(4))
    slot = fresh_slot()
    fresh_slot()  # seat 1's
    tc = TimeControl(init_s=60, move_s=20, bank_s=120)
    # One core for both seats: the timing channel's home, and what a host with fewer cores
    # than seats does (with a core per seat the busy thread would not even slow the receiver).
    outcome = run_match(
        game, [manifest, manifest], seed, sandbox=sandbox, time_control=tc, slot_base=slot,
        own_cores=False,
    )  # fmt: skip
    assert [s.status.value for s in outcome.seats] == ["ok", "ok"], outcome.seats
    assert survivors(sandbox, slot) == [] and survivors(sandbox, slot + 1) == []
    return score(game.new_state(seed), outcome.replay["steps"])


def score(state: State, steps: list[dict[str, Any]]) -> Tally:
    """Replay the match and score the first guesses of each deal against seat 0's real hand."""
    scored: Counter[str] = Counter()
    right: Counter[str] = Counter()
    deals_scored: set[int] = set()
    for step in steps:
        deal = state.observation(1)["deal"]
        guesses = _guesses(step)
        if step["seat"] == 1 and guesses and deal not in deals_scored:
            deals_scored.add(deal)
            hand = set(state.full_view()["hands"][0])
            for channel, card in guesses.items():
                scored[channel] += 1
                right[channel] += card in hand
        state.apply_action(state.action_from_json(step["action"]))
    return Tally(dict(scored), dict(right))


def _guesses(step: dict[str, Any]) -> dict[str, str]:
    found = {}
    for line in str(step.get("stderr") or "").splitlines():
        if line.startswith("COLLUDE "):
            channel, _, card = line.removeprefix("COLLUDE ").partition("\t")
            found[channel] = card
    return found


_played: dict[str, Tally] = {}


def tally(name: str) -> Tally:
    """The match under backend ``name``, played once per test session."""
    if name not in _played:
        _played[name] = play(sandbox_named(name))
    return _played[name]


def sandbox_named(name: str) -> Sandbox:
    if name == "none":
        return get_sandbox("none")
    if name == "bwrap-unfrozen":
        backend_or_skip("bwrap")
        return SharedWeightBwrap(freeze=False)
    return backend_or_skip(name)


class SharedWeightCgroup(Cgroup):
    """Groups whose CPU group sits below the common parent, as every bot's did before
    (``Cgroup.cpu_on_top``): the two bots then share one process's weight, so the sender's
    busy thread takes its share from the receiver whatever else the host runs."""

    cpu_on_top = False


class SharedWeightBwrap(BwrapSandbox):
    """The control's sandbox: unfrozen bots that compete for one CPU weight. At the top of
    the hierarchy each bot weighs one process among all the host's, and on a loaded machine
    the timing signal of one match drowned in the other jobs' noise."""

    cgroup_class = SharedWeightCgroup


@pytest.mark.slow
@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("backend", ["bwrap", "docker"])
def test_no_channel_tells_the_receiver_anything(backend: str, channel: str) -> None:
    result = tally(backend)
    n = result.scored.get(channel, 0)
    assert n >= MIN_SCORED, f"only {n} deals scored"
    right = result.right[channel]
    assert right < threshold(n), (
        f"{channel}: {right} of {n} guesses right (chance: {CHANCE * n:.1f}, "
        f"p = {result.p_value(channel):.2g})"
    )


@pytest.mark.slow
@pytest.mark.parametrize("channel", CHANNELS)
def test_every_channel_carries_the_hand_where_nothing_isolates(channel: str) -> None:
    # The bots clean up after themselves here (keys, segments, files); no other test runs
    # untrusted code with the ``none`` backend.
    result = tally("none")
    assert result.scored[channel] >= MIN_SCORED
    assert result.right[channel] >= threshold(result.scored[channel], CONTROL_ALPHA), result


@pytest.mark.slow
def test_the_timing_channel_carries_the_hand_where_bots_are_not_frozen() -> None:
    result = tally("bwrap-unfrozen")
    if result.right["timing"] < threshold(result.scored["timing"], CONTROL_ALPHA):
        # A control only shows the channel works: on a machine loaded enough to drown the
        # timing signal of one match, a second match decides (at most doubling the control's
        # own chance of passing by luck, 2 * CONTROL_ALPHA).
        result = play(sandbox_named("bwrap-unfrozen"))
    assert result.scored["timing"] >= MIN_SCORED
    assert result.right["timing"] >= threshold(result.scored["timing"], CONTROL_ALPHA), result
