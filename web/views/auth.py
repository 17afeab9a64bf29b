"""Accounts: register, log in and out, and the account page with its password, sessions and API
tokens."""

from __future__ import annotations

import hashlib

from flask import (
    Blueprint,
    Response,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_limiter.util import get_remote_address
from flask_login import current_user, login_required, login_user, logout_user
from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy import select
from werkzeug.wrappers import Response as BaseResponse

from web import auth
from web.extensions import db, limiter
from web.forms import (
    ActionForm,
    LoginForm,
    LogoutEverywhereForm,
    PasswordForm,
    RegisterForm,
    TokenForm,
)
from web.models import ApiToken, User, utcnow
from web.services import users

bp = Blueprint("auth", __name__)

SESSION_KEY = users.SESSION_KEY


def _auth_limit() -> str:
    return str(current_app.config.get("AUTH_RATE_LIMIT", "10 per minute"))


def _account_limit() -> str:
    return str(current_app.config.get("LOGIN_ACCOUNT_RATE_LIMIT", "30 per hour"))


def _login_name() -> str:
    """The rate-limit key of a failed login: the account tried *and* the address it came from.

    Keyed by the name alone, a stranger failing on purpose would lock the owner out; keyed by
    the pair, the stranger slows only their own tries, and the owner signs in from elsewhere.
    """
    return f"login-account:{get_remote_address()}:{_tried_name()}"


def _account_wide_limit() -> str:
    return str(current_app.config.get("LOGIN_ACCOUNT_WIDE_RATE_LIMIT", "300 per hour"))


def _login_account() -> str:
    """The rate-limit key of a failed login counted for the account alone, from any address."""
    return f"login-account-wide:{_tried_name()}"


def _tried_name() -> str:
    return (request.form.get("username") or "").strip().lower()[:64]


DEVICE_COOKIE = "known_device"
"""A browser that has signed in to an account before: it may still try that account once the
account's wide limit on failed logins is used up (see docs/security.md)."""

DEVICE_COOKIE_MAX_AGE = 365 * 24 * 3600


def _device_signer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key or "", salt="known-device")


def _password_mark(user: User) -> str:
    """A digest of the stored password hash: a new password makes every older device cookie of
    the account void (the cookie tells nothing of the hash)."""
    return hashlib.sha256((user.password_hash or "").encode()).hexdigest()[:16]


def _remember_device(response: BaseResponse, user: User) -> None:
    """Mark this browser as one that signed in to ``user`` (signed, so it cannot be forged)."""
    value = _device_signer().dumps([user.id, _password_mark(user)])
    response.set_cookie(
        DEVICE_COOKIE,
        value,
        max_age=DEVICE_COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=bool(current_app.config.get("SESSION_COOKIE_SECURE", False)),
    )


def _known_device() -> bool:
    """Whether this request carries a valid device cookie for the account it tries."""
    value = request.cookies.get(DEVICE_COOKIE)
    if not value:
        return False
    try:
        user_id, mark = _device_signer().loads(value, max_age=DEVICE_COOKIE_MAX_AGE)
        user = db.session.get(User, int(user_id))
    except (BadData, TypeError, ValueError):
        return False
    return (
        user is not None
        and user.username.lower() == _tried_name()
        and isinstance(mark, str)
        and mark == _password_mark(user)
    )


def _failed(response: Response) -> bool:
    """A login refused (a server fault, such as an unreachable database, is not a failure)."""
    return response.status_code != 302 and response.status_code < 500


def _start_session(user: User) -> None:
    """Log ``user`` in on a fresh session (nothing of the session before it carries over)."""
    session.clear()
    key = users.start_session(user)
    db.session.commit()
    session[SESSION_KEY] = key
    login_user(user)


@bp.route("/register", methods=["GET", "POST"])
@limiter.limit(_auth_limit, methods=["POST"])
def register() -> ResponseReturnValue:
    form = RegisterForm()
    if form.validate_on_submit():
        name, password = form.username.data or "", form.password.data or ""
        problem = users.password_problem(name, password)
        if problem:
            form.password.errors = [*form.password.errors, problem]
            return render_template("auth/register.html", form=form), 422
        try:
            user = users.create_user(name, password)
        except ValueError:
            form.username.errors = [*form.username.errors, "that name is taken"]
        else:
            _start_session(user)
            flash("Welcome! Upload your first bot to join a ladder.", "ok")
            answer = redirect(url_for("bots.upload"))
            _remember_device(answer, user)
            return answer
    return render_template("auth/register.html", form=form)


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_auth_limit, methods=["POST"])
@limiter.limit(_account_limit, key_func=_login_name, methods=["POST"], deduct_when=_failed)
@limiter.limit(
    _account_wide_limit,
    key_func=_login_account,
    methods=["POST"],
    deduct_when=_failed,
    exempt_when=_known_device,
)
def login() -> ResponseReturnValue:
    form = LoginForm()
    if form.validate_on_submit():
        user = users.authenticate(form.username.data or "", form.password.data or "")
        if user is not None:
            _start_session(user)
            answer = redirect(auth.safe_next(request.args.get("next")) or url_for("home.index"))
            _remember_device(answer, user)
            return answer
        form.password.errors = [*form.password.errors, "wrong username or password"]
    return render_template("auth/login.html", form=form)


@bp.route("/logout", methods=["POST"])
def logout() -> ResponseReturnValue:
    form = ActionForm()
    if form.validate_on_submit():
        _end_this_session()
    return redirect(url_for("home.index"))


def _end_this_session() -> None:
    users.end_session(session.get(SESSION_KEY))
    db.session.commit()
    logout_user()
    session.clear()


@bp.route("/account")
@login_required
def account() -> ResponseReturnValue:
    """The account page; a token created just before is shown here once, then forgotten."""
    return _account_page(session.pop(NEW_TOKEN_KEY, None))


def _account_page(
    new_token: str | None, password: PasswordForm | None = None, status: int = 200
) -> ResponseReturnValue:
    tokens = db.session.scalars(
        select(ApiToken).where(ApiToken.user_id == current_user.id).order_by(ApiToken.id.desc())
    ).all()
    page = render_template(
        "auth/account.html",
        tokens=tokens,
        form=TokenForm(),
        action=ActionForm(),
        password_form=password or PasswordForm(formdata=None),
        everywhere=LogoutEverywhereForm(formdata=None),
        sessions=users.live_sessions(current_user),
        new_token=new_token,
    )
    return page, status, {"Cache-Control": "no-store"}


NEW_TOKEN_KEY = "new_token"
"""The session key that carries a new token from its POST to the account page that shows it."""


@bp.route("/account/tokens", methods=["POST"])
@login_required
@limiter.limit(_auth_limit)
def create_token() -> ResponseReturnValue:
    """Create a token and redirect to the account page, which shows it once (post/redirect/get:
    reloading the page does not send the form again)."""
    form = TokenForm()
    if not form.validate_on_submit():
        flash("A token needs a name.", "error")
        return redirect(url_for("auth.account"))
    token = users.issue_token(current_user, form.name.data or "token")
    db.session.commit()
    session[NEW_TOKEN_KEY] = token
    return redirect(url_for("auth.account"), 303)


@bp.route("/account/tokens/<id:token_id>/revoke", methods=["POST"])
@login_required
def revoke_token(token_id: int) -> ResponseReturnValue:
    form = ActionForm()
    token = db.session.get(ApiToken, token_id)
    if form.validate_on_submit() and token and token.user_id == current_user.id:
        token.revoked_at = token.revoked_at or utcnow()
        db.session.commit()
        flash(f"Token {token.name} revoked.", "ok")
    return redirect(url_for("auth.account"))


@bp.route("/account/password", methods=["POST"])
@login_required
@limiter.limit(_auth_limit)
def change_password() -> ResponseReturnValue:
    """A new password; every other session of the account ends (this one starts afresh)."""
    form = PasswordForm()
    if not form.validate_on_submit():
        return _account_page(None, form, 422)
    user: User = current_user._get_current_object()
    if users.authenticate(user.username, form.current.data or "") is None:
        form.current.errors = [*form.current.errors, "that is not your current password"]
        return _account_page(None, form, 422)
    problem = users.password_problem(user.username, form.password.data or "")
    if problem:
        form.password.errors = [*form.password.errors, problem]
        return _account_page(None, form, 422)
    users.set_password(user, form.password.data or "")
    users.end_sessions(user)
    _start_session(user)
    flash("Password changed. Every other session of your account has ended.", "ok")
    answer = redirect(url_for("auth.account"))
    _remember_device(answer, user)  # the old password's device cookies no longer count
    return answer


@bp.route("/account/logout-everywhere", methods=["POST"])
@login_required
def logout_everywhere() -> ResponseReturnValue:
    """End every session of the account, this one too; API tokens only if asked to."""
    form = LogoutEverywhereForm()
    if not form.validate_on_submit():
        return redirect(url_for("auth.account"))
    user: User = current_user._get_current_object()
    revoked = users.revoke_tokens(user) if form.revoke_tokens.data else 0
    ended = users.end_sessions(user)
    _end_this_session()
    tokens = f" and {revoked} API token{'s' * (revoked != 1)} revoked" if revoked else ""
    flash(f"Logged out of {ended} session{'s' * (ended != 1)}{tokens}.", "ok")
    return redirect(url_for("auth.login"))
