"""Accounts: register, log in and out, and the account page with its API tokens."""

from __future__ import annotations

from flask import (
    Blueprint,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.typing import ResponseReturnValue
from flask_login import current_user, login_required, login_user, logout_user
from sqlalchemy import select
from werkzeug.security import check_password_hash

from web.extensions import db, limiter
from web.forms import ActionForm, LoginForm, RegisterForm, TokenForm
from web.models import ApiToken, User, utcnow
from web.services import users

bp = Blueprint("auth", __name__)


def _auth_limit() -> str:
    return str(current_app.config.get("AUTH_RATE_LIMIT", "10 per minute"))


def _safe_next(target: str | None) -> str:
    """A redirect target on this site only (an open redirect helps phishing)."""
    if target and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("home.index")


@bp.route("/register", methods=["GET", "POST"])
@limiter.limit(_auth_limit, methods=["POST"])
def register() -> ResponseReturnValue:
    form = RegisterForm()
    if form.validate_on_submit():
        try:
            user = users.create_user(form.username.data or "", form.password.data)
        except ValueError:
            form.username.errors = [*form.username.errors, "that name is taken"]
        else:
            db.session.commit()
            login_user(user)
            flash("Welcome! Upload your first bot to join a ladder.", "ok")
            return redirect(url_for("bots.upload"))
    return render_template("auth/register.html", form=form)


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_auth_limit, methods=["POST"])
def login() -> ResponseReturnValue:
    form = LoginForm()
    if form.validate_on_submit():
        user = db.session.scalar(select(User).where(User.username == form.username.data))
        if (
            user
            and user.password_hash
            and check_password_hash(user.password_hash, form.password.data or "")
        ):
            login_user(user)
            return redirect(_safe_next(request.args.get("next")))
        form.password.errors = [*form.password.errors, "wrong username or password"]
    return render_template("auth/login.html", form=form)


@bp.route("/logout", methods=["POST"])
def logout() -> ResponseReturnValue:
    form = ActionForm()
    if form.validate_on_submit():
        logout_user()
    return redirect(url_for("home.index"))


@bp.route("/account")
@login_required
def account() -> ResponseReturnValue:
    """The account page; a token created just before is shown here once, then forgotten."""
    tokens = db.session.scalars(
        select(ApiToken).where(ApiToken.user_id == current_user.id).order_by(ApiToken.id.desc())
    ).all()
    new_token = session.pop(NEW_TOKEN_KEY, None)
    form, action = TokenForm(), ActionForm()
    page = render_template(
        "auth/account.html", tokens=tokens, form=form, action=action, new_token=new_token
    )
    return page, 200, {"Cache-Control": "no-store"}


NEW_TOKEN_KEY = "new_token"
"""The session key that carries a new token from its POST to the account page that shows it."""


@bp.route("/account/tokens", methods=["POST"])
@login_required
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
