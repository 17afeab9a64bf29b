"""An owner's tools: seats' whole logs (the owner's alone), a bot's replays in bulk, the bot's
events, and webhooks (signed, tried again with growing pauses, never sent to a private address
unless the development setting allows it).

Webhook deliveries here only ever go to a receiver on 127.0.0.1 run by the test.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from datetime import UTC, date, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.web.conftest import ROOT
from tests.web.site.conftest import LiveServer, World, csrf_from, login
from tests.web.site.test_cli import arena

ALICE_LOG = "alice's bot thinks: my hand is 7S 8S\n"
MALLORY_LOG = "mallory's bot thinks: my hand is AH KH\n"


def _bearer(world: World, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {world.tokens[name]}"}


def _with_logs(world: World) -> Any:
    from web.extensions import db
    from web.services import seatlogs

    match = world.finished
    sizes = seatlogs.store(match.id, [ALICE_LOG, MALLORY_LOG])
    for seat in match.seats:
        seat.log_bytes = sizes[seat.seat]
    db.session.commit()
    return match


def _seal(world: World) -> None:
    """Put the finished match in one deal group with the running one: sealed until it ends."""
    from web.extensions import db

    world.finished.mirror_group = world.running.mirror_group = "group-of-two"
    db.session.commit()


def test_a_seat_log_is_stored_compressed_and_served_to_its_owner_only(
    app: Flask, world: World, client: FlaskClient
) -> None:
    from web.services import seatlogs
    from web.storage import get_storage

    match = _with_logs(world)
    raw = get_storage().get(seatlogs.log_key(match.id, 0))
    assert raw[:2] == b"\x1f\x8b"  # gzip, through the storage interface
    url = f"/api/v1/matches/{match.id}/seats/0/log"
    mine = client.get(url, headers=_bearer(world, "alice"))
    assert mine.status_code == 200 and mine.get_data(as_text=True) == ALICE_LOG
    assert mine.headers["Content-Type"].startswith("text/plain")
    assert "attachment" in mine.headers["Content-Disposition"]
    for who in (None, "mallory"):
        headers = _bearer(world, who) if who else {}
        refused = client.get(url, headers=headers)
        assert refused.status_code == 404, who
        assert ALICE_LOG not in refused.get_data(as_text=True)
    other = client.get(f"/api/v1/matches/{match.id}/seats/1/log", headers=_bearer(world, "alice"))
    assert other.status_code == 404 and MALLORY_LOG not in other.get_data(as_text=True)
    assert client.get(f"/api/v1/matches/{match.id}/seats/7/log").status_code == 404
    # admins read a finished, open match's logs, for support (docs/security.md)
    assert client.get(url, headers=_bearer(world, "root-admin")).status_code == 200
    # the match page links the owner's own seat only
    login(client, "alice")
    page = client.get(f"/matches/{match.id}").get_data(as_text=True)
    assert f"/api/v1/matches/{match.id}/seats/0/log" in page
    assert f"/api/v1/matches/{match.id}/seats/1/log" not in page
    assert client.get(url).status_code == 200  # the session works as well as a token


def test_logs_past_their_days_are_pruned_from_storage_and_the_mark_moves_on(
    app: Flask, world: World, client: FlaskClient
) -> None:
    import redis

    from web.extensions import db
    from web.services import seatlogs
    from web.storage import get_storage

    match = _with_logs(world)
    finished = match.finished_at
    assert finished is not None
    keys = [seatlogs.log_key(match.id, k) for k in (0, 1)]
    broker = redis.Redis.from_url(app.config["REDIS_URL"])
    # Within the kept days nothing goes.
    assert seatlogs.prune(broker, now=finished + timedelta(days=29)) == seatlogs.Pruned()
    assert all(get_storage().exists(key) for key in keys)
    # Past them, both logs leave the storage and the seats no longer offer one.
    assert seatlogs.prune(broker, now=finished + timedelta(days=31)) == seatlogs.Pruned(2, 0)
    assert not any(get_storage().exists(key) for key in keys)
    db.session.expire_all()
    assert {s.log_bytes for s in match.seats} == {None}
    url = f"/api/v1/matches/{match.id}/seats/0/log"
    assert client.get(url, headers=_bearer(world, "alice")).status_code == 404
    # The mark moved past them: a later pass starts after them.
    mark = broker.get(app.config["BROKER_PREFIX"] + seatlogs.PRUNE_MARK)
    assert mark is not None and float(mark) > finished.replace(tzinfo=UTC).timestamp()
    # SEAT_LOG_DAYS = 0 keeps logs for ever.
    app.config["SEAT_LOG_DAYS"] = 0
    _with_logs(world)
    assert seatlogs.prune(broker, now=finished + timedelta(days=999)) == seatlogs.Pruned()
    assert all(get_storage().exists(key) for key in keys)


def test_a_sealed_groups_logs_give_each_owner_their_own_seat_and_nobody_else_anything(
    app: Flask, world: World, client: FlaskClient
) -> None:
    match = _with_logs(world)
    _seal(world)
    own = client.get(f"/api/v1/matches/{match.id}/seats/0/log", headers=_bearer(world, "alice"))
    assert own.status_code == 200 and own.get_data(as_text=True) == ALICE_LOG
    for who, seat in (("alice", 1), ("mallory", 0), ("root-admin", 0), ("root-admin", 1)):
        answer = client.get(
            f"/api/v1/matches/{match.id}/seats/{seat}/log", headers=_bearer(world, who)
        )
        assert answer.status_code == 404, (who, seat)
        body = answer.get_data(as_text=True)
        assert ALICE_LOG not in body and MALLORY_LOG not in body


def _zip(body: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_replays_download_in_bulk_for_the_owner_without_sealed_matches(
    app: Flask, world: World, client: FlaskClient
) -> None:
    bot = world.bots[0]
    url = f"/api/v1/bots/{bot.id}/replays"
    answer = client.get(url + "?last=10", headers=_bearer(world, "alice"))
    assert answer.status_code == 200 and answer.mimetype == "application/zip"
    files = _zip(answer.get_data())
    assert set(files) == {f"match-{world.finished.id}.json", "README.txt"}  # not the running one
    assert b"STDERR-OF-SEAT-0" in files[f"match-{world.finished.id}.json"]  # her own seat's text
    assert b"STDERR-OF-SEAT-1" not in files[f"match-{world.finished.id}.json"]
    today = date.today()
    tomorrow = today + timedelta(days=1)
    ranged = client.get(f"{url}?since={today}&until={tomorrow}", headers=_bearer(world, "alice"))
    assert f"match-{world.finished.id}.json" in _zip(ranged.get_data())
    before = client.get(f"{url}?until={today - timedelta(days=3)}", headers=_bearer(world, "alice"))
    assert set(_zip(before.get_data())) == {"README.txt"}
    assert client.get(url, headers=_bearer(world, "mallory")).status_code == 404
    assert client.get(url).status_code == 401
    assert client.get(url + "?last=0", headers=_bearer(world, "alice")).status_code == 422
    _seal(world)
    sealed = client.get(url, headers=_bearer(world, "alice"))
    assert set(_zip(sealed.get_data())) == {"README.txt"}


class Receiver:
    """An HTTP receiver on 127.0.0.1: answers each POST with the next status of ``statuses``."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.received: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                receiver.received.append((dict(self.headers), self.rfile.read(length)))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                if status in (301, 302):
                    self.send_header("Location", "http://127.0.0.1:1/elsewhere")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook?x=1"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, float | None]]]:
    """The tries queued for later (delivery id, countdown), instead of sending them to Celery."""
    from web.services import webhooks

    queued: list[tuple[int, float | None]] = []
    monkeypatch.setattr(webhooks, "send", lambda i, countdown=None: queued.append((i, countdown)))
    yield queued


def _activate_new_version(world: World) -> Any:
    """A second version of alice's bot passes validation: the lifecycle moves it to active."""
    from web.extensions import db
    from web.models import BotVersion, VersionStatus
    from web.services import lifecycle

    version = BotVersion(
        bot_id=world.bots[0].id, number=2, sha256="0" * 64, status=VersionStatus.VALIDATING
    )
    db.session.add(version)
    db.session.flush()
    lifecycle.move(version, VersionStatus.ACTIVE)
    db.session.commit()
    return version


def test_an_event_is_signed_delivered_retried_and_listed(
    app: Flask, world: World, client: FlaskClient, sent: list[tuple[int, float | None]]
) -> None:
    from web.extensions import db
    from web.models import BotEvent, WebhookDelivery
    from web.services import webhooks

    app.config.update(WEBHOOK_ALLOW_PRIVATE=True, WEBHOOK_BACKOFF=30.0, WEBHOOK_MAX_TRIES=3)
    with Receiver([500, 200]) as receiver:
        made = client.post(
            "/api/v1/webhooks", json={"url": receiver.url}, headers=_bearer(world, "alice")
        )
        assert made.status_code == 201, made.get_data(as_text=True)
        secret = made.get_json()["data"]["secret"]
        _activate_new_version(world)
        event = db.session.query(BotEvent).one()
        assert event.kind == "version_active" and "alice-bot version 2 is active" in event.message
        delivery = db.session.query(WebhookDelivery).one()
        assert sent == [(delivery.id, None)]  # queued once the transaction committed
        assert webhooks.deliver(delivery.id) == "pending"  # the receiver answered 500
        assert sent[-1] == (delivery.id, 30.0)
        assert webhooks.deliver(delivery.id) == "delivered"
        assert webhooks.deliver(delivery.id) == "delivered"  # a late duplicate sends nothing
    assert len(receiver.received) == 2
    headers, body = receiver.received[-1]
    timestamp = headers["X-Arena-Timestamp"]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    assert headers["X-Arena-Signature"] == "sha256=" + expected.hexdigest()
    assert headers["X-Arena-Event"] == "version_active"
    assert b'"kind":"version_active"' in body and b'"version":2' in body
    db.session.expire_all()
    row = db.session.get(WebhookDelivery, delivery.id)
    assert (row.status, row.tries, row.last_code, row.last_error) == ("delivered", 2, 200, None)

    listed = client.get("/api/v1/webhooks/deliveries", headers=_bearer(world, "alice")).get_json()
    assert [d["status"] for d in listed["data"]] == ["delivered"]
    assert (
        client.get("/api/v1/webhooks/deliveries", headers=_bearer(world, "mallory")).get_json()[
            "data"
        ]
        == []
    )
    bot = world.bots[0].id
    assert (
        client.get(f"/api/v1/bots/{bot}/events", headers=_bearer(world, "mallory")).status_code
        == 404
    )
    events = client.get(f"/api/v1/bots/{bot}/events", headers=_bearer(world, "alice")).get_json()
    assert [e["kind"] for e in events["data"]] == ["version_active"]
    login(client, "alice")
    assert "is active: it plays the ladders" in client.get(f"/bots/{bot}").get_data(as_text=True)
    page = client.get("/account/webhooks").get_data(as_text=True)
    assert receiver.url.replace("&", "&amp;") in page and "delivered" in page


def test_failures_are_tried_a_bounded_number_of_times_and_redirects_are_not_followed(
    app: Flask, world: World, sent: list[tuple[int, float | None]]
) -> None:
    from web.extensions import db
    from web.models import WebhookDelivery
    from web.services import webhooks

    app.config.update(WEBHOOK_ALLOW_PRIVATE=True, WEBHOOK_BACKOFF=10.0, WEBHOOK_MAX_TRIES=2)
    with Receiver([302, 302, 302]) as receiver:
        webhooks.subscribe(world.owner, receiver.url)
        db.session.commit()
        _activate_new_version(world)
        delivery = db.session.query(WebhookDelivery).one()
        assert webhooks.deliver(delivery.id) == "pending"
        assert sent[-1] == (delivery.id, 10.0)
        assert webhooks.deliver(delivery.id) == "failed"
        assert webhooks.deliver(delivery.id) == "failed"
    assert len(receiver.received) == 2  # the redirect's target was never asked
    db.session.expire_all()
    row = db.session.get(WebhookDelivery, delivery.id)
    assert row.last_code == 302 and row.last_error == "answered HTTP 302" and row.tries == 2


REFUSED_URLS = [
    ("ftp://example.org/hook", "only http:// and https://"),
    ("file:///etc/passwd", "only http:// and https://"),
    ("http://127.0.0.1:9/hook", "not a public address"),
    ("http://[::1]/hook", "not a public address"),
    ("http://169.254.169.254/latest/meta-data", "not a public address"),
    ("http://10.0.0.1/", "not a public address"),
    ("http://user:pw@example.org/", "user name or password"),
    ("http:///nohost", "names no host"),
    ("http://exa mple.org/", "spaces or control characters"),
]


def test_webhook_urls_that_are_not_public_http_are_refused(
    app: Flask, world: World, client: FlaskClient
) -> None:
    from web.extensions import db
    from web.models import Webhook

    for url, why in REFUSED_URLS:
        answer = client.post("/api/v1/webhooks", json={"url": url}, headers=_bearer(world, "alice"))
        assert answer.status_code == 422, url
        assert why in answer.get_json()["error"]["message"], url
    assert db.session.query(Webhook).count() == 0


def test_a_name_that_resolves_to_a_private_address_is_refused_at_delivery(
    app: Flask, world: World, sent: list[tuple[int, float | None]]
) -> None:
    from web.extensions import db
    from web.models import WebhookDelivery
    from web.services import webhooks

    with Receiver([200]) as receiver:
        url = receiver.url.replace("127.0.0.1", "localhost")
        webhooks.subscribe(world.owner, url)  # a name: where it leads is checked when sending
        db.session.commit()
        _activate_new_version(world)
        delivery = db.session.query(WebhookDelivery).one()
        assert webhooks.deliver(delivery.id) == "failed"  # no retry: it would lead there again
    assert receiver.received == []
    assert len(sent) == 1  # the first send only
    db.session.expire_all()
    row = db.session.get(WebhookDelivery, delivery.id)
    assert "localhost leads to" in row.last_error and "not a public address" in row.last_error


def test_the_webhooks_page_adds_shows_the_secret_once_and_removes(
    app: Flask, world: World, client: FlaskClient
) -> None:
    from web.extensions import db
    from web.models import Webhook

    login(client, "alice")
    page = client.get("/account/webhooks").get_data(as_text=True)
    added = client.post(
        "/account/webhooks",
        data={"url": "https://hooks.example.org/arena", "csrf_token": csrf_from(page)},
    )
    hook = db.session.query(Webhook).one()
    text = added.get_data(as_text=True)
    assert added.status_code == 200 and hook.secret in text
    assert hook.secret not in client.get("/account/webhooks").get_data(as_text=True)
    refused = client.post(
        "/account/webhooks", data={"url": "gopher://x/", "csrf_token": csrf_from(page)}
    )
    assert refused.status_code == 302
    assert "only http://" in client.get("/account/webhooks").get_data(as_text=True)
    login_other = app.test_client()
    login(login_other, "mallory")
    other_page = login_other.get("/account/webhooks").get_data(as_text=True)
    assert "hooks.example.org" not in other_page
    taken = login_other.post(
        f"/account/webhooks/{hook.id}/delete", data={"csrf_token": csrf_from(other_page)}
    )
    assert taken.status_code == 404
    client.post(f"/account/webhooks/{hook.id}/delete", data={"csrf_token": csrf_from(page)})
    assert db.session.query(Webhook).count() == 0


def test_arena_fetch_logs_saves_the_owners_seat_logs_only(
    live_server: LiveServer, world: World, tmp_path: Path
) -> None:
    match = _with_logs(world)
    out = tmp_path / "m.json"
    done = subprocess.run(
        arena("fetch", str(match.id), "--server", live_server.url, "--out", str(out), "--logs",
              "--token", world.tokens["alice"]),
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert (tmp_path / f"match-{match.id}-seat0.log").read_text() == ALICE_LOG
    assert not (tmp_path / f"match-{match.id}-seat1.log").exists()
    assert "seat 0's whole log" in done.stdout
    anonymous = subprocess.run(
        arena("fetch", str(match.id), "--server", live_server.url, "--out", str(out), "--logs"),
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=_without_token(),
    )  # fmt: skip
    assert anonymous.returncode == 1 and "--logs needs your API token" in anonymous.stderr


def _without_token() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"}
