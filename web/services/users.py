"""Accounts, their browser sessions and API tokens.

Only hashes are stored: a password's (scrypt), a token's and a session key's (SHA-256). A session
is a row here named by the key in its signed cookie, so ending it on the server (logout, "log out
everywhere", a new password) makes a copy of the cookie worthless at once.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import re
import secrets
import string
from datetime import timedelta
from functools import cache
from pathlib import Path

from flask import current_app, has_request_context, request
from sqlalchemy import ColumnElement, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from web.extensions import db
from web.models import ApiToken, User, UserSession, utcnow

TOKEN_PREFIX = "ka_"
SESSION_KEY = "sid"
"""The session cookie's entry holding the key of its server-side session row."""
MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 256
COMMON_PASSWORDS = Path(__file__).resolve().parents[1] / "common-passwords.txt.gz"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


USERNAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
"""What a user name may hold: nothing invisible (a trailing newline), nothing a page would show
as another name."""


def create_user(
    username: str, password: str | None = None, *, admin: bool = False, house: bool = False
) -> User:
    """Add a user (``ValueError`` if the name is malformed or taken). Does not commit.

    A name is taken also by one that differs only in case: ``Alice`` would pass for ``alice``.
    """
    if not USERNAME.fullmatch(username):
        raise ValueError(f"{username!r}: use letters, digits, dot, dash and underscore only")
    taken = select(User.id).where(func.lower(User.username) == username.lower())
    if db.session.scalar(taken):
        raise ValueError(f"user {username!r} already exists")
    user = User(
        username=username,
        password_hash=generate_password_hash(password) if password else None,
        is_admin=admin,
        is_house=house,
    )
    try:
        with db.session.begin_nested():
            db.session.add(user)
    except IntegrityError:  # a concurrent sign-up took the name (in some case) since our read
        raise ValueError(f"user {username!r} already exists") from None
    return user


def get_or_create_user(username: str, *, house: bool = False) -> User:
    user = db.session.scalar(select(User).where(User.username == username))
    return user if user is not None else create_user(username, house=house)


# --- passwords ------------------------------------------------------------------------------


@cache
def _dummy_hash() -> str:
    """A hash of a random password, made the way real ones are (same algorithm and cost)."""
    return generate_password_hash(secrets.token_urlsafe(16))


def authenticate(username: str, password: str) -> User | None:
    """The user with this name and password, or None.

    An unknown name (or an account without a password) costs one hash check all the same, so
    the time an answer takes does not tell which names exist.
    """
    user = db.session.scalar(select(User).where(User.username == username))
    stored = user.password_hash if user is not None and user.password_hash else None
    matches = check_password_hash(stored or _dummy_hash(), password)
    return user if matches and stored else None


@cache
def _common_passwords() -> frozenset[str]:
    with gzip.open(COMMON_PASSWORDS, "rt", encoding="utf-8") as stream:
        return frozenset(line.strip() for line in stream if line.strip())


def _is_repetition(text: str) -> bool:
    """``abcabcabc``, ``aaaa``: one short piece said again and again."""
    for size in range(1, len(text) // 2 + 1):
        if len(text) % size == 0 and text[:size] * (len(text) // size) == text:
            return size <= 4 or text[:size] in _common_passwords()
    return False


def _is_run(text: str) -> bool:
    """``123456789012``, ``abcdefghijkl``, ``987654321098``: each character next to the last."""
    steps = {ord(b) - ord(a) for a, b in itertools.pairwise(text)}
    if text.isdigit():
        steps = {step % 10 for step in steps}
        return steps in ({1}, {9})
    return steps in ({1}, {-1})


def _is_common(password: str) -> bool:
    """In the common-password list, also with digits or symbols around it, repeated, or a run."""
    lowered = password.lower()
    core = lowered.strip(string.digits + string.punctuation + string.whitespace)
    common = _common_passwords()
    if lowered in common or _is_repetition(lowered) or _is_run(lowered):
        return True
    return len(core) >= 4 and (core in common or _is_repetition(core))


def password_problem(username: str, password: str) -> str | None:
    """Why ``password`` may not be used by ``username``, or None if it may."""
    if len(password) < MIN_PASSWORD_LENGTH:
        return f"use at least {MIN_PASSWORD_LENGTH} characters (a few words make a good one)"
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"use at most {MAX_PASSWORD_LENGTH} characters"
    if username and username.lower() in password.lower():
        return "the password must not contain your user name"
    if _is_common(password):
        return "this password is one of the most common ones and is guessed first; choose another"
    return None


def set_password(user: User, password: str) -> None:
    """Give ``user`` a new password (checked by the caller). Does not commit."""
    user.password_hash = generate_password_hash(password)


# --- sessions -------------------------------------------------------------------------------


def _session_max_age() -> timedelta:
    return timedelta(seconds=int(current_app.config.get("SESSION_MAX_AGE", 14 * 24 * 3600)))


def _session_idle_timeout() -> timedelta:
    return timedelta(seconds=int(current_app.config.get("SESSION_IDLE_TIMEOUT", 12 * 3600)))


SEEN_EVERY = timedelta(minutes=1)
"""How stale a session's ``last_seen_at`` may get before a request writes it again."""


def _live() -> ColumnElement[bool]:
    """The condition of a session that has neither expired nor been idle too long."""
    now = utcnow()
    return (UserSession.created_at >= now - _session_max_age()) & (
        UserSession.last_seen_at >= now - _session_idle_timeout()
    )


def start_session(user: User) -> str:
    """A new session of ``user``; its key goes into the session cookie. Does not commit."""
    key = secrets.token_urlsafe(32)
    now = utcnow()
    ended = or_(
        UserSession.created_at < now - _session_max_age(),
        UserSession.last_seen_at < now - _session_idle_timeout(),
    )
    db.session.execute(delete(UserSession).where(UserSession.user_id == user.id, ended))
    db.session.add(UserSession(user_id=user.id, key_hash=hash_token(key), last_seen_at=now))
    return key


def session_user(user_id: str, key: str | None) -> User | None:
    """The user of a live session with this key, or None (ended, expired, idle or never made).

    Using the session marks it seen, at most once a minute (no write on most requests).
    """
    if not key or not user_id.isdigit():
        return None
    query = select(UserSession).where(UserSession.key_hash == hash_token(key), _live())
    row = db.session.scalar(query)
    if row is None or row.user_id != int(user_id):
        return None
    if row.last_seen_at < utcnow() - SEEN_EVERY:
        _mark_seen(row.id)
    return db.session.get(User, row.user_id)


def _mark_seen(session_id: int) -> None:
    """Write the session's ``last_seen_at``.

    A page read (GET, HEAD) takes no write lock on SQLite, so it writes in a short transaction
    of its own; any other request holds the lock from its start (``BEGIN IMMEDIATE``) and writes
    in the request's transaction, committed with the rest of the request's work.
    """
    now = utcnow()
    query = (
        update(UserSession)
        .where(UserSession.id == session_id, UserSession.last_seen_at < now - SEEN_EVERY)
        .values(last_seen_at=now)
    )
    if has_request_context() and request.method not in ("GET", "HEAD"):
        db.session.execute(query)
        return
    with db.engine.begin() as connection:
        connection.execute(query)


def end_session(key: str | None) -> None:
    """End the session with this key, if it is live. Does not commit."""
    if key:
        db.session.execute(delete(UserSession).where(UserSession.key_hash == hash_token(key)))


def end_sessions(user: User, *, keep: str | None = None) -> int:
    """End every session of ``user`` but the one with key ``keep``; how many ended. No commit."""
    query = delete(UserSession).where(UserSession.user_id == user.id)
    if keep:
        query = query.where(UserSession.key_hash != hash_token(keep))
    result = db.session.execute(query)
    return int(getattr(result, "rowcount", 0) or 0)


def live_sessions(user: User) -> int:
    query = select(func.count()).where(UserSession.user_id == user.id, _live())
    return int(db.session.scalar(query) or 0)


# --- API tokens -----------------------------------------------------------------------------


def issue_token(user: User, name: str = "default") -> str:
    """A new bearer token for ``user``; the only time the token itself is known. Does not commit."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    db.session.add(
        ApiToken(user_id=user.id, name=name, token_hash=hash_token(token), prefix=token[:10])
    )
    return token


def revoke_tokens(user: User) -> int:
    """Revoke every live token of ``user``; how many. Does not commit."""
    live = db.session.scalars(
        select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
    ).all()
    for token in live:
        token.revoked_at = utcnow()
    return len(live)


def user_for_token(token: str) -> User | None:
    """The owner of a live token, or None."""
    row = db.session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token)))
    if row is None or row.revoked_at is not None:
        return None
    if not _reading():  # a page read writes nothing (and so never waits for a write lock)
        row.last_used_at = utcnow()
    user: User = row.user
    return user


def _reading() -> bool:
    from flask import has_request_context, request

    return has_request_context() and request.method in ("GET", "HEAD")
