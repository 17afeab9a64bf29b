"""The site's forms (Flask-WTF: every one carries a CSRF token, checked app-wide)."""

from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import BooleanField, IntegerField, PasswordField, StringField, TextAreaField
from wtforms.validators import DataRequired, EqualTo, Length, NumberRange, Optional, Regexp

USERNAME = Regexp(r"\A[A-Za-z0-9_.-]+\Z", message="letters, digits, dot, dash and underscore only")


class LoginForm(FlaskForm):
    username = StringField("Username", validators=[DataRequired(), Length(max=64)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=256)])


class RegisterForm(FlaskForm):
    """The password rules themselves (length, common, the name) are ``users.password_problem``."""

    username = StringField("Username", validators=[DataRequired(), Length(3, 32), USERNAME])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=256)])
    confirm = PasswordField(
        "Repeat the password", validators=[EqualTo("password", message="passwords differ")]
    )


class PasswordForm(FlaskForm):
    current = PasswordField("Current password", validators=[DataRequired(), Length(max=256)])
    password = PasswordField("New password", validators=[DataRequired(), Length(max=256)])
    confirm = PasswordField(
        "Repeat the new password", validators=[EqualTo("password", message="passwords differ")]
    )


class LogoutEverywhereForm(FlaskForm):
    revoke_tokens = BooleanField("Also revoke every API token")


class TokenForm(FlaskForm):
    name = StringField("Token name", validators=[DataRequired(), Length(1, 64)])


class ActionForm(FlaskForm):
    """A button that changes something: nothing but the CSRF token."""


class UploadForm(FlaskForm):
    file = FileField("Bot archive or source file", validators=[FileRequired()])
    manifest = TextAreaField(
        "bot.toml (only for a single source file)", validators=[Optional(), Length(max=64_000)]
    )


class TournamentForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(1, 96)])
    ladder = StringField("Ladder", validators=[DataRequired(), Length(1, 96)])
    versions = StringField(
        "Bot version ids (comma separated; empty: every active bot of the ladder)",
        validators=[Optional(), Regexp(r"^[0-9, ]*$", message="numbers and commas only")],
    )
    tables = IntegerField("Tables", default=4, validators=[NumberRange(1, 500)])
    seed = IntegerField(
        "Seed (empty: secret random deals; a seed makes them reproducible and known in advance)",
        validators=[Optional(), NumberRange(0, 2**64 - 1)],
    )


class ChallengeForm(FlaskForm):
    """A challenge: the ladder and deals here; the seats are ``seat`` selects, one per seat
    (``bot id`` for the version a bot plays now, ``bot id:number`` for one of one's own)."""

    ladder = StringField("Ladder", validators=[DataRequired(), Length(1, 96)])
    deals = IntegerField("Deals", default=1, validators=[DataRequired(), NumberRange(1, 100)])


class DeleteBotForm(FlaskForm):
    confirm = StringField("Type the bot's name to delete it", validators=[DataRequired()])


class PlayForm(FlaskForm):
    """Which version plays: a number, or empty for the newest validated one."""

    number = IntegerField("Version", validators=[Optional(), NumberRange(1, 2**31 - 1)])
