"""Admin commands (``flask --app web ...``) on real PostgreSQL, matches played in-process."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import func, select

from tests.web.conftest import SAMPLES, require_bwrap
from web.extensions import db
from web.models import ApiToken, BotVersion, Match, MatchStatus, Rating, Tournament, User
from web.services import play, users
from web.services.matches import create_match

pytestmark = pytest.mark.services


def invoke(app: Flask, *args: str) -> str:
    result = app.test_cli_runner().invoke(args=list(args))
    assert result.exit_code == 0, result.output
    return result.output


def register(app: Flask, name: str) -> BotVersion:
    invoke(app, "bot", "register", str(SAMPLES / "python" / name), "--owner", "house", "--trusted")
    version = db.session.scalar(select(BotVersion).order_by(BotVersion.id.desc()))
    from web.services.lifecycle import prepare

    assert str(prepare(version.id)) == "active", version.validation_log
    return version


def play_all() -> None:
    for match_id in db.session.scalars(
        select(Match.id).where(Match.status == MatchStatus.QUEUED)
    ).all():
        play.play_match(match_id)


def test_user_create_prints_a_token_stored_hashed(pg_app: Flask) -> None:
    output = invoke(pg_app, "user", "create", "carol", "--admin")
    token = output.rsplit("API token: ", 1)[1].strip()
    stored = db.session.scalar(select(ApiToken))
    assert stored.token_hash != token and token not in stored.token_hash
    assert users.user_for_token(token).username == "carol"
    assert db.session.scalar(select(User.is_admin).where(User.username == "carol"))
    failed = pg_app.test_cli_runner().invoke(args=["user", "create", "carol"])
    assert failed.exit_code != 0 and "already exists" in failed.output


def test_register_schedule_recompute_and_requeue(pg_app: Flask) -> None:
    require_bwrap()
    invoke(pg_app, "user", "create", "house", "--house")
    register(pg_app, "challenge-greedy")
    register(pg_app, "challenge-random")
    assert "matches queued" in invoke(pg_app, "ladder", "schedule")
    play_all()
    before = {r.bot_id: (r.mu, r.sigma, r.games) for r in db.session.scalars(select(Rating))}
    assert all(games > 0 for _, _, games in before.values())
    assert "matches replayed" in invoke(pg_app, "ratings", "recompute")
    db.session.expire_all()
    after = {r.bot_id: (r.mu, r.sigma, r.games) for r in db.session.scalars(select(Rating))}
    assert after.keys() == before.keys()
    for bot_id, (mu, sigma, games) in after.items():
        assert (mu, sigma, games) == pytest.approx(before[bot_id])
    finished = db.session.scalar(select(Match).where(Match.status == MatchStatus.FINISHED))
    refused = pg_app.test_cli_runner().invoke(args=["match", "requeue", str(finished.id)])
    assert refused.exit_code != 0 and "finished" in refused.output
    failed = create_match(
        finished.game_config, [s.version for s in finished.seats], ladder_id=finished.ladder_id
    )
    failed.status, failed.attempts = MatchStatus.FAILED, failed.max_attempts
    db.session.commit()
    assert play.play_match(failed.id).startswith("not claimed")
    assert "queued again" in invoke(pg_app, "match", "requeue", str(failed.id))
    assert play.play_match(failed.id) == "finished"


def test_tournament_runs_on_the_server(pg_app: Flask) -> None:
    require_bwrap()
    invoke(pg_app, "user", "create", "house", "--house")
    versions = [register(pg_app, f"challenge-{kind}") for kind in ("greedy", "random")]
    args = ["tournament", "run", "--game", "challenge", "--tables", "2", "--no-wait"]
    for version in versions:
        args += ["--version", str(version.id)]
    invoke(pg_app, *args)
    tournament = db.session.scalar(select(Tournament))
    matches = db.session.scalars(select(Match).where(Match.tournament_id == tournament.id)).all()
    assert len(matches) == 4  # two tables, each in both seatings (mirrored)
    assert not any(m.rated for m in matches)
    play_all()
    from web.services.tournaments import standings

    table = standings(tournament)
    assert str(tournament.status) == "finished"
    assert sum(row["matches"] for row in table) == 8
    assert sum(row["points"] for row in table) == pytest.approx(4.0)


def test_a_rejection_reason_reaches_the_terminal_without_its_escapes(pg_app: Flask) -> None:
    """A version's error can quote the bot (its output, its build log): the admin commands
    show its control characters as escapes."""
    import time

    import click

    from web.cli import _await_active
    from web.models import Bot, VersionStatus

    owner = users.create_user("dora")
    bot = Bot(owner_id=owner.id, name="loud")
    db.session.add(bot)
    db.session.flush()
    version = BotVersion(bot_id=bot.id, number=1, sha256="0" * 64, status=VersionStatus.REJECTED)
    version.error = "bad answer \x1b]52;c;aGk=\x07 \x9b2J \u202e"
    db.session.add(version)
    db.session.commit()
    with pytest.raises(click.ClickException) as info:
        _await_active(owner.id, "loud", time.monotonic() + 60)
    message = info.value.message
    assert "\\x1b]52;c;aGk=\\x07 \\x9b2J \\u202e" in message
    assert not any(c in message for c in "\x1b\x07\x9b\u202e")


def test_samples_registers_the_house_opponents_of_every_game_once(pg_app: Flask) -> None:
    """What compose runs (``docker compose run --rm web samples``) so that a person can play each
    game at a table: every game's sample bots, owned by the house account, queued for a worker
    to build (then ``tables.opponents`` offers them); run again, it registers nothing."""
    from arena.games import names
    from web.models import Bot

    first = invoke(pg_app, "samples")
    registered = {line.split(":")[0] for line in first.splitlines() if "registered" in line}
    assert registered == set(names()), first
    bots = db.session.scalars(select(Bot)).all()
    assert bots and all(b.owner.is_house for b in bots)
    again = invoke(pg_app, "samples")
    assert "registered " not in again.replace("already registered", ""), again
    assert db.session.scalar(select(func.count()).select_from(Bot)) == len(bots)
