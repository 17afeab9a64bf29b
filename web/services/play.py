"""Playing one queued match on a worker: claim, run, store the replay, finish in one transaction."""

from __future__ import annotations

import logging
import time
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
from web.services import matches, ratings
from web.storage import get_storage

log = logging.getLogger(__name__)

CLEAN_STATUSES = frozenset({"ok", "done", "active"})
"""Seat statuses that mean the bot played the whole match without failing."""


def play_match(match_id: int) -> str:
    """Play match ``match_id`` if this worker can claim it; returns what happened, for the logs."""
    lease = float(current_app.config["MATCH_LEASE"])
    attempt = matches.claim(match_id, matches.worker_name(), lease)
    if attempt is None:
        return "not claimed (finished, running elsewhere, or out of attempts)"
    try:
        seats = _seat_specs(match_id)
        match = db.session.get(Match, match_id)
        assert match is not None
        config, seed = dict(match.game_config), match.seed
        db.session.rollback()
        outcome = engine.run(config, seats, seed, on_step=_heartbeat(match_id, attempt, lease))
    except Exception as exc:  # the match could not be played: give the claim back
        db.session.rollback()
        log.exception("match %s, attempt %s could not be played", match_id, attempt)
        status = matches.release(match_id, attempt, f"{type(exc).__name__}: {exc}")
        return f"attempt {attempt} failed: {exc} (now {status})"
    replay_rel = _store_replay(outcome.replay)
    return "finished" if finish(match_id, attempt, outcome, replay_rel) else "result discarded"


def _seat_specs(match_id: int) -> list[engine.SeatSpec]:
    storage = get_storage()
    seats = db.session.scalars(
        select(MatchSeat).where(MatchSeat.match_id == match_id).order_by(MatchSeat.seat)
    ).all()
    return [
        engine.SeatSpec(
            bot_dir=storage.bot_dir(seat.bot_version_id),
            name=seat.bot.name,
            version=str(seat.version.number),
            trusted=seat.version.trusted,
        )
        for seat in seats
    ]


def _heartbeat(match_id: int, attempt: int, lease: float) -> Any:
    """An ``on_step`` callback that renews the lease every third of its length."""
    last = [time.monotonic()]
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def beat(*_args: Any, **_kwargs: Any) -> None:
        if time.monotonic() - last[0] < lease / 3:
            return
        last[0] = time.monotonic()
        with app.app_context():
            matches.renew_lease(match_id, attempt, lease)

    return beat


def _store_replay(replay: dict[str, Any]) -> str:
    storage = get_storage()
    path = storage.put_replay(orjson.dumps(replay, option=orjson.OPT_SORT_KEYS))
    return storage.relative(path)


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
        if match.rated and match.kind == MatchKind.LADDER:
            ratings.apply_match(match, [s.bot_id for s in match.seats], outcome.ranking)
        db.session.commit()
    except IntegrityError:
        # Rating changes of this match exist already (an admin replayed a rated match): keep
        # them, record this play's result, and rate nothing twice.
        db.session.rollback()
        log.warning("match %s was already rated; its ratings are left as they were", match_id)
        _mark_finished(match_id, attempt, outcome, replay_path)
        db.session.commit()
        return False
    _after_finish(match_id)
    return True


def _mark_finished(match_id: int, attempt: int, outcome: engine.Outcome, replay: str) -> bool:
    stmt = (
        update(Match)
        .where(
            Match.id == match_id,
            Match.attempts == attempt,
            Match.status == MatchStatus.RUNNING,
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


def _after_finish(match_id: int) -> None:
    """Follow-ups that read the committed result (validation matches decide on a version)."""
    match = db.session.get(Match, match_id)
    if match is not None and match.kind == MatchKind.VALIDATION:
        from web.services.bots import validation_match_finished

        validation_match_finished(match)
