"""Tournament pages: the list, and one tournament's standings and crosstable."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from flask import Blueprint, abort, render_template
from flask.typing import ResponseReturnValue
from sqlalchemy import select
from sqlalchemy.orm import joinedload, selectinload

from web.api import queries
from web.extensions import db
from web.models import BotVersion, Match, MatchStatus, Tournament
from web.services import tournaments as service

bp = Blueprint("tournaments", __name__, url_prefix="/tournaments")


@bp.route("")
def index() -> ResponseReturnValue:
    return render_template("tournaments.html", tournaments=queries.tournaments())


def crosstable(tournament: Tournament) -> dict[tuple[int, int], list[int]]:
    """For each ordered pair of entries (version ids): [times a finished above b, below b]."""
    table: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    finished = db.session.scalars(
        select(Match)
        .where(Match.tournament_id == tournament.id, Match.status == MatchStatus.FINISHED)
        .options(selectinload(Match.seats))
    ).all()
    for match in finished:
        for a in match.seats:
            for b in match.seats:
                if a.bot_version_id == b.bot_version_id or a.place is None or b.place is None:
                    continue
                cell = table[(a.bot_version_id, b.bot_version_id)]
                cell[0] += a.place < b.place
                cell[1] += a.place > b.place
    return table


def entry_names(ids: list[int]) -> dict[int, Any]:
    rows = db.session.scalars(
        select(BotVersion).where(BotVersion.id.in_(ids)).options(joinedload(BotVersion.bot))
    ).all()
    return {v.id: v for v in rows}


@bp.route("/<id:tournament_id>")
def tournament(tournament_id: int) -> ResponseReturnValue:
    found = db.session.get(Tournament, tournament_id)
    if found is None:
        abort(404)
    progress = service.progress(found)
    standings = found.standings or service.standings(found)
    entries = list(found.entries or [])
    return render_template(
        "tournament.html",
        tournament=found,
        progress=progress,
        standings=standings,
        entries=entries,
        names=entry_names(entries),
        cross=crosstable(found),
        recent=queries.recent_matches(queries.MatchFilter(tournament_id=found.id), 20),
        slugs=queries.ladder_slugs(),
    )
