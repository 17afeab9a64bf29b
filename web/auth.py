"""Who is asking: the logged-in user (session cookie) or the owner of an API bearer token.

Pages authenticate by session only and every form carries a CSRF token. The JSON API accepts a
bearer token for everything and the session cookie for reading only, so that a page's scripts can
read what their user may see while no cross-site form can make the API change anything.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from flask import abort, request
from flask_login import current_user

from web.models import Match, User
from web.services import sealing
from web.services.users import user_for_token

F = TypeVar("F", bound=Callable[..., Any])

BEARER = "bearer "
MAX_NEXT = 2048


def safe_next(target: str | None) -> str | None:
    """``target`` if it is a path on this site, else None (an open redirect helps phishing).

    Browsers drop tabs and newlines from a URL and read a backslash as a slash, so ``/\t/evil``
    and ``/\\evil`` lead to another host as ``//evil`` does: any control character or
    backslash, also percent-encoded, refuses the target. What remains must be a bare path
    (no scheme, no host) starting with exactly one slash.
    """
    if not target or len(target) > MAX_NEXT:
        return None
    for text in (target, unquote(target), unquote(unquote(target))):
        if "\\" in text or any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in text):
            return None
        if text.startswith("//") or not text.startswith("/"):
            return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return None
    return target


def bearer_token() -> str | None:
    """The token of an ``Authorization: Bearer ...`` header, if any."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith(BEARER):
        return header[len(BEARER) :].strip() or None
    return None


def token_user() -> User | None:
    """The owner of the request's bearer token; 401 for a token that is unknown or revoked."""
    token = bearer_token()
    if token is None:
        return None
    user = user_for_token(token)
    if user is None:
        abort(401, description="unknown or revoked API token")
    return user


def reader() -> User | None:
    """Who reads: the token's owner, else the session's user, else nobody (anonymous)."""
    user = token_user()
    if user is not None:
        return user
    return session_user()


def session_user() -> User | None:
    """The user logged in by session cookie, or None."""
    if current_user and current_user.is_authenticated:
        return current_user._get_current_object()  # type: ignore[no-any-return]
    return None


def writer() -> User:
    """Who writes through the API: a bearer token is required (401 without one)."""
    user = token_user()
    if user is None:
        abort(401, description="this endpoint needs an API token (Authorization: Bearer ...)")
    return user


def is_admin(user: User | None) -> bool:
    return bool(user is not None and user.is_admin)


def owns_bot(user: User | None, owner_id: int) -> bool:
    """May ``user`` see the private side (logs, sources, debug text) of a bot of ``owner_id``?"""
    return user is not None and (user.id == owner_id or user.is_admin)


def owned_seats(user: User | None, match: Match) -> set[int]:
    """The seats of ``match`` whose private side ``user`` may see.

    An admin sees every seat of a finished, open match (debug text, for support), but of a
    running or sealed match (``web.services.sealing``) only the seats of their own bots: nobody
    sees another player's hidden cards while they are in play.
    """
    if user is None:
        return set()
    everything = user.is_admin and not sealing.hidden(match)
    return {s.seat for s in match.seats if everything or s.bot.owner_id == user.id}


def admin_required(view: F) -> F:
    """A page or action for administrators only (404 for everyone else)."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not is_admin(session_user()):
            abort(404)
        return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]
