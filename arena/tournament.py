"""Local tournaments: bot folders play a round robin or a Swiss event, then get a standings table.

A tournament is fully described by its ``TournamentSpec`` (game, bots, format, number of
matches, mirrored deals, seed, sandbox, time control): every match seed derives from the
tournament seed, so ``tournament.json`` in the output folder is enough to play it again.

Matches run through ``arena.runner.run_match``, one at a time or in a pool of worker processes
(``jobs``). Each worker is pinned to its own core so the runner's one-core-per-match rule holds.
Ratings are updated in match order, whatever order the matches finish in, so the standings do not
depend on ``jobs``.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from arena import __version__, matchmaking
from arena.agents import get_agent
from arena.bots import BotManifest, load_bot
from arena.games import make_game
from arena.ratings import Rating, display, rate_table
from arena.replay import check_replay, write_replay
from arena.runner import BuiltinBot, Entrant, TimeControl, run_match
from sandbox import get_sandbox

JSON = dict[str, Any]
FORMATS = ("round-robin", "swiss")
SUMMARY_FORMAT = "kozyri-arena-tournament"
SUMMARY_VERSION = 1
BUILTIN_PREFIX = "builtin:"
"""A bot argument ``builtin:random`` or ``builtin:greedy`` seats an in-process agent."""


@dataclass(frozen=True)
class TournamentSpec:
    """Everything that decides a tournament's matches."""

    game: str
    bots: tuple[str, ...]
    format: str = "round-robin"
    matches: int = 12
    mirrored: bool = False
    seed: int = 0
    players: int | None = None
    variant: str | None = None
    params: JSON = field(default_factory=dict)
    sandbox: str = "bwrap"
    timeouts: bool = True

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {self.format!r}")
        if self.matches < 1:
            raise ValueError("a tournament needs at least one match")

    def to_json(self) -> JSON:
        return {**asdict(self), "bots": list(self.bots)}

    @classmethod
    def from_json(cls, obj: JSON) -> TournamentSpec:
        return cls(**{**obj, "bots": tuple(obj["bots"])})


@dataclass(frozen=True)
class PlannedMatch:
    """One match to play: entry index per seat, its seed, its mirror group and Swiss round."""

    index: int
    seats: tuple[int, ...]
    seed: int
    group: int
    round: int = 0


@dataclass(frozen=True)
class MatchRecord:
    """What a played match contributes to the standings."""

    index: int
    seats: tuple[int, ...]
    seed: int
    ranking: tuple[int, ...]
    statuses: tuple[str, ...]
    strikes: tuple[int, ...]
    cpu_s: tuple[float | None, ...]
    replay: str | None

    def to_json(self) -> JSON:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Standing:
    """One row of the standings table."""

    entry: int
    name: str
    rating: Rating
    matches: int
    places: tuple[int, ...]
    average_place: float
    points: float
    errors: dict[str, int]

    @property
    def score(self) -> float:
        return display(self.rating)

    def to_json(self) -> JSON:
        return {
            "entry": self.entry,
            "name": self.name,
            "rating": self.score,
            "mu": self.rating.mu,
            "sigma": self.rating.sigma,
            "matches": self.matches,
            "places": list(self.places),
            "average_place": self.average_place,
            "points": self.points,
            "errors": self.errors,
        }


# --- planning -------------------------------------------------------------------------------


def match_seed(tournament_seed: int, group: int) -> int:
    """The match seed of mirror group ``group`` (every match when deals are not mirrored)."""
    return random.Random(f"kozyri-arena-tournament:{tournament_seed}:{group}").getrandbits(48)


def group_size(spec: TournamentSpec, players: int) -> int:
    """Matches per table: ``players`` rotations with mirrored deals, else one."""
    return players if spec.mirrored else 1


def plan_tables(
    tables: Sequence[tuple[int, ...]],
    spec: TournamentSpec,
    players: int,
    first_group: int = 0,
    round_: int = 0,
    seat_counts: dict[int, list[int]] | None = None,
) -> list[PlannedMatch]:
    """Turn tables into matches: mirrored rotations on one seed, or one rotated seating each.

    ``seat_counts`` (entry -> times per seat) carries seat rotation across calls; it is updated.
    """
    counts = seat_counts if seat_counts is not None else {}
    planned: list[PlannedMatch] = []
    for offset, table in enumerate(tables):
        group = first_group + offset
        seed = match_seed(spec.seed, group)
        if spec.mirrored:
            seatings = matchmaking.mirrored_seatings(list(table))
        else:
            rng = random.Random(seed)
            seatings = [matchmaking.seat_table(list(table), counts, rng)]
        for seating in seatings:
            for seat, entry in enumerate(seating):
                counts.setdefault(entry, [0] * players)[seat] += 1
            index = len(planned) + first_group * group_size(spec, players)
            planned.append(PlannedMatch(index, tuple(seating), seed, group, round_))
    return planned


def plan_round_robin(spec: TournamentSpec, players: int) -> list[PlannedMatch]:
    """Every match of a round robin (``spec.matches`` rounded up to whole mirror groups)."""
    groups = math.ceil(spec.matches / group_size(spec, players))
    tables = matchmaking.round_robin_tables(len(spec.bots), players, groups)
    return plan_tables(tables, spec, players)


def swiss_rounds(spec: TournamentSpec, players: int) -> int:
    """How many Swiss rounds ``spec.matches`` buys (at least one)."""
    per_round = (len(spec.bots) // players) * group_size(spec, players)
    return max(1, math.ceil(spec.matches / per_round))


# --- standings ------------------------------------------------------------------------------


def standings(
    names: Sequence[str],
    records: Sequence[MatchRecord],
    byes: Counter[int] | None = None,
    players: int | None = None,
) -> list[Standing]:
    """The standings after ``records``, rated in match order; best first.

    Swiss points count as well (a bye is worth an average place); the order is by rating, the
    conservative ``mu - 3 sigma``, then points.
    """
    n = len(names)
    seats = players or _seats(records)
    rated: dict[int, Rating] = {i: Rating() for i in range(n)}
    places = [[0] * seats for _ in range(n)]
    points = [0.0] * n
    errors: list[Counter[str]] = [Counter() for _ in range(n)]
    for record in sorted(records, key=lambda r: r.index):
        rated.update(rate_table(rated, record.seats, record.ranking))
        seat_points = matchmaking.place_points(record.ranking)
        for seat, entry in enumerate(record.seats):
            places[entry][record.ranking[seat] - 1] += 1
            points[entry] += seat_points[seat]
            if record.statuses[seat] != "ok":
                errors[entry][record.statuses[seat]] += 1
    for entry, count in (byes or Counter()).items():
        points[entry] += count * matchmaking.bye_points(seats)
    rows = [_standing(i, names[i], rated[i], places[i], points[i], errors[i]) for i in range(n)]
    return sorted(rows, key=lambda s: (-s.score, -s.points, s.entry))


def _seats(records: Sequence[MatchRecord]) -> int:
    return len(records[0].seats) if records else 0


def _standing(
    entry: int, name: str, r: Rating, places: list[int], points: float, errors: Counter[str]
) -> Standing:
    played = sum(places)
    mean = sum((i + 1) * c for i, c in enumerate(places)) / played if played else 0.0
    return Standing(entry, name, r, played, tuple(places), mean, points, dict(errors))


def swiss_scores(
    entries: int, records: Sequence[MatchRecord], byes: Counter[int], players: int
) -> list[float]:
    """Swiss points per entry so far."""
    points = [byes.get(i, 0) * matchmaking.bye_points(players) for i in range(entries)]
    for record in records:
        for entry, p in zip(record.seats, matchmaking.place_points(record.ranking), strict=True):
            points[entry] += p
    return points


def meetings(records: Sequence[MatchRecord]) -> Counter[tuple[int, int]]:
    """How often each pair of entries shared a table (a mirror group counts once)."""
    met: Counter[tuple[int, int]] = Counter()
    seen_groups: set[tuple[int, ...]] = set()
    for record in records:
        key = (record.seed, *sorted(record.seats))
        if key in seen_groups:
            continue
        seen_groups.add(key)
        s = sorted(record.seats)
        met.update((a, b) for i, a in enumerate(s) for b in s[i + 1 :] if a != b)
    return met


# --- running --------------------------------------------------------------------------------

OnMatch = Callable[[MatchRecord], None]


@dataclass
class Tournament:
    """A tournament being played: its spec, entry names, output folder and records so far."""

    spec: TournamentSpec
    names: list[str]
    out: Path | None
    jobs: int = 1
    records: list[MatchRecord] = field(default_factory=list)
    byes: Counter[int] = field(default_factory=Counter)

    @property
    def players(self) -> int:
        return make_game(**_game_config(self.spec)).players

    def check(self) -> list[str]:
        """Raise ``ValueError``/``GameError``/``SandboxError`` if the tournament cannot be played;
        return warnings (bots whose manifest does not list the game)."""
        get_sandbox(self.spec.sandbox)
        players = self.players
        if len(self.spec.bots) < players:
            raise ValueError(
                f"{len(self.spec.bots)} bots cannot fill a table of {players}; "
                "repeat a bot folder to seat copies, or pass --players"
            )
        entrants = [_load_entrant(source) for source in self.spec.bots]
        return [
            f"{bot.name} does not list {self.spec.game} in its bot.toml"
            for bot in entrants
            if isinstance(bot, BotManifest) and not bot.plays(self.spec.game)
        ]

    def total_matches(self) -> int:
        """How many matches will be played in all."""
        players = self.players
        if self.spec.format == "round-robin":
            groups = math.ceil(self.spec.matches / group_size(self.spec, players))
            return groups * group_size(self.spec, players)
        per_round = (len(self.spec.bots) // players) * group_size(self.spec, players)
        return swiss_rounds(self.spec, players) * per_round

    def run(self, on_match: OnMatch | None = None) -> list[Standing]:
        """Play every match; return the final standings."""
        players = self.players
        if self.spec.format == "round-robin":
            self._play(plan_round_robin(self.spec, players), on_match)
        else:
            self._run_swiss(players, on_match)
        return standings(self.names, self.records, self.byes, players)

    def _run_swiss(self, players: int, on_match: OnMatch | None) -> None:
        counts: dict[int, list[int]] = {}
        group = 0
        for round_ in range(swiss_rounds(self.spec, players)):
            scores = swiss_scores(len(self.names), self.records, self.byes, players)
            pairing = matchmaking.swiss_round(scores, players, meetings(self.records), self.byes)
            self.byes.update(pairing.byes)
            planned = plan_tables(pairing.tables, self.spec, players, group, round_, counts)
            group += len(pairing.tables)
            self._play(planned, on_match)

    def _play(self, planned: Sequence[PlannedMatch], on_match: OnMatch | None) -> None:
        for record in execute(self.spec, planned, self.out, self.jobs):
            self.records.append(record)
            if on_match is not None:
                on_match(record)

    def summary(self) -> JSON:
        """The ``tournament.json`` contents: spec, engine, bots, matches and standings."""
        return {
            "format": SUMMARY_FORMAT,
            "version": SUMMARY_VERSION,
            "engine": __version__,
            "spec": self.spec.to_json(),
            "bots": [
                {"name": n, "source": b} for n, b in zip(self.names, self.spec.bots, strict=True)
            ],
            "matches": [r.to_json() for r in sorted(self.records, key=lambda r: r.index)],
            "byes": {str(k): v for k, v in sorted(self.byes.items())},
            "standings": [
                s.to_json() for s in standings(self.names, self.records, self.byes, self.players)
            ],
        }

    def write_summary(self) -> Path | None:
        """Write ``tournament.json`` into the output folder (atomically); return its path."""
        if self.out is None:
            return None
        target = self.out / "tournament.json"
        tmp = target.with_suffix(".json.tmp")
        tmp.write_bytes(orjson.dumps(self.summary(), option=orjson.OPT_INDENT_2))
        os.replace(tmp, target)
        return target


def entry_names(sources: Sequence[str]) -> list[str]:
    """Display names of the entries; a repeated bot gets ``#2``, ``#3``... appended."""
    seen: Counter[str] = Counter()
    names: list[str] = []
    for source in sources:
        base = _load_entrant(source).name
        seen[base] += 1
        names.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return names


def load_summary(path: str | os.PathLike[str]) -> TournamentSpec:
    """The spec stored in a ``tournament.json``, to play the same tournament again."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})") from None
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != SUMMARY_FORMAT:
        raise ValueError(f"{path}: not a tournament summary")
    try:
        return TournamentSpec.from_json(data["spec"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: a damaged tournament summary ({exc!r})") from None


# --- executing matches (in this process or in a pool) ---------------------------------------


def execute(
    spec: TournamentSpec, planned: Sequence[PlannedMatch], out: Path | None, jobs: int
) -> Iterator[MatchRecord]:
    """Play ``planned``; yield records as matches finish (in any order when ``jobs > 1``)."""
    if jobs <= 1 or len(planned) <= 1:
        for p in planned:
            yield play_planned(spec, p, out)
        return
    ctx = multiprocessing.get_context("spawn")
    counter = ctx.Value("i", 0)
    with ProcessPoolExecutor(jobs, ctx, initializer=_init_worker, initargs=(counter,)) as pool:
        futures = [pool.submit(play_planned, spec, p, out) for p in planned]
        for future in as_completed(futures):
            yield future.result()


_WORKER_SLOT = 0


def _init_worker(counter: Any) -> None:
    """Give each pool worker its own slot (sandbox uids) and, where possible, its own core."""
    global _WORKER_SLOT
    with counter.get_lock():
        _WORKER_SLOT = counter.value
        counter.value += 1
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        try:
            os.sched_setaffinity(0, {cores[_WORKER_SLOT % len(cores)]})
        except OSError:
            pass


def play_planned(spec: TournamentSpec, planned: PlannedMatch, out: Path | None) -> MatchRecord:
    """Play one planned match through the runner; save its replay under ``out/replays``."""
    game = make_game(**_game_config(spec))
    bots = [_load_entrant(spec.bots[e]) for e in planned.seats]
    outcome = run_match(
        game,
        bots,
        planned.seed,
        sandbox=get_sandbox(spec.sandbox),
        time_control=TimeControl(timeouts=spec.timeouts),
        slot_base=_WORKER_SLOT * game.players,
    )
    replay = _save_replay(outcome.replay, planned.index, out)
    return MatchRecord(
        index=planned.index,
        seats=planned.seats,
        seed=planned.seed,
        ranking=tuple(outcome.result.ranking),
        statuses=tuple(str(s.status) for s in outcome.seats),
        strikes=tuple(s.strikes for s in outcome.seats),
        cpu_s=tuple(s.cpu_s for s in outcome.seats),
        replay=replay,
    )


def _save_replay(replay: JSON, index: int, out: Path | None) -> str | None:
    if out is None:
        return None
    name = f"replays/match-{index + 1:04d}.json"
    (out / "replays").mkdir(parents=True, exist_ok=True)
    write_replay(out / name, check_replay(replay))
    return name


def _game_config(spec: TournamentSpec) -> JSON:
    return {
        "game": spec.game,
        "players": spec.players,
        "params": spec.params,
        "variant": spec.variant,
    }


def _load_entrant(source: str) -> Entrant:
    """A bot folder's manifest, or a built-in agent for ``builtin:<agent>``."""
    if source.startswith(BUILTIN_PREFIX):
        agent = source.removeprefix(BUILTIN_PREFIX)
        get_agent(agent)  # an unknown name fails here, before any match starts
        return BuiltinBot(agent)
    return load_bot(source)
