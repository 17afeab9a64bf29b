"""The worker's side of a person's seat: the ``ask`` of an ``arena.remote_seat.RemoteSeat``.

At the person's turn the turn is written to Redis for the site (``web.services.tables``) and the
answer awaited on a list, in short blocking reads, until the turn's time is up or the table's
overall bound (``HUMAN_MATCH_MAX``) is reached: after it every turn is late at once, so a
person who never answers strikes out quickly and no worker is held forever. Answers to older
turns are skipped. A person who leaves the table (``tables.leave``) is not asked again: each of
their turns is late at once, as a bot that stopped answering, until the seat forfeits.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
import redis

from arena.remote_seat import Turn
from web.services.tables import TURN_TTL, answer_key, left_key, turn_key

log = logging.getLogger(__name__)

READ_S = 2.0
"""The longest one blocking read waits (a Redis client's socket outlasts it)."""


class RedisSeat:
    """Asks the person at match ``match_id``'s table through Redis until ``until``
    (a ``time.monotonic`` moment)."""

    def __init__(self, client: redis.Redis, prefix: str, match_id: int, until: float) -> None:
        self.client, self.until = client, until
        self.turn_key, self.answer_key = turn_key(prefix, match_id), answer_key(prefix, match_id)
        self.left_key = left_key(prefix, match_id)
        self.left = False

    def __call__(self, turn: Turn) -> int | None:
        wait = min(turn.wait_s, self.until - time.monotonic())
        if wait <= 0 or self.left or self._has_left():
            return None
        body = turn.to_json()
        body["deadline_ms"] = round((time.time() + wait) * 1000)
        try:
            pipe = self.client.pipeline()
            pipe.delete(self.answer_key)
            pipe.set(self.turn_key, orjson.dumps(body), ex=TURN_TTL)
            pipe.execute()
            return self._await(turn.request_id, time.monotonic() + wait)
        except (redis.RedisError, OSError) as exc:  # no way to hear the person: no answer
            log.warning("%s: %s", self.turn_key, exc)
            time.sleep(max(0.0, min(wait, READ_S)))
            return None
        finally:
            self._forget()

    def _await(self, request_id: int, end: float) -> int | None:
        while (left := end - time.monotonic()) > 0:
            got: Any = self.client.blpop([self.answer_key], timeout=min(left, READ_S))
            if not got:
                continue
            try:
                answer = orjson.loads(got[1])
            except orjson.JSONDecodeError:
                continue
            if not isinstance(answer, dict):
                continue
            if answer.get("leave"):
                self.left = True
                return None
            index = answer.get("index")
            if answer.get("request_id") == request_id and isinstance(index, int):
                return index
        return None

    def _has_left(self) -> bool:
        try:
            self.left = bool(self.client.exists(self.left_key))
        except (redis.RedisError, OSError):
            pass
        return self.left

    def _forget(self) -> None:
        try:
            self.client.delete(self.turn_key)
        except (redis.RedisError, OSError):
            pass

    def close(self) -> None:
        """The table is over: nothing of it stays in Redis."""
        try:
            self.client.delete(self.turn_key, self.answer_key, self.left_key)
        except (redis.RedisError, OSError):
            pass
        finally:
            self.client.close()
