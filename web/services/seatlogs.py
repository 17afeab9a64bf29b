"""Each seat's whole stderr of a match, kept for the bot's owner, and a bot's replays in bulk.

The referee keeps the first ``arena.connection.STDERR_LOG_BYTES`` (1 MiB) of what a seat writes
to stderr during a match, counts the rest and marks the cut in the text. When the match
finishes, each seat's log is stored through the storage interface, gzip-compressed, under
``logs/<match id>/seat<k>.txt.gz`` (both backends alike), and its size is noted on the seat
(``MatchSeat.log_bytes``). A log holds only what that seat's bot wrote, and the bot was told
only its own seat's view, so it tells its owner nothing of another seat's hidden cards.

Who may read a seat's log (``readable``): the owner of the seat's bot, once the match is
finished; an admin too, for support, once the match is finished and its deal group is no
longer sealed (as with the per-move stderr text). Everyone else gets 404, as if it did not
exist.

Logs are kept ``SEAT_LOG_DAYS`` days after their match finished (0 keeps them for ever): the
reaper's periodic pass (``prune``) deletes older ones from storage, a bounded batch at a time,
and clears ``log_bytes``, so the seat then has no log to offer. It walks forward from a mark
kept in Redis (the oldest finish it has not yet looked at), so a pass reads only new rows.

Bulk replays (``replay_archive``): a bot's finished matches, the last N or those finished in
a date range, as one zip streamed while it is written, at most ``BULK_REPLAYS_MAX`` matches
and ``BULK_REPLAYS_MAX_BYTES`` of replays; matches still sealed are left out.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from flask import current_app
from redis import Redis
from redis.exceptions import RedisError
from sqlalchemy import select

from web.extensions import db
from web.models import Bot, Match, MatchSeat, MatchStatus, User, utcnow
from web.services import sealing
from web.storage import COMPRESSED, describe, get_storage

log = logging.getLogger(__name__)

BULK_REPLAYS_MAX = 200
"""At most this many replays in one bulk download."""
BULK_REPLAYS_MAX_BYTES = 64 << 20
"""At most this many bytes of (uncompressed) replays in one bulk download; it stops before."""


def log_key(match_id: int, seat: int) -> str:
    """The storage key of seat ``seat``'s log of match ``match_id``."""
    return f"logs/{match_id}/seat{seat}.txt{COMPRESSED}"


def store(match_id: int, logs: list[str]) -> list[int | None]:
    """Store each seat's log (empty ones are not stored); returns each one's size or None.

    A log that cannot be stored is logged and left out: the match result matters more.
    """
    storage = get_storage()
    sizes: list[int | None] = []
    for seat, text in enumerate(logs):
        data = text.encode("utf-8")
        if not data:
            sizes.append(None)
            continue
        try:
            storage.write(log_key(match_id, seat), data)
        except OSError as exc:
            log.warning("match %s seat %s: log not stored: %s", match_id, seat, describe(exc))
            sizes.append(None)
            continue
        sizes.append(len(data))
    return sizes


PRUNE_BATCH = 200
"""Seat logs deleted per pruning pass at most (a pass runs with every reaper pass)."""
PRUNE_MARK = "seatlogs:pruned-until"
"""Redis key (under the broker prefix): the finish time up to which logs were pruned."""


@dataclass(frozen=True)
class Pruned:
    """What one pruning pass did: logs deleted, logs whose deletion failed (kept for later)."""

    deleted: int = 0
    failed: int = 0


def prune(client: Redis | None, now: datetime | None = None) -> Pruned:
    """Delete the logs of matches finished more than ``SEAT_LOG_DAYS`` days ago. Commits.

    At most ``PRUNE_BATCH`` logs a pass, oldest first. A log the storage cannot delete now
    keeps its row (and stops the mark), so the next pass tries it again. Without a Redis
    client (or when it fails) a pass starts from the oldest finish.
    """
    days = float(current_app.config["SEAT_LOG_DAYS"])
    if days <= 0:
        return Pruned()
    cutoff = (now or utcnow()) - timedelta(days=days)
    key = current_app.config["BROKER_PREFIX"] + PRUNE_MARK
    mark = _read_mark(client, key)
    query = (
        select(MatchSeat, Match.finished_at)
        .join(Match, Match.id == MatchSeat.match_id)
        .where(Match.finished_at < cutoff, MatchSeat.log_bytes.is_not(None))
        .order_by(Match.finished_at, MatchSeat.id)
        .limit(PRUNE_BATCH)
    )
    if mark is not None:
        query = query.where(Match.finished_at >= mark)
    rows = db.session.execute(query).all()
    storage = get_storage()
    deleted = failed = 0
    reached: datetime | None = None
    for seat, finished in rows:
        try:
            storage.delete(log_key(seat.match_id, seat.seat))
        except OSError as exc:
            log.warning("seat log of match %s not pruned: %s", seat.match_id, describe(exc))
            failed += 1
            break
        seat.log_bytes = None
        deleted += 1
        reached = finished
    db.session.commit()
    if not failed:
        reached = cutoff if len(rows) < PRUNE_BATCH else reached
    if reached is not None and client is not None:
        try:
            client.set(key, reached.replace(tzinfo=UTC).timestamp())
        except RedisError as exc:
            log.warning("seat log pruning mark not kept: %s", exc)
    return Pruned(deleted, failed)


def _read_mark(client: Redis | None, key: str) -> datetime | None:
    try:
        raw = client.get(key) if client is not None else None
    except RedisError as exc:
        log.warning("seat log pruning mark not read: %s", exc)
        return None
    return datetime.fromtimestamp(float(raw), UTC).replace(tzinfo=None) if raw else None


def readable(match: Match, seat: MatchSeat, user: User | None) -> bool:
    """Whether ``user`` may read ``seat``'s log of ``match`` (see the module's text)."""
    if user is None or seat.log_bytes is None or match.status != MatchStatus.FINISHED:
        return False
    if seat.bot.owner_id == user.id:
        return True
    return bool(user.is_admin) and not sealing.sealed(match)


def read(match: Match, seat: MatchSeat) -> bytes:
    """The log's text as UTF-8 bytes; ``OSError`` or ``ValueError`` if storage fails."""
    return get_storage().read(log_key(match.id, seat.seat))


def readable_seats(match: Match, user: User | None) -> list[int]:
    """The seats of ``match`` whose logs ``user`` may read."""
    return [s.seat for s in match.seats if readable(match, s, user)]


def bulk_matches(
    bot: Bot, *, last: int | None, since: datetime | None, until: datetime | None
) -> list[Match]:
    """The bot's finished matches to download, newest first, at most ``BULK_REPLAYS_MAX``."""
    query = (
        select(Match)
        .where(
            Match.id.in_(select(MatchSeat.match_id).where(MatchSeat.bot_id == bot.id)),
            Match.status == MatchStatus.FINISHED,
        )
        .order_by(Match.finished_at.desc(), Match.id.desc())
    )
    if since is not None:
        query = query.where(Match.finished_at >= since)
    if until is not None:
        query = query.where(Match.finished_at < until)
    limit = min(last if last is not None else BULK_REPLAYS_MAX, BULK_REPLAYS_MAX)
    found = list(db.session.scalars(query.limit(limit)))
    return [m for m in found if not sealing.sealed(m)]


class _Sink:
    """A write-only file that hands what it is given to a generator, chunk by chunk.

    It cannot tell or seek, so ``zipfile`` writes each entry's sizes after its data.
    """

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.offset = 0

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        self.offset += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        out = b"".join(self.chunks)
        self.chunks.clear()
        return out


def replay_archive(matches: list[Match], public: Any) -> Iterator[bytes]:
    """A zip of the replays of ``matches`` (each as ``public(match)`` gives it), streamed.

    ``public`` returns a replay's JSON bytes as the reader may see it (``web.api.replays``).
    A replay that cannot be read is named in ``missing.txt`` instead. The archive stops
    before going past ``BULK_REPLAYS_MAX_BYTES``; ``README.txt`` then says so.
    """
    sink = _Sink()
    missing: list[str] = []
    total = 0
    cut = 0
    with zipfile.ZipFile(cast(Any, sink), "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for match in matches:
            try:
                body = public(match)
            except (OSError, LookupError, ValueError) as exc:
                missing.append(f"match {match.id}: {exc}")
                continue
            if total + len(body) > BULK_REPLAYS_MAX_BYTES:
                cut += 1
                continue
            total += len(body)
            archive.writestr(f"match-{match.id}.json", body)
            yield sink.take()
        notes = [f"{len(matches) - len(missing) - cut} replays"]
        if cut:
            notes.append(f"{cut} more left out: over {BULK_REPLAYS_MAX_BYTES} bytes in all")
        notes.extend(missing)
        archive.writestr("README.txt", "\n".join(notes) + "\n")
    yield sink.take()
