"""Models as the plain dicts the API serves and the pages reuse; private fields on request."""

from __future__ import annotations

from typing import Any

from flask import url_for

from web.api.queries import iso, score
from web.models import Bot, BotVersion, Challenge, Ladder, Match, MatchStatus, Rating, Tournament
from web.services import sealing
from web.services.ladders import placement_left


def ladder_json(ladder: Ladder) -> dict[str, Any]:
    return {
        "slug": ladder.slug,
        "game": ladder.game,
        "variant": ladder.variant,
        "players": ladder.players,
        "mirrored": ladder.mirrored,
        "active": ladder.active,
    }


def version_json(version: BotVersion, private: bool) -> dict[str, Any]:
    """A bot version; its build and validation logs only for its owner (``private``)."""
    return {
        "id": version.id,
        "bot_id": version.bot_id,
        "number": version.number,
        "status": str(version.status),
        "games": list(version.games or []),
        "language": version.language,
        "error": version.error if private else _public_error(version),
        "created_at": iso(version.created_at),
        "activated_at": iso(version.activated_at),
        "build_log": version.build_log if private else None,
        "validation_log": version.validation_log if private else None,
        "placement_left": placement_left(version),
    }


def _public_error(version: BotVersion) -> str | None:
    """Others learn that a version was refused, not the details (they may quote its code)."""
    return "refused" if version.error else None


def rating_json(rating: Rating, ladder: Ladder) -> dict[str, Any]:
    return {
        "ladder": ladder.slug,
        "score": round(score(rating.mu, rating.sigma), 3),
        "mu": round(rating.mu, 3),
        "sigma": round(rating.sigma, 3),
        "matches": rating.games,
    }


def bot_json(
    bot: Bot, private: bool, ratings: list[tuple[Rating, Ladder]] | None = None
) -> dict[str, Any]:
    return {
        "id": bot.id,
        "name": bot.name,
        "owner": bot.owner.username,
        "status": str(bot.status),
        "playing": next((v.number for v in bot.versions if v.status == "active"), None),
        "pinned": bot.pinned_number,
        "paused_reason": bot.paused_reason,
        "created_at": iso(bot.created_at),
        "ratings": [rating_json(r, ladder) for r, ladder in ratings or []],
        "versions": [version_json(v, private) for v in bot.versions],
    }


def match_json(
    match: Match, ladder_slug: str | None = None, hidden: bool | None = None
) -> dict[str, Any]:
    """A match; its seed only once finished and unsealed (the seed decides every hidden card).

    ``hidden`` is ``web.services.sealing.hidden(match)``, if the caller already knows it (lists
    ask ``sealing.hidden_ids`` once for a whole page).
    """
    if hidden is None:
        hidden = sealing.hidden(match)
    grouped = bool(match.mirror_group) or match.tournament_id is not None
    return {
        "id": match.id,
        "kind": str(match.kind),
        "status": str(match.status),
        "game": match.game_config.get("game", ""),
        "ladder": ladder_slug,
        "tournament_id": match.tournament_id,
        "rated": match.rated,
        "seed": None if hidden else str(match.seed),
        "sealed": sealing.explain(match) if hidden and grouped else None,
        "seats": [
            {
                "seat": s.seat,
                "bot_id": s.bot_id,
                "bot": s.bot.name,
                "owner": s.bot.owner.username,
                "version": s.version.number if s.version else None,
                "status": s.status,
                "place": s.place,
                "score": s.score,
            }
            for s in match.seats
        ],
        "created_at": iso(match.created_at),
        "finished_at": iso(match.finished_at),
        "replay_url": url_for("api_matches.replay", match_id=match.id)
        if match.replay_path
        else None,
    }


def tournament_json(tournament: Tournament, progress: dict[str, int]) -> dict[str, Any]:
    return {
        "id": tournament.id,
        "name": tournament.name,
        "status": str(tournament.status),
        "seed": None if tournament.seed is None else str(tournament.seed),
        "reproducible": tournament.seed is not None,
        "game": dict(tournament.game_config),
        "entries": list(tournament.entries or []),
        "standings": list(tournament.standings or []),
        "progress": progress,
    }


def challenge_status(matches: list[Match]) -> str:
    """queued, running (some played or playing), finished (all done, some finished), failed."""
    done = [m for m in matches if m.status not in (MatchStatus.QUEUED, MatchStatus.RUNNING)]
    if len(done) < len(matches):
        started = any(m.status != MatchStatus.QUEUED for m in matches)
        return "running" if started else "queued"
    return "finished" if any(m.status == MatchStatus.FINISHED for m in matches) else "failed"


def challenge_seats(challenge: Challenge, versions: dict[int, BotVersion]) -> list[dict[str, Any]]:
    """The versions a challenge seats, each with its results over the challenge's matches."""
    rows = []
    for version_id in dict.fromkeys(challenge.entries):
        version = versions[version_id]
        seats = [
            s
            for m in challenge.matches
            if m.status == MatchStatus.FINISHED
            for s in m.seats
            if s.bot_version_id == version_id
        ]
        places = [s.place for s in seats if s.place is not None]
        rows.append(
            {
                "bot_id": version.bot_id,
                "bot": version.bot.name,
                "owner": version.bot.owner.username,
                "version": version.number,
                "matches": len(seats),
                "wins": sum(1 for p in places if p == 1),
                "average_place": round(sum(places) / len(places), 3) if places else None,
                "errors": sum(1 for s in seats if s.status not in ("ok", "done", "active")),
            }
        )
    return rows


def challenge_json(
    challenge: Challenge, versions: dict[int, BotVersion], hidden: set[int]
) -> dict[str, Any]:
    """A challenge with its seats, standings and matches (``hidden``: ids of matches whose
    seeds are withheld, ``web.services.sealing.hidden_ids``)."""
    standings = challenge_seats(challenge, versions)
    return {
        "id": challenge.id,
        "user": challenge.user.username,
        "ladder": challenge.ladder.slug,
        "deals": challenge.deals,
        "created_at": iso(challenge.created_at),
        "status": challenge_status(list(challenge.matches)),
        "seats": [
            {"bot_id": r["bot_id"], "bot": r["bot"], "owner": r["owner"], "version": r["version"]}
            for r in standings
        ],
        "standings": standings,
        "matches": [match_json(m, None, m.id in hidden) for m in challenge.matches],
    }
