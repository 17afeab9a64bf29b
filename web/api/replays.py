"""What of a match's replay each reader may see: the only way the site serves a replay.

A finished match is public: its whole replay (seed included) is served to anyone, except the
debug and stderr text of each step, which only the owner of that seat (or an admin) reads. A
running match is not: its seed, the full views and the secret moves would reveal hidden
cards, so onlookers get its public view only (public observations, and each move as a
spectator sees it made: ``Game.action_seen_by``), and an owner additionally the observations
and moves of their own seats. A match whose deal group is sealed (``web.services.sealing``)
is served the same way, finished or not, until every member of the group is done.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

import orjson

from arena import replay as replays
from arena.games.base import Game, State
from web.models import Match, MatchStatus
from web.services import sealing
from web.services.live import PRIVATE_STEP_KEYS, event_for
from web.storage import get_storage

LIVE_HEADER = ("format", "version", "engine", "game", "seats")
CACHED_REPLAYS = 64

_served: OrderedDict[tuple[str, int | None, frozenset[int]], bytes] = OrderedDict()
_served_lock = threading.Lock()
REPLAYED = 8
"""Finished replays whose document and ``arena.replay.Checkpoints`` a web process keeps."""
_replayed: OrderedDict[str, tuple[dict[str, Any], replays.Checkpoints]] = OrderedDict()


class NoReplay(LookupError):
    """The match has no replay (yet, or any more)."""


class NotYours(PermissionError):
    """A reader asked for a seat's view of a running match that they do not own."""


class Visibility(NamedTuple):
    """How a match is served: ``live`` (hidden: its public view only, as if running), and what
    its page says while its deal group is ``sealed`` (``sealing.note``)."""

    live: bool
    sealed: str | None


def visibility(match: Match) -> Visibility:
    """How ``match`` is served: hidden while it runs or its deal group is sealed."""
    note = sealing.note(match)
    if note is not None:
        return Visibility(True, note)
    return Visibility(match.status != MatchStatus.FINISHED, None)


def load(match: Match) -> dict[str, Any]:
    """The stored replay document of ``match`` (a partial one while it is running)."""
    if not match.replay_path:
        raise NoReplay(f"match {match.id} has no replay yet")
    try:
        data = get_storage().read(match.replay_path)
    except (OSError, ValueError) as exc:
        raise NoReplay(f"the replay of match {match.id} cannot be read") from exc
    doc = orjson.loads(data)
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        raise NoReplay(f"the replay of match {match.id} is damaged")
    return doc


def step_for(step: dict[str, Any], owned: set[int], game: Game | None) -> dict[str, Any]:
    """One step as a reader owning ``owned`` seats may see it: with ``game`` (hidden), a move
    of another seat only as a spectator sees it made."""
    shown = dict(step)
    actor = step.get("seat")
    if actor not in owned:
        for key in PRIVATE_STEP_KEYS:
            shown[key] = None
        if game is not None and "action" in shown:
            shown["action"] = _public_action(game, shown["action"], actor)
    return shown


def _public_action(game: Game, action: Any, actor: Any) -> Any:
    """``actor``'s ``action`` as a spectator sees it made."""
    if not isinstance(actor, int) or not isinstance(action, dict):
        return None
    return game.action_seen_by(action, actor, None)


def replay_for(
    match: Match, doc: dict[str, Any], owned: set[int], seen: Visibility
) -> dict[str, Any]:
    """The replay document served to a reader owning ``owned`` seats."""
    game = replays.initial_state(_replayable(doc)).game if seen.live else None
    steps = [step_for(s, owned, game) for s in doc["steps"]]
    if not seen.live:
        return {**doc, "steps": steps}
    shown = {key: doc[key] for key in LIVE_HEADER if key in doc}
    shown.update(live=True, status=str(match.status), sealed=seen.sealed, steps=steps)
    return shown


def _kept(key: tuple[str, int | None, frozenset[int]], make: Any) -> bytes:
    """``make()``'s bytes, kept under ``key`` among the last ``CACHED_REPLAYS`` renderings."""
    with _served_lock:
        if key in _served:
            _served.move_to_end(key)
            return _served[key]
    body: bytes = make()
    with _served_lock:
        _served[key] = body
        while len(_served) > CACHED_REPLAYS:
            _served.popitem(last=False)
    return body


class Served(NamedTuple):
    """A body to send, and whether it is hidden (may change: never to be cached)."""

    body: bytes
    live: bool


def served_bytes(match: Match, owned: set[int]) -> Served:
    """The replay as served to a reader owning ``owned`` seats, as JSON bytes.

    A finished, open match's replay never changes, so its most recent renderings are kept.
    """
    seen = visibility(match)
    if seen.live:
        return Served(orjson.dumps(replay_for(match, load(match), owned, seen)), True)
    key = ("replay:" + (match.replay_path or ""), None, frozenset(owned))
    body = _kept(key, lambda: orjson.dumps(replay_for(match, load(match), owned, seen)))
    return Served(body, False)


def served_frames(match: Match, seat: int | None, owned: set[int], window: range) -> Served:
    """The frames envelope (``{"data": {...}}``) of ``window`` as JSON bytes.

    ``total`` counts every frame so far, so a reader knows what other windows to ask for.
    A finished, open match never changes, so its windows' most recent renderings are kept.
    """
    live = visibility(match).live

    def make() -> bytes:
        doc, checkpoints = (load(match), None) if live else _replayed_doc(match)
        shown = frames_for(match, doc, seat, owned, window, live, checkpoints)
        data = {
            "match_id": match.id,
            "seat": seat,
            "live": live,
            "total": len(doc["steps"]) + 1,
            "frames": shown,
        }
        return orjson.dumps({"data": data})

    if live:
        return Served(make(), live)
    name = f"frames:{match.replay_path or ''}:{window.start}:{window.stop}"
    return Served(_kept((name, seat, frozenset(owned)), make), live)


def _replayed_doc(match: Match) -> tuple[dict[str, Any], replays.Checkpoints]:
    """A finished match's replay and its checkpoints, kept for the next window: a viewer's jump
    far into a long match then re-plays a few hundred steps, not the whole match."""
    key = str(match.replay_path)
    with _served_lock:
        if key in _replayed:
            _replayed.move_to_end(key)
            return _replayed[key]
    doc = load(match)
    kept = (doc, replays.Checkpoints(_replayable(doc)))
    with _served_lock:
        _replayed[key] = kept
        while len(_replayed) > REPLAYED:
            _replayed.popitem(last=False)
    return kept


def forget() -> None:
    """Drop the kept renderings (after a stored replay was replaced in place: tests)."""
    with _served_lock:
        _served.clear()
        _replayed.clear()


def frames_for(
    match: Match,
    doc: dict[str, Any],
    seat: int | None,
    owned: set[int],
    window: range,
    live: bool,
    checkpoints: replays.Checkpoints | None = None,
) -> list[dict[str, Any]]:
    """The views of the frames in ``window``: everything (open, no seat), one seat's, or public
    only (``live``: hidden). Only the views asked for are built, and only inside the window;
    with ``checkpoints`` (of ``doc``) the re-play starts at the nearest kept state."""
    if seat is not None and not 0 <= seat < len(match.seats):
        raise IndexError(f"match {match.id} has no seat {seat}")
    if live and seat is not None and seat not in owned:
        raise NotYours(f"seat {seat} of match {match.id} is not yours while it is hidden")
    steps = doc["steps"]
    shown = []
    passed = (
        checkpoints.states(window.start)
        if checkpoints is not None
        else enumerate(replays.states(_replayable(doc)))
    )
    for index, state in passed:
        if index >= window.stop:
            break
        if index >= window.start:
            event = event_for(steps[index - 1], state.game, seat, owned, live) if index else None
            shown.append(_frame(state, index, event, seat, live))
        if index + 1 >= window.stop:
            break  # before re-playing the step after the window
    return shown


def _frame(
    state: State, index: int, event: dict[str, Any] | None, seat: int | None, live: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {"index": index, "event": event, "public": view(state.observation(None))}
    if seat is not None:
        out["seat"] = view(state.observation(seat))
    elif not live:
        out["spectator"] = view(state.full_view())
        out["seats"] = [view(state.observation(s)) for s in range(state.game.players)]
    return out


def view(data: dict[str, Any]) -> Any:
    """A view as plain JSON, without the histories (a viewer rebuilds them from the events)."""
    kept = {key: value for key, value in data.items() if key not in replays.HISTORY_KEYS}
    return orjson.loads(orjson.dumps(kept))


def _replayable(doc: dict[str, Any]) -> Any:
    """Enough of a (possibly partial) replay for ``arena.replay.frames``."""
    return {"game": doc["game"], "seed": doc["seed"], "steps": doc["steps"]}
