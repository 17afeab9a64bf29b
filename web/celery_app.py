"""Celery settings and the binding of Celery to the Flask app.

The settings follow one rule: the database, not the broker, decides whether a match still has to be
played. The broker may deliver a match twice or lose it; claims by compare-and-set and the reaper
make both harmless.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from celery import Celery, Task
from celery.beat import PersistentScheduler, ScheduleEntry
from celery.signals import task_revoked
from flask import Flask

from web.services.queue import (
    BUILDS,
    CHALLENGES,
    DEFAULT,
    LAPSED_TASK,
    MATCH_TASK,
    MATCHES,
    PREPARE_TASK,
    REAP_TASK,
    SCHEDULE_TASK,
    URGENT,
    VALIDATE,
    claim_periodic_send,
    forget_periodic_send,
    periodic_ttl,
    redis_client,
)

log = logging.getLogger(__name__)

ALL_QUEUES = f"{BUILDS},{DEFAULT},{VALIDATE},{URGENT},{CHALLENGES},{MATCHES}"
"""Every queue, in the order a worker that takes them all serves them."""
MATCH_WORKER_QUEUES = f"{DEFAULT},{VALIDATE},{URGENT},{CHALLENGES},{MATCHES}"
"""What the match workers take: the (short) periodic tasks, validation, placement, challenges,
the rest."""
RESERVED_WORKER_QUEUES = f"{BUILDS},{DEFAULT},{VALIDATE}"
"""What the reserved worker takes: builds, periodic tasks, validation; no ladder match."""


def celery_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Celery configuration derived from the app's settings."""
    budget = int(config["MATCH_BUDGET"])
    visibility = max(int(config["VISIBILITY_TIMEOUT"]), budget + 600)
    # Queues are read in the order a worker lists them (``-Q``): builds and urgent matches first.
    transport: dict[str, Any] = {
        "visibility_timeout": visibility,
        "queue_order_strategy": "priority",
        **redis_timeouts(config),
    }
    if config.get("BROKER_PREFIX"):
        # Several platforms (or test runs) can share one Redis without taking each other's work.
        transport["global_keyprefix"] = config["BROKER_PREFIX"]
    return {
        "broker_url": config["REDIS_URL"],
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        # Acknowledge after the task ran; a worker killed mid-match leaves the message to be
        # delivered again. Celery does not cap those redeliveries, our attempts column does.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        # A hard time limit or a task exception is acknowledged: the reaper, reading the
        # database, decides whether the match is played again.
        "task_acks_on_timeout": True,
        "task_acks_on_failure": True,
        "worker_prefetch_multiplier": 1,
        "worker_concurrency": int(config["WORKER_CONCURRENCY"]),
        "worker_max_tasks_per_child": 200,
        "worker_soft_shutdown_timeout": 10.0,
        "task_soft_time_limit": budget + 60,
        "task_time_limit": budget + 120,
        # Above the hard limit, so a match still running is never handed to a second worker.
        "broker_transport_options": transport,
        "result_backend_transport_options": transport,
        "visibility_timeout": visibility,
        "task_default_queue": DEFAULT,
        "task_routes": {MATCH_TASK: {"queue": MATCHES}, PREPARE_TASK: {"queue": BUILDS}},
        "beat_scheduler": "web.celery_app:SingleFlightScheduler",
        "beat_schedule": {
            "schedule-ladders": _periodic(SCHEDULE_TASK, float(config["SCHEDULE_INTERVAL"])),
            "reap-stale-matches": _periodic(REAP_TASK, float(config["REAP_INTERVAL"])),
            "take-back-lapsed": _periodic(LAPSED_TASK, float(config["LEASE_CHECK_INTERVAL"])),
        },
        "broker_connection_retry_on_startup": True,
        "worker_hijack_root_logger": False,
        "imports": ("web.tasks",),
    }


def redis_timeouts(config: Mapping[str, Any]) -> dict[str, Any]:
    """A Redis that stops answering (its host drops packets) fails a command, never hangs it.

    The socket timeout is well above the consumer's one-second BRPOP, so an idle queue is
    not mistaken for a dead broker.
    """
    timeout = float(config["REDIS_SOCKET_TIMEOUT"])
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": min(timeout, 10.0),
        "socket_keepalive": True,
        "retry_on_timeout": True,
    }


def _periodic(task: str, interval: float) -> dict[str, Any]:
    # A message not taken within its interval is dropped: the next beat sends a fresh one.
    return {"task": task, "schedule": interval, "options": {"expires": interval}}


class SingleFlightScheduler(PersistentScheduler):
    """Celery beat that sends a periodic task only when no earlier message of it is waiting.

    A mark in Redis is set when a message is sent and cleared when a worker starts it (or after
    ``periodic_ttl``), so however long the workers are busy, each periodic task has at most one
    message in the queue.
    """

    def apply_entry(self, entry: ScheduleEntry, producer: Any = None) -> None:
        conf = self.app.conf
        if not hasattr(self, "_arena_redis"):
            self._arena_redis = redis_client(str(conf.broker_url))
        client = self._arena_redis
        prefix = str((conf.broker_transport_options or {}).get("global_keyprefix", ""))
        interval = float(entry.schedule.run_every.total_seconds())
        try:
            free = client is None or claim_periodic_send(
                client, prefix, entry.task, periodic_ttl(interval, entry.task)
            )
        except Exception as exc:  # the broker is down: sending would fail as well
            log.warning("beat: %s not sent: %s", entry.task, exc)
            return
        if free:
            super().apply_entry(entry, producer)
        else:
            log.info("beat: %s still waiting in the queue; not sent again", entry.task)


PERIODIC_TASKS = frozenset({SCHEDULE_TASK, REAP_TASK, LAPSED_TASK})


@task_revoked.connect
def forget_expired_periodic(sender: Any = None, expired: bool = False, **_: Any) -> None:
    """A periodic message that expired before a worker could run it (every process was busy)
    never starts, so it never clears its waiting mark: clear it here, or beat would not send
    the task again until the mark runs out (``periodic_ttl``)."""
    name = str(getattr(sender, "name", ""))
    if not expired or name not in PERIODIC_TASKS:
        return
    conf = sender.app.conf
    client = redis_client(str(conf.broker_url))
    if client is None:
        return
    prefix = str((conf.broker_transport_options or {}).get("global_keyprefix", ""))
    try:
        forget_periodic_send(client, prefix, name)
    except Exception as exc:  # the mark runs out by itself
        log.warning("could not clear the mark of %s: %s", name, exc)
    finally:
        client.close()


def celery_init_app(app: Flask) -> Celery:
    """Create the Celery app bound to ``app`` (every task runs inside an app context)."""

    class FlaskTask(Task):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            with app.app_context():
                return self.run(*args, **kwargs)

    celery = Celery(app.name, task_cls=FlaskTask)
    celery.config_from_object(celery_settings(app.config))
    celery.set_default()
    app.extensions["celery"] = celery
    return celery
