"""Owners' webhooks: each event of their bots POSTed, signed, to a URL they chose.

A delivery is one try per Celery task (``web.tasks.deliver_webhook``): a 2xx answer delivers
it; anything else (an error status, a refused connection, a timeout) is tried again after
``WEBHOOK_BACKOFF`` seconds, doubled after each failed try, up to ``WEBHOOK_MAX_TRIES`` tries;
then it has failed. Each delivery's tries, last status and last error are kept and listed on
the owner's account page.

The body is the event as JSON. Two headers let the receiver check it came from us and is fresh:
``X-Arena-Timestamp`` (Unix seconds) and ``X-Arena-Signature``: ``sha256=`` and the hex
HMAC-SHA256, keyed with the webhook's secret, of ``<timestamp>.<body>``.

The URL is the owner's, so treated as hostile (server-side request forgery): only ``http`` and
``https``; the host is resolved and every address it resolves to must be public (no private,
loopback, link-local, multicast, reserved or unspecified address) unless
``WEBHOOK_ALLOW_PRIVATE`` is set (development); the connection goes to the address that was
checked (a second lookup cannot swap it); redirects are not followed; each try has a timeout of
``WEBHOOK_TIMEOUT`` seconds; at most ``RESPONSE_READ_BYTES`` of the answer are read.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import logging
import secrets
import socket
import ssl
import time
from typing import Any, Final
from urllib.parse import urlsplit

import orjson
from flask import current_app
from sqlalchemy import func, select

from web.extensions import db
from web.models import User, Webhook, WebhookDelivery, utcnow

log = logging.getLogger(__name__)

DELIVER_TASK: Final = "web.tasks.deliver_webhook"
MAX_WEBHOOKS = 5
"""Webhooks one account may have."""
MAX_URL = 2048
RESPONSE_READ_BYTES = 4096
"""Bytes of a receiver's answer read at most (only its status counts)."""
SHOWN_DELIVERIES = 30

PENDING: Final = "pending"
DELIVERED: Final = "delivered"
FAILED: Final = "failed"


class WebhookRefused(ValueError):
    """A URL that is not accepted as a webhook; the message says why."""


# --- subscriptions -------------------------------------------------------------------------


def check_url(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, path)`` of an acceptable URL, else ``WebhookRefused``.

    Looks at the URL alone; where the host leads is checked at each delivery (``resolve``).
    """
    if len(url) > MAX_URL:
        raise WebhookRefused(f"the URL is longer than {MAX_URL} characters")
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise WebhookRefused("the URL holds spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookRefused(f"the URL cannot be read: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise WebhookRefused("only http:// and https:// URLs are accepted")
    if not parts.hostname:
        raise WebhookRefused("the URL names no host")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused("the URL must not hold a user name or password")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80), path


def subscribe(user: User, url: str) -> Webhook:
    """A new webhook of ``user`` with a fresh secret (shown to its owner); ``WebhookRefused``."""
    url = url.strip()
    _, host, _, _ = check_url(url)
    if not _allow_private():
        literal = _literal(host)
        if literal is not None and not literal.is_global:
            raise WebhookRefused(f"{host} is not a public address")
    count = db.session.scalar(select(func.count()).where(Webhook.user_id == user.id))
    if (count or 0) >= MAX_WEBHOOKS:
        raise WebhookRefused(f"an account may have at most {MAX_WEBHOOKS} webhooks")
    hook = Webhook(user=user, url=url, secret=secrets.token_hex(32))
    db.session.add(hook)
    return hook


def remove(hook: Webhook) -> None:
    """Delete ``hook`` and its deliveries."""
    db.session.execute(
        WebhookDelivery.__table__.delete().where(WebhookDelivery.webhook_id == hook.id)
    )
    db.session.delete(hook)


def hooks_of(user: User) -> list[Webhook]:
    return list(db.session.scalars(select(Webhook).where(Webhook.user_id == user.id)))


def deliveries_of(user: User, limit: int = SHOWN_DELIVERIES) -> list[WebhookDelivery]:
    """The latest deliveries to ``user``'s webhooks, newest first."""
    query = (
        select(WebhookDelivery)
        .join(Webhook, Webhook.id == WebhookDelivery.webhook_id)
        .where(Webhook.user_id == user.id)
        .order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
        .limit(limit)
    )
    return list(db.session.scalars(query))


# --- deliveries ----------------------------------------------------------------------------


def send(delivery_id: int, countdown: float | None = None) -> bool:
    """Queue a try of delivery ``delivery_id`` (after ``countdown`` seconds)."""
    from web.services.queue import send_task

    return send_task(DELIVER_TASK, delivery_id, countdown=countdown)


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Arena-Signature`` value of ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def deliver(delivery_id: int) -> str:
    """One try of a delivery; schedules the next on failure. Returns its status."""
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.status != PENDING:
        return "gone" if delivery is None else delivery.status
    hook = delivery.webhook
    body = orjson.dumps(delivery.event.to_json())
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "kozyri-arena-webhook",
        "X-Arena-Event": delivery.event.kind,
        "X-Arena-Delivery": str(delivery.id),
        "X-Arena-Timestamp": timestamp,
        "X-Arena-Signature": signature(hook.secret, timestamp, body),
    }
    delivery.tries += 1
    retry = True
    try:
        code = post(hook.url, body, headers)
        delivery.last_code = code
        delivery.last_error = None if 200 <= code < 300 else f"answered HTTP {code}"
    except WebhookRefused as exc:
        delivery.last_code, delivery.last_error = None, str(exc)
        retry = False  # where the URL leads is not allowed: trying again changes nothing
    except (OSError, http.client.HTTPException) as exc:
        delivery.last_code, delivery.last_error = None, f"{type(exc).__name__}: {exc}"[:500]
    if delivery.last_error is None:
        delivery.status, delivery.done_at = DELIVERED, utcnow()
    elif not retry or delivery.tries >= int(current_app.config["WEBHOOK_MAX_TRIES"]):
        delivery.status, delivery.done_at = FAILED, utcnow()
    status, tries = delivery.status, delivery.tries
    db.session.commit()
    if status == PENDING:
        send(delivery_id, countdown=backoff(tries))
    return status


def backoff(tries: int) -> float:
    """Seconds before the try after ``tries`` failed ones."""
    first = float(current_app.config["WEBHOOK_BACKOFF"])
    return first * float(2 ** max(0, tries - 1))


def _allow_private() -> bool:
    return bool(current_app.config["WEBHOOK_ALLOW_PRIVATE"])


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def resolve(host: str, port: int) -> str:
    """An address of ``host`` to connect to; ``WebhookRefused`` if any address is not public."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise OSError(f"cannot resolve {host}: {exc}") from exc
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise OSError(f"{host} resolves to no address")
    if not _allow_private():
        for address in addresses:
            ip = ipaddress.ip_address(address.split("%")[0])
            mapped = getattr(ip, "ipv4_mapped", None)
            if not ip.is_global or (mapped is not None and not mapped.is_global):
                raise WebhookRefused(f"{host} leads to {address}, which is not a public address")
    return addresses[0]


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to a checked address, with the certificate checked for the URL's host."""

    def __init__(self, address: str, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST ``body`` to ``url`` as the module's text says; returns the answer's status."""
    scheme, host, port, path = check_url(url)
    address = resolve(host, port)
    timeout = float(current_app.config["WEBHOOK_TIMEOUT"])
    conn: Any
    if scheme == "https":
        conn = _PinnedHTTPS(address, host, port, timeout)
    else:
        conn = http.client.HTTPConnection(address, port, timeout=timeout)
    default_port = 443 if scheme == "https" else 80
    host_header = host if port == default_port else f"{host}:{port}"
    if ":" in host and not host.startswith("["):
        host_header = f"[{host}]" if port == default_port else f"[{host}]:{port}"
    try:
        conn.request("POST", path, body=body, headers={**headers, "Host": host_header})
        response = conn.getresponse()
        response.read(RESPONSE_READ_BYTES)
        return int(response.status)
    finally:
        conn.close()
