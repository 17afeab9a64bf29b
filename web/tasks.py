"""Celery tasks: thin wrappers that take ids and call service functions.

Bot misbehaviour is a normal match outcome, never a task error; only infrastructure trouble
(the database unreachable for a moment) is retried by Celery, and the reaper covers the rest.
"""

from __future__ import annotations

import logging
from dataclasses import astuple

from celery import Task, shared_task
from sqlalchemy.exc import InterfaceError, OperationalError

log = logging.getLogger(__name__)

_RETRY = {
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "retry_jitter": True,
    "max_retries": 3,
}

# Work on one match or one version must outlast a database outage rather than be dropped:
# up to 30 retries, each after a random pause of at most 2, 4, 8 ... 60 seconds: over ten
# minutes on average before the reaper is left to resend the work.
_OUTAGE_RETRY = {
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 2,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 30,
}


@shared_task(name="web.tasks.run_match", bind=True, **_OUTAGE_RETRY)
def run_match(self: Task, match_id: int) -> str:
    """Play match ``match_id`` unless another worker has it or it is done."""
    from web.services.play import play_match

    info = self.request.delivery_info or {}
    outcome = play_match(match_id, redelivered=bool(info.get("redelivered")))
    log.info("match %s: %s", match_id, outcome)
    return outcome


@shared_task(name="web.tasks.prepare_version", **_OUTAGE_RETRY)
def prepare_version(version_id: int) -> str:
    """Build and self-test a newly uploaded bot version, then validate or activate it.

    A platform fault gives the version back to be prepared again later (``lifecycle``).
    """
    from web.services.lifecycle import prepare

    return str(prepare(version_id))


def _ttl(setting: str, task: str = "") -> float:
    from flask import current_app

    from web.services.queue import periodic_ttl

    return periodic_ttl(float(current_app.config[setting]), task)


@shared_task(name="web.tasks.schedule_ladders", **_RETRY)
def schedule_ladders() -> int:
    """Top up every ladder's queue of matches (skipped while another run is going on)."""
    from web.services.ladders import schedule_all
    from web.services.queue import periodic_run

    with periodic_run("web.tasks.schedule_ladders", _ttl("SCHEDULE_INTERVAL")) as alone:
        return schedule_all() if alone else 0


@shared_task(name="web.tasks.reap_stale_matches", **_RETRY)
def reap_stale_matches() -> dict[str, list[int]]:
    """Queue again (or fail) matches whose worker died or whose message was lost."""
    from web.services import seatlogs
    from web.services.lifecycle import reap as reap_versions
    from web.services.matches import reap
    from web.services.queue import app_redis, periodic_run
    from web.services.tournaments import conclude_all

    with periodic_run("web.tasks.reap_stale_matches", _ttl("REAP_INTERVAL")) as alone:
        if not alone:
            return {"requeued": [], "resent": [], "failed": []}
        report = reap()
        versions = reap_versions()
        concluded = conclude_all()  # those whose last match failed for good
        with app_redis() as client:
            pruned = seatlogs.prune(client)
    if pruned.deleted or pruned.failed:
        log.info("seat logs past SEAT_LOG_DAYS: deleted %s, failed %s", *astuple(pruned))
    if report.requeued or report.resent or report.failed:
        log.info("reaper: %s", report)
    if any(versions.values()):
        log.info("reaper, versions: %s", versions)
    if concluded:
        log.info("reaper, tournaments concluded: %s", concluded)
    return {"requeued": report.requeued, "resent": report.resent, "failed": report.failed}


@shared_task(name="web.tasks.take_back_lapsed", **_RETRY)
def take_back_lapsed() -> list[int]:
    """Queue again at once the matches whose lease lapsed (their worker or host is gone)."""
    from web.services import play  # noqa: F401  who is told of a match failed at its bound
    from web.services.matches import take_back_lapsed as take_back
    from web.services.queue import LAPSED_TASK, periodic_run

    with periodic_run(LAPSED_TASK, _ttl("LEASE_CHECK_INTERVAL", LAPSED_TASK)) as alone:
        if not alone:
            return []
        report = take_back()
    if report.requeued or report.failed:
        log.info("lapsed leases: queued again %s, failed %s", report.requeued, report.failed)
    return report.requeued


@shared_task(name="web.tasks.deliver_webhook", **_RETRY)
def deliver_webhook(delivery_id: int) -> str:
    """One try of a webhook delivery; the next try is scheduled by the service on failure."""
    from web.services.webhooks import deliver

    return deliver(delivery_id)
