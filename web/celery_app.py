"""Celery settings and the binding of Celery to the Flask app.

The settings follow one rule: the database, not the broker, decides whether a match still has to be
played. The broker may deliver a match twice or lose it; claims by compare-and-set and the reaper
make both harmless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from celery import Celery, Task
from flask import Flask

MATCH_TASK = "web.tasks.run_match"


def celery_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Celery configuration derived from the app's settings."""
    budget = int(config["MATCH_BUDGET"])
    visibility = max(int(config["VISIBILITY_TIMEOUT"]), budget + 600)
    transport: dict[str, Any] = {"visibility_timeout": visibility, **redis_timeouts(config)}
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
        "task_default_queue": "default",
        "task_routes": {MATCH_TASK: {"queue": "matches"}},
        "beat_schedule": {
            "schedule-ladders": {
                "task": "web.tasks.schedule_ladders",
                "schedule": float(config["SCHEDULE_INTERVAL"]),
            },
            "reap-stale-matches": {
                "task": "web.tasks.reap_stale_matches",
                "schedule": float(config["REAP_INTERVAL"]),
            },
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
