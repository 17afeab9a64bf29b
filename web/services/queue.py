"""Sending work to the workers, only once the rows it refers to are committed.

Six queues, consumed in this order of priority by the workers that take them:

- ``builds``: building and self-testing uploaded versions (a worker slot is reserved for it);
- ``default``: the periodic scheduler and reaper (short, at most one message of each);
- ``validate``: validation matches (the reserved slot plays them too);
- ``urgent``: the placement matches of newly active versions;
- ``challenges``: unrated matches an author asked for (``web.services.challenges``);
- ``matches``: ordinary ladder and tournament matches.

Each match message carries the match id in its task id (``match-<id>-<nonce>``), so the reaper
can tell a match whose message waits in the broker from one whose message was lost.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import redis
from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import Session

from web.extensions import db

log = logging.getLogger(__name__)

_PENDING = "arena_after_commit"
_installed = False


def install_commit_hooks() -> None:
    """Run ``after_commit`` callbacks when their session commits (installed once per process)."""
    global _installed
    if _installed:
        return
    event.listen(Session, "after_commit", _run_pending)
    event.listen(Session, "after_soft_rollback", _drop_pending)
    _installed = True


def _run_pending(session: Session) -> None:
    callbacks = session.info.pop(_PENDING, [])
    for callback in callbacks:
        callback()


def _drop_pending(session: Session, _previous: Any) -> None:
    session.info.pop(_PENDING, None)


def after_commit(callback: Callable[[], None]) -> None:
    """Call ``callback`` after the current ``db.session`` transaction commits; never on rollback."""
    db.session().info.setdefault(_PENDING, []).append(callback)


def send_task(
    name: str, *args: Any, queue: str | None = None, countdown: float | None = None
) -> bool:
    """Send a task (after ``countdown`` seconds); False (logged) if the broker is unreachable.

    What could not be sent waits in this process's outbox, which sends it again every
    ``OUTBOX_RETRY`` seconds until the broker takes it; the reaper resends whatever a process
    that stopped meanwhile left unsent.
    """

    def publish(delay: float | None) -> None:
        celery = current_app.extensions["celery"]
        celery.send_task(name, args=list(args), queue=queue, countdown=delay or None)

    return _send((name, *args), publish, countdown, f"{name}{args!r}")


OUTBOX_RETRY = 1.0
"""Seconds between two tries of the outbox at sending what the broker refused."""
OUTBOX_PATIENCE = 3600.0
"""Seconds the outbox keeps trying one message; the reaper resends it after that."""


class _Outbox:
    """Messages the broker refused, sent again every ``OUTBOX_RETRY`` s by a thread of this
    process until it takes them, each at most once more (a later send of the same message
    replaces the waiting one). A countdown counts from the first try."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[tuple[Any, ...], tuple[Callable[[float | None], None], float]] = {}
        self._thread: threading.Thread | None = None

    def add(
        self, key: tuple[Any, ...], publish: Callable[[float | None], None], due: float
    ) -> None:
        with self._lock:
            self._waiting[key] = (publish, due)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="outbox", daemon=True)
                self._thread.start()

    def drop(self, key: tuple[Any, ...]) -> None:
        with self._lock:
            self._waiting.pop(key, None)

    def waiting(self) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._waiting)

    def reset(self) -> None:
        """In a forked child: nothing waits there, and no thread runs."""
        self._lock = threading.Lock()
        self._waiting, self._thread = {}, None

    def _run(self) -> None:
        while True:
            time.sleep(OUTBOX_RETRY)
            with self._lock:
                batch = list(self._waiting.items())
                if not batch:
                    self._thread = None
                    return
            for key, (publish, due) in batch:
                if time.monotonic() - due > OUTBOX_PATIENCE:
                    self.drop(key)
                    continue
                try:
                    publish(max(due - time.monotonic(), 0.0) or None)
                except Exception:  # still down: tried again on the next round
                    continue
                with self._lock:
                    if self._waiting.get(key, (None,))[0] is publish:
                        del self._waiting[key]
                log.info("sent %r once the broker was back", key)


OUTBOX = _Outbox()
os.register_at_fork(after_in_child=OUTBOX.reset)


def _send(
    key: tuple[Any, ...],
    publish: Callable[[float | None], None],
    countdown: float | None,
    what: str,
) -> bool:
    """Publish now, or leave it to the outbox (False) if the broker is unreachable."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def in_app(delay: float | None) -> None:
        with app.app_context():
            publish(delay)

    try:
        in_app(countdown)
    except Exception as exc:  # the broker is down: the row stays queued in the database
        if not app.config.get("REDIS_URL"):  # no broker at all: nothing will ever take it
            log.warning("could not send %s: %s", what, exc)
            return False
        log.warning("could not send %s: %s; sent again once the broker is back", what, exc)
        OUTBOX.add(key, in_app, time.monotonic() + (countdown or 0.0))
        return False
    OUTBOX.drop(key)
    return True


BUILDS, DEFAULT, VALIDATE, URGENT, MATCHES = "builds", "default", "validate", "urgent", "matches"
CHALLENGES = "challenges"
MATCH_QUEUES = (VALIDATE, URGENT, CHALLENGES, MATCHES)
MATCH_TASK = "web.tasks.run_match"
PREPARE_TASK = "web.tasks.prepare_version"
SCHEDULE_TASK = "web.tasks.schedule_ladders"
REAP_TASK = "web.tasks.reap_stale_matches"
LAPSED_TASK = "web.tasks.take_back_lapsed"
_MATCH_ID_PREFIX = "match-"


def send_match(match_id: int, *, queue: str = MATCHES, countdown: float | None = None) -> bool:
    """Ask a worker to play match ``match_id`` (the row must already be committed), after
    ``countdown`` seconds if given (a match given back after a platform fault waits its backoff).

    ``queue`` is one of ``MATCH_QUEUES``: validation and placement matches go ahead. False if
    the broker is unreachable: the outbox sends it once the broker is back (``send_task``).
    """

    def publish(delay: float | None) -> None:
        celery = current_app.extensions["celery"]
        task_id = f"{_MATCH_ID_PREFIX}{match_id}-{uuid.uuid4().hex[:12]}"
        celery.send_task(
            MATCH_TASK, args=[match_id], queue=queue, task_id=task_id, countdown=delay or None
        )

    return _send((MATCH_TASK, match_id), publish, countdown, f"match {match_id}")


def send_match_after_commit(match_id: int, *, queue: str = MATCHES) -> None:
    """Ask a worker to play ``match_id`` once the current transaction commits."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def _send() -> None:
        with app.app_context():
            send_match(match_id, queue=queue)

    after_commit(_send)


# --- looking into the broker ----------------------------------------------------------------


def redis_client(url: str) -> redis.Redis | None:
    """A client for the broker at ``url``; None if the broker is not Redis."""
    if url.startswith("redis+socket://"):
        return redis.Redis(unix_socket_path=url[len("redis+socket://") :], socket_timeout=5)
    if url.startswith(("redis://", "rediss://")):
        return redis.Redis.from_url(url, socket_timeout=5)
    return None


@contextmanager
def app_redis() -> Iterator[redis.Redis | None]:
    """A client for the current app's broker (None if it is not Redis), closed afterwards."""
    client = redis_client(str(current_app.config["REDIS_URL"]))
    try:
        yield client
    finally:
        if client is not None:
            client.close()


def match_ids_in_broker() -> set[int] | None:
    """Matches whose message waits in a match queue or is held, unacknowledged, by a worker
    (taken less than ``MATCH_BUDGET`` seconds ago).

    None when that cannot be known (the broker is not Redis, or cannot be reached).
    """
    with app_redis() as client:
        return None if client is None else _match_ids_in(client)


def _match_ids_in(client: redis.Redis) -> set[int] | None:
    prefix = str(current_app.config.get("BROKER_PREFIX") or "")
    try:
        raw: list[Any] = []
        for queue in MATCH_QUEUES:
            raw.extend(json.loads(m) for m in client.lrange(prefix + queue, 0, -1))
        # A message a worker took is held until acknowledged; one held for longer than a
        # match may take belongs to a worker that died (the broker restores it much later).
        since = time.time() - float(current_app.config["MATCH_BUDGET"])
        tags: list[Any] = list(client.zrangebyscore(prefix + "unacked_index", since, "+inf"))
        held = client.hmget(prefix + "unacked", tags) if tags else []
        raw.extend(json.loads(m)[0] for m in held if m)
    except (redis.RedisError, ValueError, IndexError) as exc:
        log.warning("could not read the match queues: %s", exc)
        return None
    return set(_match_ids(raw))


def _match_ids(messages: Iterable[Any]) -> Iterator[int]:
    for message in messages:
        task_id = str(((message or {}).get("headers") or {}).get("id") or "")
        number = task_id[len(_MATCH_ID_PREFIX) :].split("-", 1)[0]
        if task_id.startswith(_MATCH_ID_PREFIX) and number.isdigit():
            yield int(number)


def version_ids_in_broker() -> set[int]:
    """Ids of versions whose prepare message waits in the broker's queue (Redis only).

    Anything else (another broker, Redis unreachable) gives an empty set: the reaper then
    resends, and the claim makes a duplicate harmless.
    """
    celery = current_app.extensions["celery"]
    try:
        with celery.connection_for_read() as conn:
            channel = conn.default_channel
            prefix = getattr(channel, "global_keyprefix", "") or ""
            queue = _queue_of(celery, PREPARE_TASK)
            keys = {prefix + channel._q_for_pri(queue, pri) for pri in channel.priority_steps}
            raw = [item for key in keys for item in channel.client.lrange(key, 0, -1)]
    except Exception as exc:  # not Redis, or Redis away: nothing is known to wait
        log.warning("could not read the broker's queue: %s", exc)
        return set()
    return {vid for vid in (_version_of(item) for item in raw) if vid is not None}


def _queue_of(celery: Any, task: str) -> str:
    route = celery.amqp.router.route({}, task, args=(), kwargs={})
    queue = route.get("queue")
    return str(getattr(queue, "name", queue) or celery.conf.task_default_queue)


def _version_of(item: bytes | str) -> int | None:
    """The version id a queued prepare message is for (None for any other message)."""
    try:
        headers = json.loads(item).get("headers") or {}
        if headers.get("task") != PREPARE_TASK:
            return None
        args = ast.literal_eval(headers.get("argsrepr") or "()")
        return int(args[0])
    except (ValueError, TypeError, IndexError, SyntaxError, AttributeError):
        return None


# --- periodic tasks: at most one waiting and one running ------------------------------------


def periodic_ttl(interval: float, task: str = "") -> float:
    """How long a periodic task's message or run may keep the next one from being sent.

    The lapsed-lease check is short and runs every few seconds: a message of it stuck with a
    busy worker must not hold the next one back for long.
    """
    return max(LAPSED_TTL_FLOOR if task == LAPSED_TASK else 60.0, 4 * interval)


LAPSED_TTL_FLOOR = 10.0
"""Seconds a waiting lapsed-lease check keeps beat from sending another, at least."""


def _periodic_key(prefix: str, task: str, what: str) -> str:
    return f"{prefix}arena:periodic:{what}:{task}"


def claim_periodic_send(client: redis.Redis, prefix: str, task: str, ttl: float) -> bool:
    """True if no message of ``task`` is waiting (a mark is set until it starts or ``ttl``)."""
    key = _periodic_key(prefix, task, "waiting")
    return bool(client.set(key, "1", nx=True, px=max(int(ttl * 1000), 1000)))


def forget_periodic_send(client: redis.Redis, prefix: str, task: str) -> None:
    """Clear the mark of ``task``'s waiting message: it expired before a worker ran it, so the
    next beat sends a fresh one rather than waiting for the mark to run out."""
    client.delete(_periodic_key(prefix, task, "waiting"))


def request_schedule() -> None:
    """Ask for a scheduler run now (a ladder match finished), unless one is already waiting.

    Workers never wait for the next beat with a ladder below its target; the waiting mark
    keeps at most one such message in the queue however many matches finish.
    """
    ttl = periodic_ttl(float(current_app.config["SCHEDULE_INTERVAL"]))
    prefix = str(current_app.config.get("BROKER_PREFIX") or "")
    with app_redis() as client:
        if client is None:
            return
        try:
            if not claim_periodic_send(client, prefix, SCHEDULE_TASK, ttl):
                return
        except redis.RedisError as exc:  # the beat still schedules
            log.warning("could not ask for a scheduler run: %s", exc)
            return
    send_task(SCHEDULE_TASK)


@contextmanager
def periodic_run(task: str, ttl: float) -> Iterator[bool]:
    """Mark ``task``'s waiting message as taken; yield True if no other run of it is going on.

    Without a Redis broker every run goes ahead (the tasks are idempotent anyway).
    """
    with app_redis() as client:
        if client is None:
            yield True
        else:
            with _locked(client, task, ttl) as alone:
                yield alone


@contextmanager
def _locked(client: redis.Redis, task: str, ttl: float) -> Iterator[bool]:
    prefix = str(current_app.config.get("BROKER_PREFIX") or "")
    token = uuid.uuid4().hex
    running = _periodic_key(prefix, task, "running")
    try:
        client.delete(_periodic_key(prefix, task, "waiting"))
        alone = bool(client.set(running, token, nx=True, px=max(int(ttl * 1000), 1000)))
    except redis.RedisError as exc:
        log.warning("periodic task %s runs without its lock: %s", task, exc)
        yield True
        return
    try:
        yield alone
    finally:
        if alone:
            _release(client, running, token)


def _release(client: redis.Redis, key: str, token: str) -> None:
    try:
        if client.get(key) == token.encode():
            client.delete(key)
    except redis.RedisError as exc:  # the lock expires by itself
        log.warning("could not release %s: %s", key, exc)
