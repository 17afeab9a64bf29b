"""The replay format (version 1): recording, reading, writing, re-simulating and verifying.

A replay is one JSON document per match. It holds the game config, the seed, who sat where, every
decision with its timing and the bot's debug and stderr excerpts, the result and the seats'
outcome, plus a hash of the final ``full_view()``. Because the referee is pure and seeded,
(config, seed, actions) rebuild the whole match: ``verify`` re-plays a replay and reports every
difference, and ``frames`` gives a viewer what each seat saw at each step.

The document on disk::

    {"format": "kozyri-arena-replay", "version": 1, "engine": "0.1.0",
     "game": {"game": ..., "players": ..., "variant": ..., "params": {...}},
     "seed": 42, "seats": [{"name": ..., "kind": "builtin"|"bot"|"human", "version": ...}],
     "steps": [{"seat": 0, "action": {...}, "deal": 0, "time_ms": 1.2, "status": "ok",
                "debug": null, "stderr": null}],
     "result": {"ranking": [...], "scores": [...], "detail": {...}},
     "outcome": {"status": [...], "forfeited": [...], "strikes": [...]},
     "final_hash": "<sha256 of the sorted-key orjson dump of the final full_view()>"}
"""

from __future__ import annotations

import gzip
import hashlib
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

import orjson

from arena import __version__
from arena.agents import Agent
from arena.games import make_game
from arena.games.base import JSON, GameError, Result, State

FORMAT = "kozyri-arena-replay"
VERSION = 1

SeatKind = Literal["builtin", "bot", "human"]


class ReplayError(ValueError):
    """A file or document that is not a readable replay of this format and version."""


class SeatInfo(TypedDict):
    """Who played in one seat."""

    name: str
    kind: SeatKind
    version: str | None


class Step(TypedDict):
    """One decision: who made it, what it was, and how the seat behaved while making it."""

    seat: int
    action: JSON
    deal: int
    time_ms: float | None
    status: str
    debug: str | None
    stderr: str | None


class Outcome(TypedDict):
    """How each seat finished: its final status, whether it forfeited, and its strikes."""

    status: list[str]
    forfeited: list[bool]
    strikes: list[int]


class Replay(TypedDict):
    """A whole replay document (see the module docstring)."""

    format: str
    version: int
    engine: str
    game: JSON
    seed: int
    seats: list[SeatInfo]
    steps: list[Step]
    result: JSON
    outcome: Outcome
    final_hash: str


class Frame(TypedDict):
    """What a viewer shows at one point of a replay.

    Frame 0 is the position before any decision; frame k follows ``steps[k-1]`` (its ``event``).
    ``spectator`` is the full view (a replay is a finished match), ``public`` what an onlooker
    saw at the time, and ``seats`` each seat's own observation.
    """

    index: int
    event: Step | None
    spectator: JSON
    public: JSON
    seats: list[JSON]


def state_hash(state: State) -> str:
    """The sha256 of the sorted-key orjson dump of ``state.full_view()``."""
    return hashlib.sha256(orjson.dumps(state.full_view(), option=orjson.OPT_SORT_KEYS)).hexdigest()


def plain_outcome(players: int) -> Outcome:
    """The outcome of a match in which every seat behaved."""
    return {"status": ["ok"] * players, "forfeited": [False] * players, "strikes": [0] * players}


def apply_forfeits(result: Result, forfeited: Sequence[bool]) -> Result:
    """Rank forfeited seats last, sharing one place below everyone else.

    Seats that did not forfeit keep their places relative to each other (ties stay ties);
    scores are unchanged and ``detail["forfeited"]`` lists the forfeited seats.
    """
    if not any(forfeited):
        return result
    kept = [place for place, lost in zip(result.ranking, forfeited, strict=True) if not lost]
    last = len(kept) + 1
    ranking = tuple(
        last if lost else 1 + sum(1 for other in kept if other < place)
        for place, lost in zip(result.ranking, forfeited, strict=True)
    )
    detail = {**result.detail, "forfeited": [i for i, lost in enumerate(forfeited) if lost]}
    return Result(ranking=ranking, scores=result.scores, detail=detail)


def match_result(state: State, forfeited: Sequence[bool]) -> Result:
    """The result a replay records for ``state``: the engine's, with forfeits applied.

    A match abandoned before its end (every seat but the forfeited ones is then tied first)
    has no engine result, so its scores are all zero.
    """
    if state.is_terminal():
        return apply_forfeits(state.result(), forfeited)
    if not any(forfeited):
        raise GameError("an unfinished match has a result only if some seat forfeited")
    zeros = tuple(0.0 for _ in forfeited)
    return apply_forfeits(Result(ranking=tuple(1 for _ in forfeited), scores=zeros), forfeited)


class ReplayRecorder:
    """Builds a replay while a match is played: ``record`` each decision, then ``finish``."""

    def __init__(self, game: JSON, seed: int, seats: Sequence[SeatInfo]) -> None:
        self.game = dict(game)
        self.seed = seed
        self.seats = [SeatInfo(name=s["name"], kind=s["kind"], version=s["version"]) for s in seats]
        self.steps: list[Step] = []

    def record(
        self,
        seat: int,
        action: JSON,
        deal: int,
        time_ms: float | None = None,
        status: str = "ok",
        debug: str | None = None,
        stderr: str | None = None,
    ) -> None:
        """Add one decision, in wire form, taken by ``seat`` during deal ``deal``."""
        self.steps.append(
            Step(
                seat=seat,
                action=action,
                deal=deal,
                time_ms=time_ms,
                status=status,
                debug=debug,
                stderr=stderr,
            )
        )

    def finish(self, state: State, outcome: Outcome | None = None) -> Replay:
        """The complete replay of the match that ended in ``state``."""
        outcome = outcome or plain_outcome(len(self.seats))
        result = match_result(state, outcome["forfeited"])
        return Replay(
            format=FORMAT,
            version=VERSION,
            engine=__version__,
            game=self.game,
            seed=self.seed,
            seats=list(self.seats),
            steps=list(self.steps),
            result=_plain(result.to_json()),
            outcome=outcome,
            final_hash=state_hash(state),
        )


# --- reading and writing ------------------------------------------------------------------------

_REQUIRED = ("engine", "game", "seed", "seats", "steps", "result", "outcome", "final_hash")


def dumps_replay(replay: Replay, indent: bool = False) -> bytes:
    """The replay as JSON bytes (two-space indented if ``indent``)."""
    option = orjson.OPT_INDENT_2 if indent else 0
    return orjson.dumps(replay, option=option)


def loads_replay(data: bytes | str) -> Replay:
    """Parse and check a replay document; raise ``ReplayError`` if it is not one."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ReplayError(f"not JSON: {exc}") from None
    return check_replay(obj)


def check_replay(obj: Any) -> Replay:
    """Return ``obj`` as a replay if it has this format and version, else raise ``ReplayError``."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ReplayError(f"not a {FORMAT} document")
    version = obj.get("version")
    if version != VERSION:
        raise ReplayError(f"unsupported replay version {version!r} (this engine reads {VERSION})")
    missing = [key for key in _REQUIRED if key not in obj]
    if missing:
        raise ReplayError(f"replay lacks {', '.join(missing)}")
    problem = _shape_problem(obj)
    if problem:
        raise ReplayError(problem)
    return cast(Replay, obj)


def _shape_problem(obj: dict[str, Any]) -> str | None:
    """What is wrong with the types of a replay's fields, so a re-play never trips on them."""
    if not all(isinstance(obj[key], dict) for key in ("game", "result", "outcome")):
        return "replay 'game', 'result' and 'outcome' must be objects"
    if not isinstance(obj["seats"], list):
        return "replay 'seats' must be a list"
    if not _is_int(obj["seed"]):
        return f"replay 'seed' must be an integer, not {obj['seed']!r}"
    if not isinstance(obj["steps"], list):
        return "replay 'steps' must be a list"
    for index, step in enumerate(obj["steps"]):
        if not isinstance(step, dict) or "action" not in step:
            return f"step {index}: not an object with an 'action'"
        if not (_is_int(step.get("seat")) and _is_int(step.get("deal"))):
            return f"step {index}: 'seat' and 'deal' must be integers"
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def write_replay(path: str | os.PathLike[str], replay: Replay, indent: bool = False) -> None:
    """Write atomically (a temporary file, then a rename); gzip when the name ends in ``.gz``."""
    target = Path(path)
    data = dumps_replay(replay, indent=indent)
    if target.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide replays from other users and servers
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_replay(path: str | os.PathLike[str]) -> Replay:
    """Read a replay file (plain or gzipped JSON); raise ``ReplayError`` with the file's name."""
    target = Path(path)
    try:
        data = target.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise ReplayError(f"{target}: cannot read ({reason})") from None
    try:
        return loads_replay(data)
    except ReplayError as exc:
        raise ReplayError(f"{target}: {exc}") from None


# --- re-simulation ------------------------------------------------------------------------------


@dataclass
class Simulation:
    """A replay re-played: the state reached, how many steps applied, and what went wrong."""

    state: State
    applied: int
    errors: list[str]


def initial_state(replay: Replay) -> State:
    """The match of ``replay`` before its first decision; ``ReplayError`` if its game is unknown."""
    try:
        game = make_game(**replay["game"])
    except (GameError, TypeError) as exc:
        name = replay["game"].get("game")
        raise ReplayError(f"cannot rebuild the game {name!r} of this replay: {exc}") from None
    return game.new_state(replay["seed"])


def apply_step(state: State, step: Step, index: int) -> str | None:
    """Apply ``step`` (number ``index``) to ``state``; return what is wrong with it, if anything."""
    if state.is_terminal():
        return f"step {index}: the match was already over"
    to_move = state.current_player()
    if step["seat"] != to_move:
        return f"step {index}: recorded for seat {step['seat']} but seat {to_move} was to move"
    if step["deal"] != state.deal_index:
        return f"step {index}: recorded in deal {step['deal']} but deal {state.deal_index} was on"
    try:
        state.apply_json(step["action"])
    except GameError as exc:
        return f"step {index}: illegal action {_compact(step['action'])}: {exc}"
    return None


def simulate(replay: Replay, upto: int | None = None) -> Simulation:
    """Re-play the first ``upto`` steps (all by default), stopping at the first bad one."""
    state = initial_state(replay)
    steps = replay["steps"][:upto] if upto is not None else replay["steps"]
    for index, step in enumerate(steps):
        problem = apply_step(state, step, index)
        if problem:
            return Simulation(state=state, applied=index, errors=[problem])
    return Simulation(state=state, applied=len(steps), errors=[])


def state_at(replay: Replay, step: int) -> State:
    """The state after the first ``step`` decisions (0 is the start of the match)."""
    if not 0 <= step <= len(replay["steps"]):
        raise IndexError(f"step {step} is outside 0..{len(replay['steps'])}")
    sim = simulate(replay, upto=step)
    if sim.errors:
        raise ReplayError(sim.errors[0])
    return sim.state


def observation_at(replay: Replay, step: int, seat: int | None) -> JSON:
    """What ``seat`` (``None``: a spectator) saw after the first ``step`` decisions."""
    view: JSON = _plain(state_at(replay, step).observation(seat))
    return view


def states(replay: Replay) -> Iterator[State]:
    """The state before the first decision and after each one (the same object, advancing)."""
    state = initial_state(replay)
    yield state
    for index, step in enumerate(replay["steps"]):
        problem = apply_step(state, step, index)
        if problem:
            raise ReplayError(problem)
        yield state


class Checkpoints:
    """The states of one replay every ``every`` steps, kept as a re-play passes them, so that a
    window far into a long match is reached without re-playing it from the start.

    Keep one per replay whose steps do not change (a finished match): a viewer jumping about a
    match of 10,000 steps then costs a few hundred re-played steps per window, not thousands.
    Threads may share one: a kept state is never changed (each re-play starts from a copy).
    """

    def __init__(self, replay: Replay, every: int = 250) -> None:
        self.replay = replay
        self.every = every
        self.kept: dict[int, State] = {}

    def states(self, start: int = 0) -> Iterator[tuple[int, State]]:
        """``(index, state)`` from the last checkpoint at or before ``start`` to the end (the same
        state object, advancing); keeps a copy at every ``every`` steps passed."""
        base = max((i for i in list(self.kept) if i <= start), default=None)
        if base is None:
            index, state = 0, initial_state(self.replay)
            self.kept[0] = state.clone()
        else:
            index, state = base, self.kept[base].clone()
        steps = self.replay["steps"]
        yield index, state
        for at in range(index, len(steps)):
            problem = apply_step(state, steps[at], at)
            if problem:
                raise ReplayError(problem)
            if (at + 1) % self.every == 0 and at + 1 not in self.kept:
                self.kept[at + 1] = state.clone()
            yield at + 1, state


HISTORY_KEYS = ("history", "previous_history")
"""View keys that repeat what earlier steps already said: left out of frames unless asked for.

Every view carries the deal's history, so keeping it in every frame makes the frames of a match
grow with the square of a deal's length; a viewer rebuilds the history from the steps instead.
Short summaries of the previous deal (``last_deal``, ``earlier_rounds``) stay: viewers show them.
"""


def frames(
    replay: Replay,
    start: int = 0,
    stop: int | None = None,
    *,
    history: bool = False,
    checkpoints: Checkpoints | None = None,
) -> list[Frame]:
    """The frames ``start`` to ``stop`` (exclusive; all by default), for viewers: see ``Frame``.

    Views leave out ``HISTORY_KEYS`` unless ``history`` is true. With ``checkpoints`` (of this
    replay) the re-play starts from the nearest kept state instead of the start.
    """
    out: list[Frame] = []
    steps = replay["steps"]
    last = len(steps) if stop is None else min(stop - 1, len(steps))
    passed = (checkpoints or Checkpoints(replay, every=len(steps) + 1)).states(start)
    for index, state in passed:
        if index > last:
            break
        if index >= start:
            event = steps[index - 1] if index else None
            out.append(frame_of(state, index, event, history=history))
    return out


def frame_of(state: State, index: int, event: Step | None, *, history: bool = True) -> Frame:
    """The frame showing ``state``, reached by ``event``."""

    def view(data: JSON) -> JSON:
        if not history:
            data = {k: v for k, v in data.items() if k not in HISTORY_KEYS}
        plain: JSON = _plain(data)
        return plain

    def seen_by(seat: int | None) -> JSON:
        parts = None if history else state.observation_parts(seat)
        return view(state.observation(seat) if parts is None else parts[0])

    spectator = None if history else state.full_view_parts()
    return Frame(
        index=index,
        event=event,
        spectator=view(state.full_view() if spectator is None else spectator),
        public=seen_by(None),
        seats=[seen_by(seat) for seat in range(state.game.players)],
    )


def verify(replay: Replay) -> list[str]:
    """Re-play ``replay`` and list every difference from what it records (empty if none)."""
    try:
        sim = simulate(replay)
    except ReplayError as exc:
        return [str(exc)]
    if sim.errors:
        return sim.errors
    state = sim.state
    forfeited = list(replay["outcome"].get("forfeited") or [False] * state.game.players)
    if not state.is_terminal() and not any(forfeited):
        return [f"the match is not over after {sim.applied} steps and nobody forfeited"]
    problems = []
    expected = _plain(match_result(state, forfeited).to_json())
    if expected != replay["result"]:
        problems.append(f"result differs: replay {replay['result']}, engine {expected}")
    actual_hash = state_hash(state)
    if actual_hash != replay["final_hash"]:
        problems.append(f"final hash differs: replay {replay['final_hash']}, engine {actual_hash}")
    return problems


# --- recording matches of built-in agents -------------------------------------------------------

StepHook = Callable[[State, Step], None]


def agent_rng(seed: int) -> random.Random:
    """The random source of built-in agents in a match with this seed (separate from chance)."""
    return random.Random(f"kozyri-arena-agents:{seed}")


def record_builtin_match(
    state: State,
    agents: Sequence[Agent],
    names: Sequence[str],
    rng: random.Random,
    on_step: StepHook | None = None,
    timed: bool = True,
) -> Replay:
    """Play ``state`` to the end with in-process agents, recording a replay.

    ``on_step(state, step)`` is called after each decision is applied. With ``timed=False`` no
    thinking times are recorded, so the same match always gives the same bytes.
    """
    seats = [SeatInfo(name=name, kind="builtin", version=__version__) for name in names]
    recorder = ReplayRecorder(state.game.config(), state.seed, seats)
    while not state.is_terminal():
        seat, deal = state.current_player(), state.deal_index
        started = time.perf_counter()
        action = agents[seat](state, rng)
        elapsed = round((time.perf_counter() - started) * 1000, 3) if timed else None
        wire = state.action_to_json(action)
        state.apply_action(action)
        recorder.record(seat, wire, deal, time_ms=elapsed)
        if on_step:
            on_step(state, recorder.steps[-1])
    return recorder.finish(state)


def _plain(obj: Any) -> Any:
    """``obj`` as plain JSON data (tuples become lists), detached from any engine state."""
    return orjson.loads(orjson.dumps(obj))


def _compact(obj: Any) -> str:
    return orjson.dumps(obj).decode()
