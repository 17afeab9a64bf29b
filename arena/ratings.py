"""Skill ratings over plain data: openskill's Plackett-Luce model, ties supported.

A rating is a Gaussian belief about a bot's skill: ``mu`` (the estimate) and ``sigma`` (its
uncertainty). Leaderboards show the conservative ``display(r) = mu - 3 * sigma``, so a bot climbs
by winning *and* by playing enough games to be sure of.

Defaults (openskill's usual scale):

- a new bot starts at ``mu = 25``, ``sigma = 25 / 3`` (display 0);
- ``beta = 25 / 6``: the spread of one match's performance around skill;
- the dynamics term ``tau = 0``: a bot version never changes, so its uncertainty should only ever
  shrink; a positive tau keeps ratings wandering forever (the volatility Halite players
  complained about);
- a new version of a bot keeps its ``mu`` and has its ``sigma`` raised back to at least
  ``RESUBMIT_SIGMA`` (half the starting sigma): enough room to move fast if the new version is
  really different, without wiping the old standing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from openskill.models import PlackettLuce

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3
BETA = DEFAULT_MU / 6
TAU = 0.0
RESUBMIT_SIGMA = DEFAULT_SIGMA / 2

K = TypeVar("K", bound=Hashable)

_MODEL = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA, beta=BETA, tau=TAU)


@dataclass(frozen=True)
class Rating:
    """A skill estimate: mean ``mu`` and uncertainty ``sigma``."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    def to_json(self) -> dict[str, float]:
        return {"mu": self.mu, "sigma": self.sigma}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Rating:
        return cls(mu=float(obj["mu"]), sigma=float(obj["sigma"]))


def display(r: Rating) -> float:
    """The leaderboard score: the skill we are fairly sure the bot has, ``mu - 3 sigma``."""
    return r.mu - 3 * r.sigma


def new_version(r: Rating, sigma: float = RESUBMIT_SIGMA) -> Rating:
    """The starting rating of a resubmitted bot: same ``mu``, ``sigma`` raised to ``sigma``."""
    return Rating(mu=r.mu, sigma=max(r.sigma, sigma))


def rate_match(ratings: Sequence[Rating], ranking: Sequence[int]) -> list[Rating]:
    """New ratings after one match: ``ranking`` is the place per seat (1 best, ties share).

    Every seat is rated as a separate player.
    """
    if len(ratings) != len(ranking):
        raise ValueError(f"{len(ratings)} ratings but {len(ranking)} places")
    if len(ratings) < 2:
        raise ValueError("a rated match needs at least two seats")
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = _MODEL.rate(teams, ranks=[float(p) for p in ranking])
    return [Rating(mu=team[0].mu, sigma=team[0].sigma) for team in rated]


def rate_table(
    ratings: Mapping[K, Rating], seats: Sequence[K], ranking: Sequence[int]
) -> dict[K, Rating]:
    """Update ``ratings`` (by bot id) after one match whose seats hold ``seats``.

    A bot sitting in several seats (a local test against copies of itself) gets the mean of
    its seats' updates. Returns only the changed entries; ``ratings`` is left untouched.
    """
    before = [ratings.get(bot, Rating()) for bot in seats]
    after = rate_match(before, ranking)
    per_bot: dict[K, list[Rating]] = defaultdict(list)
    for bot, r in zip(seats, after, strict=True):
        per_bot[bot].append(r)
    return {bot: _mean(rs) for bot, rs in per_bot.items()}


def _mean(rs: Sequence[Rating]) -> Rating:
    return Rating(mu=sum(r.mu for r in rs) / len(rs), sigma=sum(r.sigma for r in rs) / len(rs))
