"""The two upload allowances of an author (the account uploading, by its API token or its
login), shared by the upload page and the API.

An accepted upload counts against ``UPLOAD_RATE_LIMIT``; one refused for the author's own
mistake (a broken archive, a manifest problem, too large, a form without a file) against the
larger ``UPLOAD_REFUSED_RATE_LIMIT``, so that fixing a manifest by trial does not use up the
hour. An upload the server fails (its database or storage) counts against neither. While either
allowance is used up every upload answers 429, saying which one and when it resets.

Both are Flask-Limiter limits counted only after the answer (``deduct_when``), so requests
sent at the very same moment can pass together: as many as the server answers at once.

The allowances belong to the account, not to the address: two authors behind one address (a
school, a shared office) do not use up each other's hour, and one author gains nothing by
changing address. A request without a known account (refused anyway: it needs a login) counts
against its address.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Response, current_app, request
from flask_limiter.util import get_remote_address
from limits import RateLimitItem, parse

from web import auth
from web.extensions import limiter
from web.services.users import user_for_token

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Allowance:
    """One allowance: the setting with its limit, what it counts, and which answers count."""

    scope: str
    setting: str
    what: str
    counts: Callable[[int], bool]

    def limit(self) -> str:
        return str(current_app.config[self.setting])

    def describe(self) -> str:
        """``20 accepted uploads per hour``."""
        return _amount(self.item(), self.what)

    def item(self) -> RateLimitItem:
        return parse(self.limit())

    def deducted(self, response: Response) -> bool:
        return self.counts(response.status_code)

    def used_up(self) -> str:
        """The 429's message: which allowance ran out and when it resets."""
        reset = _reset_at(self.scope)
        when = time.strftime("%H:%M:%S UTC", time.gmtime(reset))
        wait = max(1, round(reset - time.time()))
        later = f"{wait} s" if wait < 120 else f"{round(wait / 60)} min"
        return f"this account has used up its {self.describe()}; it resets at {when} (in {later})"


def author() -> str:
    """Whose allowances an upload counts against: the account of its API token (the API) or
    of the login (the upload page); the client address when there is neither.

    Each counts by the one it is authenticated by: a token the upload page does not read (made
    up, or another account's) does not move its uploads to another allowance."""
    if (request.blueprint or "").startswith("api_"):
        token = auth.bearer_token()
        user = user_for_token(token) if token is not None else None
    else:
        user = auth.session_user()
    if user is None:
        return f"address:{get_remote_address()}"
    return f"author:{user.id}"


def _accepted(status: int) -> bool:
    return 200 <= status < 400


def _refused(status: int) -> bool:
    """A 4xx for the upload itself (not for a missing login, or for the limit being hit)."""
    return 400 <= status < 500 and status not in (401, 403, 404, 429)


ACCEPTED = Allowance("uploads-accepted", "UPLOAD_RATE_LIMIT", "accepted uploads", _accepted)
REFUSED = Allowance(
    "uploads-refused",
    "UPLOAD_REFUSED_RATE_LIMIT",
    "refused uploads (a broken archive or manifest)",
    _refused,
)
ALLOWANCES = (ACCEPTED, REFUSED)


def upload_limited(view: F) -> F:
    """Count a POST to ``view`` against the allowance its answer falls under."""
    limited: Callable[..., Any] = view
    for allowance in ALLOWANCES:
        limited = limiter.shared_limit(
            allowance.limit,
            allowance.scope,
            key_func=author,
            methods=["POST"],
            deduct_when=allowance.deducted,
            error_message=allowance.used_up,
            override_defaults=False,  # the API's own limit still counts every request
        )(limited)
    return limited  # type: ignore[return-value]


def _amount(item: RateLimitItem, what: str) -> str:
    unit = item.GRANULARITY.name
    per = unit if item.multiples == 1 else f"{item.multiples} {unit}s"
    if item.amount == 1:
        what = what.replace("uploads", "upload", 1)
    return f"{item.amount} {what} per {per}"


def _reset_at(scope: str) -> float:
    """When the used-up allowance of ``scope`` resets (now, if it is not known)."""
    for counted in limiter.current_limits:
        if counted.breached and scope in counted.request_args:
            return float(counted.reset_at)
    return time.time()
