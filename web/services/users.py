"""Accounts and API tokens (only a token's SHA-256 is stored)."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import select
from werkzeug.security import generate_password_hash

from web.extensions import db
from web.models import ApiToken, User, utcnow

TOKEN_PREFIX = "ka_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_user(
    username: str, password: str | None = None, *, admin: bool = False, house: bool = False
) -> User:
    """Add a user (``ValueError`` if the name is taken). Does not commit."""
    if db.session.scalar(select(User.id).where(User.username == username)):
        raise ValueError(f"user {username!r} already exists")
    user = User(
        username=username,
        password_hash=generate_password_hash(password) if password else None,
        is_admin=admin,
        is_house=house,
    )
    db.session.add(user)
    db.session.flush()
    return user


def get_or_create_user(username: str, *, house: bool = False) -> User:
    user = db.session.scalar(select(User).where(User.username == username))
    return user if user is not None else create_user(username, house=house)


def issue_token(user: User, name: str = "default") -> str:
    """A new bearer token for ``user``; the only time the token itself is known. Does not commit."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    db.session.add(
        ApiToken(user_id=user.id, name=name, token_hash=hash_token(token), prefix=token[:10])
    )
    return token


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
