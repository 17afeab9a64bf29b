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

Bulk replays (``replay_archive``): a bot's finished matches, the last N or those finished in
a date range, as one zip streamed while it is written, at most ``BULK_REPLAYS_MAX`` matches
and ``BULK_REPLAYS_MAX_BYTES`` of replays; matches still sealed are left out.
"""

from __future__ import annotations

import logging
import zipfile
from collections.abc import Iterator
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select

from web.extensions import db
from web.models import Bot, Match, MatchSeat, MatchStatus, User
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
