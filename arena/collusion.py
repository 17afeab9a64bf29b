"""Collusion in the statistics: pairs of authors who do better together, or who talk by timing.

How long a bot takes to answer is public (every replay records it, and a bot can time its own
turns), so two bots of a table can always pass each other a little information through it.
Nothing in the referee can close that channel short of fixed-time turns; the statistics here
make its use visible instead. Over a set of finished matches, for every pair of authors:

* **Together against apart.** Each author's result in a match (its place, scaled from 1 for
  first to 0 for last) in the matches where the other author also had a seat, against the
  matches where it did not: a one-sided Mann-Whitney test per author. A colluding pair gains
  at the other seats' expense, so the pair is suspect only when *both* do better together; the
  pair's p-value is the larger of the two (an intersection-union test).
* **Timing predicts choices.** For each decision of author B's bot, the last answer of author
  A's bot at the same table since B's previous decision, in the same deal: was it more than
  ``SIGNAL_MS`` slower or faster than A's usual (median) time at that moment of a deal, or
  neither? Against it, the kind of action B chose (``"fold"``, ``"call"``...). Pearson's
  chi-square test of independence, summed over strata of like situations (B's legal action
  kinds, B's turn in the deal, whether B's own previous answer was slow, the kinds of every
  move since B's previous one) with their degrees of freedom summed, so that B reacting to the
  public moves (A's or another seat's, whose timing A's may echo), to the phase of the game or
  to its own slowness does not count. Each ordered pair (A signals, B reads) is one
  test; the conditional mutual information between the two (in bits per decision) says how
  much the timing told.

Every test of the report is one family: Holm's step-down correction keeps the chance that any
honest pair is flagged at or below ``alpha`` (when the tests' laws hold). Tests with too little
data are reported without a p-value and never flag.

Everything here is pure: it takes replays (the documents of ``arena.replay``) and who wrote
each seat's bot, and re-plays the replays to learn each decision's legal actions.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import permutations
from statistics import median
from typing import Any

from arena.replay import Replay, ReplayError, states

ALPHA = 0.01
"""Default family-wise significance level of a report."""

MIN_OBSERVATIONS = 30
"""Fewest paired decisions for a timing test."""

SIGNAL_MS = 5.0
"""The smallest difference from a bot's usual answer time counted as a signal. A bot reading
its partner's time sees it through the scheduling jitter of a busy host (milliseconds), so a
usable signal is larger; smaller differences are mostly echoes (a bot left idle longer wakes
a little slower), which would make honest neighbours of a signalling bot look guilty."""

MIN_MATCHES = 5
"""Fewest matches on each side (together and apart) for a together-against-apart test."""


@dataclass(frozen=True)
class MatchData:
    """One finished match as the statistics see it: its replay and each seat's author."""

    authors: tuple[str, ...]
    replay: Replay


@dataclass(frozen=True)
class Decision:
    """One decision of a replay: who, in which deal, how long, what, and what could be done."""

    seat: int
    deal: int
    turn: int
    time_ms: float | None
    kind: str
    choices: tuple[str, ...]

    @property
    def moment(self) -> int:
        """Its seat's first, second, third or a later decision of the deal (0-3): bots often
        take longer over a deal's first decision, and choose differently at it."""
        return min(self.turn, 3)


@dataclass
class Finding:
    """One statistical test of a report: its statistic, p-value and (after correction) flag."""

    statistic: float | None = None
    p_value: float | None = None
    adjusted: float | None = None
    flagged: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "statistic": _rounded(self.statistic),
            "p_value": _rounded(self.p_value),
            "adjusted_p_value": _rounded(self.adjusted),
            "flagged": self.flagged,
        }


@dataclass
class Together(Finding):
    """One author's results with and without the other at the table."""

    together: int = 0
    apart: int = 0
    mean_together: float | None = None
    mean_apart: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "matches_together": self.together,
            "matches_apart": self.apart,
            "mean_place_score_together": _rounded(self.mean_together),
            "mean_place_score_apart": _rounded(self.mean_apart),
            **super().to_json(),
        }


@dataclass
class Timing(Finding):
    """Whether ``sender``'s answer times predict ``receiver``'s next choices."""

    observations: int = 0
    degrees_of_freedom: int = 0
    mutual_information_bits: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "observations": self.observations,
            "degrees_of_freedom": self.degrees_of_freedom,
            "mutual_information_bits": _rounded(self.mutual_information_bits),
            **super().to_json(),
        }


@dataclass
class PairReport:
    """Everything the report says about authors ``a`` and ``b`` (``a`` < ``b``)."""

    a: str
    b: str
    a_results: Together
    b_results: Together
    together: Finding
    a_to_b: Timing
    b_to_a: Timing

    @property
    def flagged(self) -> bool:
        return any(t.flagged for t in (self.together, self.a_to_b, self.b_to_a))

    def tests(self) -> list[Finding]:
        return [self.together, self.a_to_b, self.b_to_a]

    def to_json(self) -> dict[str, Any]:
        results = [
            {"author": self.a, **self.a_results.to_json()},
            {"author": self.b, **self.b_results.to_json()},
        ]
        return {
            "authors": [self.a, self.b],
            "flagged": self.flagged,
            "together": {**self.together.to_json(), "results": results},
            "timing": [
                {"sender": self.a, "reader": self.b, **self.a_to_b.to_json()},
                {"sender": self.b, "reader": self.a, **self.b_to_a.to_json()},
            ],
        }


@dataclass
class Report:
    """A report over a set of matches: one entry per pair of authors who shared a table."""

    alpha: float
    matches: int
    skipped: int
    pairs: list[PairReport] = field(default_factory=list)

    @property
    def flagged(self) -> list[PairReport]:
        return [pair for pair in self.pairs if pair.flagged]

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "matches": self.matches,
            "skipped_matches": self.skipped,
            "tests": sum(1 for pair in self.pairs for t in pair.tests() if t.p_value is not None),
            "flagged_pairs": len(self.flagged),
            "pairs": [pair.to_json() for pair in self.pairs],
        }


# --- the report ---------------------------------------------------------------------------------


def analyse(matches: Iterable[MatchData], alpha: float = ALPHA) -> Report:
    """The report over ``matches`` at family-wise level ``alpha``, flagged pairs first."""
    games: list[tuple[MatchData, list[Decision]]] = []
    skipped = 0
    for match in matches:
        try:
            games.append((match, decisions(match.replay)))
        except (ReplayError, KeyError, TypeError, ValueError):
            skipped += 1  # a replay that does not re-play is no evidence either way
    pairs = [_pair(a, b, games) for a, b in _pairs_seen(m for m, _ in games)]
    report = Report(alpha=alpha, matches=len(games), skipped=skipped, pairs=pairs)
    holm([t for pair in pairs for t in pair.tests()], alpha)
    report.pairs.sort(key=_suspicion)
    return report


def _suspicion(pair: PairReport) -> tuple[bool, float]:
    smallest = min((t.adjusted for t in pair.tests() if t.adjusted is not None), default=1.0)
    return (not pair.flagged, smallest)


def _pairs_seen(matches: Iterable[MatchData]) -> list[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    for match in matches:
        names = sorted(set(match.authors))
        seen.update((a, b) for i, a in enumerate(names) for b in names[i + 1 :])
    return sorted(seen)


def _pair(a: str, b: str, games: list[tuple[MatchData, list[Decision]]]) -> PairReport:
    a_results, b_results = together_test(a, b, games), together_test(b, a, games)
    both = [t.p_value for t in (a_results, b_results) if t.p_value is not None]
    joint = Finding(p_value=max(both) if len(both) == 2 else None)
    return PairReport(
        a, b, a_results, b_results, joint, timing_test(a, b, games), timing_test(b, a, games)
    )


def holm(tests: Sequence[Finding], alpha: float) -> None:
    """Holm's step-down correction over ``tests`` (those with a p-value): sets each test's
    adjusted p-value and flags those below ``alpha``."""
    ranked = sorted((t for t in tests if t.p_value is not None), key=lambda t: t.p_value or 0.0)
    running = 0.0
    for index, test in enumerate(ranked):
        running = max(running, min(1.0, (len(ranked) - index) * (test.p_value or 0.0)))
        test.adjusted = running
        test.flagged = running < alpha


# --- decisions ----------------------------------------------------------------------------------


def decisions(replay: Replay) -> list[Decision]:
    """Every decision of ``replay`` with the kinds of action its seat could choose from."""
    found = []
    turns: dict[tuple[int, int], int] = defaultdict(int)
    for state, step in zip(states(replay), replay["steps"], strict=False):
        choices = tuple(sorted({str(a.get("type")) for a in state.legal_actions_json()}))
        time_ms = step.get("time_ms")
        timed = float(time_ms) if isinstance(time_ms, int | float) else None
        kind = str(step["action"].get("type")) if isinstance(step["action"], dict) else "?"
        turn = turns[step["seat"], step["deal"]]
        turns[step["seat"], step["deal"]] += 1
        found.append(Decision(step["seat"], step["deal"], turn, timed, kind, choices))
    return found


def place_scores(replay: Replay) -> list[float]:
    """Each seat's place scaled to 1 (first) .. 0 (last)."""
    ranking = [int(p) for p in replay["result"]["ranking"]]
    worst = len(ranking)
    return [(worst - p) / (worst - 1) if worst > 1 else 0.5 for p in ranking]


# --- together against apart ---------------------------------------------------------------------


def together_test(a: str, b: str, games: list[tuple[MatchData, list[Decision]]]) -> Together:
    """Does ``a`` do better in the matches where ``b`` also sits? (one-sided Mann-Whitney)"""
    together: list[float] = []
    apart: list[float] = []
    for match, _ in games:
        if a not in match.authors:
            continue
        scores = place_scores(match.replay)
        own = [s for s, author in zip(scores, match.authors, strict=True) if author == a]
        (together if b in match.authors else apart).append(sum(own) / len(own))
    test = Together(together=len(together), apart=len(apart))
    if together:
        test.mean_together = sum(together) / len(together)
    if apart:
        test.mean_apart = sum(apart) / len(apart)
    if min(len(together), len(apart)) >= MIN_MATCHES:
        test.statistic, test.p_value = mann_whitney_greater(together, apart)
    return test


def mann_whitney_greater(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """U of ``x`` against ``y`` and the one-sided p-value that ``x`` tends to be larger (normal
    approximation with a correction for ties and for continuity)."""
    pooled = sorted([(v, 0) for v in x] + [(v, 1) for v in y])
    ranks = _mid_ranks([v for v, _ in pooled])
    n1, n2, n = len(x), len(y), len(x) + len(y)
    u = sum(r for r, (_, side) in zip(ranks, pooled, strict=True) if side == 0) - n1 * (n1 + 1) / 2
    ties = sum(t**3 - t for t in _tie_sizes([v for v, _ in pooled]))
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if variance <= 0:
        return u, 1.0
    z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(variance)
    return u, 0.5 * math.erfc(z / math.sqrt(2))


def _mid_ranks(ordered: list[float]) -> list[float]:
    ranks, i = [], 0
    for size in _tie_sizes(ordered):
        ranks += [i + (size + 1) / 2] * size
        i += size
    return ranks


def _tie_sizes(ordered: list[float]) -> list[int]:
    sizes: list[int] = []
    for index, value in enumerate(ordered):
        if index and value == ordered[index - 1]:
            sizes[-1] += 1
        else:
            sizes.append(1)
    return sizes


# --- timing predicts choices --------------------------------------------------------------------

Stratum = tuple[tuple[str, ...], int, bool, tuple[str, ...]]
"""What the reader could do (its legal action kinds), at which moment of the deal, whether its
own previous answer in the deal was slow, and the kinds of every move made since its previous
one (the public events it may react to, the sender's among them)."""


def timing_test(sender: str, reader: str, games: list[tuple[MatchData, list[Decision]]]) -> Timing:
    """Do ``sender``'s answer times predict ``reader``'s next choices? (a stratified test)"""
    tables: dict[Stratum, dict[tuple[int, str], int]] = defaultdict(lambda: defaultdict(int))
    for match, found in games:
        for stratum, level, kind in signals(match, found, sender, reader):
            tables[stratum][level, kind] += 1
    test = Timing(observations=sum(sum(t.values()) for t in tables.values()))
    statistic, df, information = 0.0, 0, 0.0
    for table in tables.values():
        part, part_df = pearson_statistic(table)
        statistic, df = statistic + part, df + part_df
        information += information_nats(table)
    test.degrees_of_freedom = df
    if test.observations >= MIN_OBSERVATIONS and df > 0:
        test.statistic = statistic
        test.p_value = chi_square_survival(statistic, df)
        test.mutual_information_bits = information / test.observations / math.log(2)
    return test


def signals(
    match: MatchData, found: list[Decision], sender: str, reader: str
) -> Iterator[tuple[Stratum, int, str]]:
    """For each decision of a ``reader`` seat: its stratum, how the last answer of a ``sender``
    seat since the reader's previous decision in the same deal compared with that seat's usual
    time (``_level``), and the kind of action the reader chose.

    The usual time is the seat's median in the match at the same moment of a deal
    (``Decision.moment``), so that answers slow only because they open a deal are no signal."""
    seats = match.authors
    for s_seat, r_seat in permutations(range(len(seats)), 2):
        if seats[s_seat] != sender or seats[r_seat] != reader:
            continue
        usual = _usual_times([d for d in found if d.seat == s_seat])
        own_usual = _usual_times([d for d in found if d.seat == r_seat])
        last: Decision | None = None
        own: Decision | None = None
        since: list[str] = []  # the kinds of every move since the reader's last, in order
        for decision in found:
            if own is not None and decision.deal != own.deal:
                since = []
            if decision.seat == s_seat:
                last = decision
            if decision.seat != r_seat:
                since.append(decision.kind)
                continue
            level = _level(last, decision, usual)
            if last is not None and level is not None:
                slow_before = _level(own, decision, own_usual) == 1
                yield (
                    (decision.choices, decision.moment, slow_before, tuple(since)),
                    level,
                    decision.kind,
                )
            last, own, since = None, decision, []


def _usual_times(own: list[Decision]) -> dict[int, float]:
    """Per moment of a deal, one seat's median answer time (in ms) in a match."""
    times: dict[int, list[float]] = defaultdict(list)
    for decision in own:
        if decision.time_ms is not None:
            times[decision.moment].append(decision.time_ms)
    return {moment: median(seen) for moment, seen in times.items()}


def _level(last: Decision | None, decision: Decision, usual: dict[int, float]) -> int | None:
    """-1, 0 or 1: ``last`` (a decision since ``decision``'s seat last moved, in the same deal)
    was faster than its seat's usual time at that moment of a deal by more than
    ``SIGNAL_MS``, within it, or slower by more."""
    if last is None or last.deal != decision.deal or last.time_ms is None:
        return None
    gap = last.time_ms - usual[last.moment]
    return 0 if abs(gap) <= SIGNAL_MS else (1 if gap > 0 else -1)


def information_nats(table: dict[tuple[int, str], int]) -> float:
    """The mutual information of a two-way table's two directions, in nats, times its count."""
    n = sum(table.values())
    rows: dict[int, int] = defaultdict(int)
    cols: dict[str, int] = defaultdict(int)
    for (row, col), count in table.items():
        rows[row] += count
        cols[col] += count
    return sum(
        count * math.log(count * n / (rows[row] * cols[col]))
        for (row, col), count in table.items()
        if count
    )


def pearson_statistic(table: dict[tuple[int, str], int]) -> tuple[float, int]:
    """Pearson's chi-square statistic of independence of a two-way table of counts, and its
    degrees of freedom (the levels seen in each direction, less one, multiplied)."""
    n = sum(table.values())
    rows: dict[int, int] = defaultdict(int)
    cols: dict[str, int] = defaultdict(int)
    for (row, col), count in table.items():
        rows[row] += count
        cols[col] += count
    statistic = 0.0
    for row, row_total in rows.items():
        for col, col_total in cols.items():
            expected = row_total * col_total / n
            statistic += (table.get((row, col), 0) - expected) ** 2 / expected
    return statistic, (len(rows) - 1) * (len(cols) - 1)


def chi_square_survival(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square with ``df`` (a whole number) degrees of freedom: the
    regularized upper incomplete gamma function, summed in closed form (in logarithms, so that
    large statistics neither overflow nor lose the tail)."""
    if x <= 0:
        return 1.0
    y = x / 2
    if df % 2 == 0:  # Q(m, y) = e^-y * sum_{k<m} y^k / k!
        logs = [k * math.log(y) - y - math.lgamma(k + 1) for k in range(df // 2)]
        return min(1.0, sum(math.exp(v) for v in logs))
    # Q(m + 1/2, y) = erfc(sqrt y) + e^-y * sum_{1<=k<=m} y^(k-1/2) / gamma(k + 1/2)
    logs = [(k - 0.5) * math.log(y) - y - math.lgamma(k + 0.5) for k in range(1, df // 2 + 1)]
    return min(1.0, math.erfc(math.sqrt(y)) + sum(math.exp(v) for v in logs))


def _rounded(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")
