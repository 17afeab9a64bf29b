"""A challenge played for real: ``arena challenge`` asks a live server, a real worker taking
only the challenge queue plays the matches with real bot processes, and no rating moves."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from tests.web.conftest import ROOT, Worker, require_bwrap, sample_version, serving
from web.extensions import db
from web.models import Match, MatchStatus, Rating, RatingChange

pytestmark = [pytest.mark.services, pytest.mark.slow]


def _ratings() -> list[tuple[Any, ...]]:
    rows = db.session.scalars(select(Rating).order_by(Rating.id)).all()
    changes = db.session.scalars(select(RatingChange)).all()
    db.session.rollback()
    return [(r.bot_id, r.ladder_id, r.mu, r.sigma, r.games, r.last_played_at) for r in rows] + [
        (c.id,) for c in changes
    ]


def test_a_challenge_is_played_and_rates_nothing(
    pg_app: Flask, start_worker: Callable[..., Worker]
) -> None:
    from web.services import ladders, users

    require_bwrap()
    house = sample_version("python/challenge-random")
    mine = sample_version("python/challenge-greedy", "author", house=False)
    ladder = ladders.default_ladder("challenge")
    author = users.get_or_create_user("author")
    token = users.issue_token(author, "cli")
    db.session.commit()
    before = _ratings()
    assert before, "both bots have a rating on the ladder"
    worker = start_worker(pg_app, queues="challenges")  # nothing else is played
    with serving(pg_app) as server:
        done = subprocess.run(
            [sys.executable, "-m", "arena.cli.main", "challenge", ladder.slug,
             f"{mine.bot_id}:{mine.number}", str(house.bot_id), "--deals", "1", "--wait", "150",
             "--server", server.url, "--token", token],
            capture_output=True, text=True, timeout=200, cwd=ROOT,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr + worker.output()[-3000:]
    assert "status: finished" in done.stdout, done.stdout
    assert "challenge-greedy v1 (author)" in done.stdout and "replay http://" in done.stdout
    rows = db.session.scalars(select(Match).where(Match.challenge_id.is_not(None))).all()
    assert len(rows) == (ladder.players if ladder.mirrored else 1)
    assert {m.status for m in rows} == {MatchStatus.FINISHED}
    assert all(m.replay_path and not m.rated for m in rows)
    assert _ratings() == before, "a challenge changes no rating, count or time played"
