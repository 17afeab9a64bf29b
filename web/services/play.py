"""Playing one queued match on a worker: claim, run, store the replay, finish in one transaction.

A play that ends without a result gives its claim back at once, saying why; whether that spends
one of the match's attempts is decided by ``web.services.attempts`` (only the match's own faults
do). The result of a played match waits out a database outage before it is written.

While the match runs, its replay so far is kept in storage as a *live* replay that the site
serves filtered to public information (``web.api.replays``); the finished replay replaces it.
Each step also goes, once, to the match's live feed (``web.services.live``) that the site
streams to its watchers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import orjson
from flask import current_app
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from web import engine
from web.extensions import db
from web.models import (
    Bot,
    BotStatus,
    Match,
    MatchKind,
    MatchSeat,
    MatchStatus,
    utcnow,
)
from web.services import (
    attempts,
    events,
    human_ladder,
    matches,
    placement,
    ratings,
    seatlogs,
    stats,
    tables,
)
from web.services import live as live_feed
from web.services.human_seat import RedisSeat
from web.services.queue import MATCHES, redis_client, send_match

# A process that plays matches must have everyone who listens for their end registered: the
# ladders (ladder matches), the tournaments (tournament matches) and the bot lifecycle
# (validation matches) register at import.
from web.services import ladders, lifecycle, tournaments  # noqa: F401  isort: skip
from web.storage import describe, get_storage

log = logging.getLogger(__name__)

CLEAN_STATUSES = frozenset({"ok", "done", "active"})
"""Seat statuses that mean the bot played the whole match without failing."""

LIVE_REPLAY_EVERY = 1.0
"""Seconds between two writes of a live replay; a match's first step is written at once."""


def play_match(match_id: int, *, redelivered: bool = False) -> str:
    """Play match ``match_id`` if this worker can claim it; returns what happened, for the logs.

    A ``redelivered`` message (its worker process died) of a match whose claim another host
    still holds is sent again for the moment that claim's lease lapses: if the holder is gone,
    the match is taken over then, instead of waiting for the reaper.
    """
    waiting = _still_waiting_for_storage(match_id)
    if waiting is not None:
        return waiting
    lease = float(current_app.config["MATCH_LEASE"])
    attempt = matches.claim(match_id, matches.worker_name(), lease)
    if attempt is None:
        return _not_claimed(match_id, redelivered)
    live: LiveReplay | None = None
    feed: live_feed.Feed | None = None
    with LeaseKeeper(match_id, attempt, lease):
        try:
            with ExitStack() as files:  # the bots' files stay in place until the match ends
                seats = _seat_specs(match_id, files)
                match = db.session.get(Match, match_id)
                assert match is not None
                config, seed = dict(match.game_config), match.seed
                db.session.rollback()
                live = LiveReplay(match_id, attempt, config, seed, seats)
                if any(seat.human for seat in seats):  # a person sees the table before moving
                    live.write()
                feed = live_feed.open_feed(match_id, config, seed)
                watchers = [live.on_step] + ([feed.on_step] if feed is not None else [])
                person = files.enter_context(_person(match_id, seats))
                outcome = engine.run(config, seats, seed, on_step=_each(*watchers), ask=person)
            replay_rel = _store_replay(outcome.replay)
            outcome.extra["log_bytes"] = seatlogs.store(match_id, outcome.stderr)
        except Exception as exc:  # the match could not be played: give the claim back
            if feed is not None:
                feed.close("given back")
            return _give_back(match_id, attempt, exc, live)
        finished = attempts.patiently(
            lambda: finish(match_id, attempt, outcome, replay_rel), f"match {match_id}: finishing"
        )
    if feed is not None:  # the end once the result is written: readers then load it whole
        feed.close("finished" if finished else None)
    live.discard()
    return "finished" if finished else "result discarded"


def _not_claimed(match_id: int, redelivered: bool) -> str:
    """Why a message found nothing to claim; a redelivered one waits for a held lease."""
    lapses = matches.lease_held(match_id) if redelivered else None
    if lapses is None:
        return "not claimed (finished, running elsewhere, or out of attempts)"
    match = db.session.get(Match, match_id)
    queue = matches.match_queue(match) if match is not None else MATCHES
    db.session.rollback()
    send_match(match_id, queue=queue, countdown=lapses + TAKEOVER_MARGIN)
    return f"held by another worker: looked at again when its lease lapses in {lapses:.1f} s"


TAKEOVER_MARGIN = 1.0
"""Seconds after a held lease lapses that its redelivered match is looked at again."""


class LeaseKeeper:
    """Renews a match claim's lease every third of its length, from a thread of its own, for as
    long as the claim is held: slow bot starts, builds and ``ready`` waits included, not only
    between steps. Stops when the block ends or the claim is found taken away."""

    def __init__(self, match_id: int, attempt: int, lease: float) -> None:
        self.match_id, self.attempt, self.lease = match_id, attempt, lease
        self.app = current_app._get_current_object()  # type: ignore[attr-defined]
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"lease-match-{match_id}", daemon=True
        )

    def __enter__(self) -> LeaseKeeper:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def _run(self) -> None:
        every = max(self.lease / 3, 0.2)
        while not self.stop.wait(every):
            if not self._renew():
                return

    def _renew(self) -> bool:
        """One renewal; False once the claim is known to be taken away."""
        with self.app.app_context():
            try:
                held = matches.renew_lease(self.match_id, self.attempt, self.lease)
            except Exception as exc:  # the database away, most likely; the thread goes on
                # The match goes on: its result is written once the database is back, unless
                # another worker took the match over meanwhile (the claim's token decides).
                attempts.forget_transaction()
                log.warning("match %s: the lease could not be renewed: %s", self.match_id, exc)
                return True
            finally:
                db.session.remove()
        if not held and not self.stop.is_set():
            log.info("match %s: claim %s is no longer held", self.match_id, self.attempt)
        return held


def _still_waiting_for_storage(match_id: int) -> str | None:
    """For a match given back for a storage fault, whose message comes early to look: None
    (play it now) once the storage answers, else why not, with its message sent again."""
    match = db.session.get(Match, match_id)
    if match is None or not attempts.waiting_for_storage(
        match.status == MatchStatus.QUEUED, match.queued_at, match.error
    ):
        db.session.rollback()
        return None
    due = (match.queued_at - utcnow()).total_seconds()
    queue = matches.match_queue(match)
    db.session.rollback()
    if get_storage().answers():
        return None
    send_match(match_id, queue=queue, countdown=min(due, attempts.STORAGE_PROBE_EVERY))
    return "waiting for the storage to answer"


def _give_back(match_id: int, attempt: int, exc: Exception, live: LiveReplay | None) -> str:
    """Release the claim at once, recording the real cause; waits out a database outage."""
    attempts.forget_transaction()
    fault = attempts.classify(exc)
    log.error(
        "match %s, attempt %s could not be played (%s fault): %s",
        match_id,
        attempt,
        "platform" if fault.platform else "match",
        fault.message,
        exc_info=exc,
    )
    if live is not None:
        live.withdraw()
    status = attempts.patiently(
        lambda: matches.release(
            match_id, attempt, fault.message, platform=fault.platform, storage=fault.storage
        ),
        f"match {match_id}: giving the claim back",
    )
    return f"attempt {attempt} failed: {fault.message} (now {status})"


def _seat_specs(match_id: int, files: ExitStack) -> list[engine.SeatSpec]:
    """The seats of the match, each bot's files checked out for as long as ``files`` lasts."""
    storage = get_storage()
    seats = db.session.scalars(
        select(MatchSeat).where(MatchSeat.match_id == match_id).order_by(MatchSeat.seat)
    ).all()
    rows = [
        (s.bot_version_id, s.bot.name, str(s.version.number), s.version.trusted, s.bot.kind)
        for s in seats
    ]
    db.session.rollback()  # no transaction stays open while the files are fetched
    return [
        engine.SeatSpec(bot_dir=Path(), name=name, human=True)
        if kind == tables.HUMAN
        else engine.SeatSpec(
            bot_dir=files.enter_context(storage.checkout(version_id)),
            name=name,
            version=number,
            trusted=trusted,
        )
        for version_id, name, number, trusted, kind in rows
    ]


@contextmanager
def _person(match_id: int, seats: list[engine.SeatSpec]) -> Iterator[RedisSeat | None]:
    """How the person at a table is asked (None at a table of bots only); cleared at the end.

    Without Redis a table cannot be played: that is the platform's fault, not the match's.
    """
    if not any(seat.human for seat in seats):
        yield None
        return
    client = redis_client(str(current_app.config.get("REDIS_URL") or ""))
    if client is None:
        raise engine.InfrastructureError("a table with a person needs Redis (REDIS_URL)")
    prefix = str(current_app.config.get("BROKER_PREFIX") or "")
    until = time.monotonic() + tables.table_bound()
    seat = RedisSeat(client, prefix, match_id, until)
    try:
        yield seat
    finally:
        seat.close()


def _each(*callbacks: Any) -> Any:
    """One ``on_step`` callback that calls each of ``callbacks`` in turn."""

    def step(*args: Any) -> None:
        for callback in callbacks:
            callback(*args)

    return step


class LiveReplay:
    """The replay of a running match so far, kept in the storage at ``replays/live/<id>.json``.

    The file holds everything the finished replay will (seed and actions included, minus
    result, outcome and hash) and is marked ``"partial": true``; it is only ever served through
    ``web.api.replays``, which hides the seed and other seats' actions while the match runs. It
    is rewritten whole, atomically, at most every ``LIVE_REPLAY_EVERY`` seconds; the match row
    points at it once, in a short transaction of its own that needs this attempt's claim.
    """

    def __init__(
        self,
        match_id: int,
        attempt: int,
        config: dict[str, Any],
        seed: int,
        seats: list[engine.SeatSpec],
    ) -> None:
        self.match_id, self.attempt = match_id, attempt
        self.config, self.seed = config, seed
        self.seats = [
            {"name": s.name, "kind": "human" if s.human else "bot", "version": s.version}
            for s in seats
        ]
        self.steps: list[dict[str, Any]] = []
        self.relative = f"replays/live/{match_id}.json"
        self.storage = get_storage()
        self.app = current_app._get_current_object()  # type: ignore[attr-defined]
        self.game: dict[str, Any] | None = None
        self.pointed = False
        self.held = True
        self.last_write = float("-inf")

    def on_step(self, _state: Any, step: dict[str, Any]) -> None:
        """Record one step; write the file if the last write is old enough."""
        self.steps.append(dict(step))
        if not self.held or time.monotonic() - self.last_write < LIVE_REPLAY_EVERY:
            return
        self.last_write = time.monotonic()
        try:
            self.write()
        except Exception:  # watching is a nicety: the match itself must go on
            log.exception("match %s: the live replay could not be written", self.match_id)
            self.held = False

    def document(self) -> dict[str, Any]:
        """The partial replay: the v1 header and the steps so far, marked partial."""
        from arena import __version__
        from arena import replay as replays
        from arena.games import make_game

        if self.game is None:  # as the runner's recorder has it: every parameter spelt out
            self.game = dict(make_game(**self.config).config())
        return {
            "format": replays.FORMAT,
            "version": replays.VERSION,
            "engine": __version__,
            "game": self.game,
            "seed": self.seed,
            "seats": self.seats,
            "steps": self.steps,
            "partial": True,
        }

    def write(self) -> None:
        """Replace the live file; point the match row at it after the first write."""
        self.storage.put(self.relative, orjson.dumps(self.document()))
        if not self.pointed:
            self.pointed = True
            with self.app.app_context():
                self.held = _point_at(self.match_id, self.attempt, self.relative)

    def withdraw(self) -> None:
        """The attempt failed: unpoint the row (while this claim holds it) and remove the file."""
        try:
            if self.pointed and _point_at(self.match_id, self.attempt, None, self.relative):
                self._remove()
        except Exception:  # giving the claim back matters more; the reaper sees to the rest
            db.session.rollback()
            log.exception("match %s: the live replay could not be withdrawn", self.match_id)

    def discard(self) -> None:
        """The match was finished: remove the file unless the row still points at it.

        It does when another attempt took this match over and is writing the same file.
        """
        try:
            with self.app.app_context():
                query = select(Match.replay_path).where(Match.id == self.match_id)
                current = db.session.scalar(query)
                db.session.rollback()
        except Exception:  # the match is finished either way; a stray file is harmless
            log.exception("match %s: the live replay was left in place", self.match_id)
            return
        if current != self.relative:
            self._remove()

    def _remove(self) -> None:
        try:
            self.storage.delete(self.relative)
        except OSError as exc:  # a stale live file is harmless; the finished match must stand
            log.warning("could not remove the live replay %s: %s", self.relative, exc)


def _point_at(match_id: int, attempt: int, relative: str | None, was: str | None = None) -> bool:
    """Set the replay column of a match this attempt still runs; commits. False if not held."""
    conditions = [
        Match.id == match_id,
        Match.attempts == attempt,
        Match.status == MatchStatus.RUNNING,
    ]
    if was is not None:
        conditions.append(Match.replay_path == was)
    stmt = (
        update(Match)
        .where(*conditions)
        .values(replay_path=relative)
        .execution_options(synchronize_session=False)
    )
    held: bool = db.session.execute(stmt).rowcount == 1  # type: ignore[attr-defined]
    db.session.commit()
    return held


def _store_replay(replay: dict[str, Any]) -> str:
    storage = get_storage()
    data = orjson.dumps(replay, option=orjson.OPT_SORT_KEYS)
    try:
        return storage.put_replay(data)
    except OSError as exc:
        raise attempts.StorageError(
            f"could not write the replay to {storage.where()}: {describe(exc)}"
        ) from exc


def finish(match_id: int, attempt: int, outcome: engine.Outcome, replay_path: str) -> bool:
    """Write the result, seat figures, rating changes and status in one transaction.

    Only the holder of claim ``attempt`` can finish the match, and only once; any other call is
    a no-op returning False.
    """
    try:
        won = _mark_finished(match_id, attempt, outcome, replay_path)
        if not won:
            db.session.rollback()
            return False
        match = db.session.get(Match, match_id)
        assert match is not None
        _record_seats(match, outcome)
        # Rows are locked in the order activation locks them: bots, versions, then ratings.
        placement.count_finished([match_id])
        if match.rated and match.kind == MatchKind.LADDER:
            ratings.apply_match(match, [s.bot_id for s in match.seats], outcome.ranking)
        if match.kind == MatchKind.HUMAN:  # its own ladder: no bot ladder hears of a table
            human_ladder.rate_table(match, outcome.ranking)
        db.session.commit()
    except IntegrityError:
        # Rating changes of this match exist already (an admin replayed a rated match): keep
        # them, record this play's result, and rate nothing twice.
        db.session.rollback()
        log.warning("match %s was already rated; its ratings are left as they were", match_id)
        if _mark_finished(match_id, attempt, outcome, replay_path):
            placement.count_finished([match_id])
        db.session.commit()
        return False
    attempts.patiently(lambda: _after_finish(match_id), f"match {match_id}: follow-ups")
    return True


def _mark_finished(match_id: int, attempt: int, outcome: engine.Outcome, replay: str) -> bool:
    stmt = (
        update(Match)
        .where(
            Match.id == match_id,
            Match.attempts == attempt,
            # Queued: the lease ran out (a database outage stopped the heartbeat) but no one
            # has claimed the match since; this attempt's result still stands.
            Match.status.in_([MatchStatus.RUNNING, MatchStatus.QUEUED]),
        )
        .values(
            status=MatchStatus.FINISHED,
            result=outcome.result,
            outcome=outcome.summary(),
            replay_path=replay,
            final_hash=outcome.final_hash,
            finished_at=utcnow(),
            lease_until=None,
            error=None,
        )
        .execution_options(synchronize_session=False)
    )
    return bool(db.session.execute(stmt).rowcount == 1)  # type: ignore[attr-defined]


def _record_seats(match: Match, outcome: engine.Outcome) -> None:
    limit = int(current_app.config["PAUSE_AFTER_FAILURES"])
    for seat in match.seats:
        k = seat.seat
        seat.status = outcome.statuses[k]
        seat.place = outcome.ranking[k]
        seat.score = outcome.scores[k] if k < len(outcome.scores) else None
        seat.strikes = outcome.strikes[k]
        seat.cpu_seconds = outcome.cpu_seconds[k]
        think = stats.think_summary(outcome.replay.get("steps") or [], k)
        seat.moves, seat.think_ms_p50 = think.moves, think.p50
        seat.think_ms_p90, seat.think_ms_max = think.p90, think.most
        sizes = outcome.extra.get("log_bytes") or []
        seat.log_bytes = sizes[k] if k < len(sizes) else None
        if match.kind not in (MatchKind.CHALLENGE, MatchKind.HUMAN):  # pauses no bot
            _count_failure(seat.bot, seat.status, outcome.forfeited[k], match.id, limit)


def _count_failure(bot: Bot, status: str, forfeited: bool, match_id: int, limit: int) -> None:
    """Track consecutive failed matches; pause the bot, with a reason, when they reach ``limit``."""
    if status in CLEAN_STATUSES and not forfeited:
        bot.consecutive_failures = 0
        return
    bot.consecutive_failures += 1
    bot.failed_matches += 1
    if bot.consecutive_failures >= limit and bot.status == BotStatus.ACTIVE:
        bot.status = BotStatus.PAUSED
        bot.paused_reason = (
            f"paused after {bot.consecutive_failures} failed matches in a row "
            f"(the last, match {match_id}, ended with status {status!r}); "
            "upload a fixed version or resume the bot"
        )
        events.emit(bot, events.BOT_SUSPENDED, f"{bot.name} was suspended: {bot.paused_reason}")


def _after_finish(match_id: int) -> None:
    """Tell who listens to the match's kind that it finished: a ladder asks for its next
    matches at once, a tournament's last match concludes it, a validation match decides on its
    version (``matches.when_ended``)."""
    matches.tell_ended([match_id])
