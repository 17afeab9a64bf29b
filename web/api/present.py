"""Models as the plain dicts the API serves and the pages reuse; private fields on request."""

from __future__ import annotations

from typing import Any

from flask import url_for

from web.api.queries import iso, score
from web.models import Bot, BotVersion, Ladder, Match, Rating, Tournament
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


def version_json(
    version: BotVersion, private: bool, owed: dict[int, int] | None = None
) -> dict[str, Any]:
    """A bot version; its build and validation logs only for its owner (``private``).

    ``owed``: placement matches left by version id, if the caller counted them for a whole
    list (``placement_owed``); otherwise this version's are counted here."""
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
        "placement_left": placement_left(version) if owed is None else owed.get(version.id, 0),
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
    bot: Bot,
    private: bool,
    ratings: list[tuple[Rating, Ladder]] | None = None,
    owed: dict[int, int] | None = None,
) -> dict[str, Any]:
    return {
        "id": bot.id,
        "name": bot.name,
        "owner": bot.owner.username,
        "status": str(bot.status),
        "paused_reason": bot.paused_reason,
        "created_at": iso(bot.created_at),
        "ratings": [rating_json(r, ladder) for r, ladder in ratings or []],
        "versions": [version_json(v, private, owed) for v in bot.versions],
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
