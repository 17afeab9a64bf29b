"""A bot's state as its owner should read it: whether it plays, and where its newest version is.

A bot row says ``active`` from its creation on (it is not paused or retired), so that word alone
would show green before any version has passed validation. The pages show this summary instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from web.models import Bot, BotStatus, BotVersion, VersionStatus

STAGES: dict[VersionStatus, tuple[str, str]] = {
    VersionStatus.UPLOADED: (
        "queued",
        "waits in the queue for a worker; next it is built and self-tested",
    ),
    VersionStatus.BUILDING: (
        "building",
        "is being built and self-tested; next comes a validation match",
    ),
    VersionStatus.VALIDATING: (
        "validating",
        "plays a validation match against sample bots; if it finishes cleanly it joins the ladders",
    ),
    VersionStatus.ACTIVE: ("active", "plays on the ladders of its games"),
    VersionStatus.REJECTED: ("rejected", "was refused: see its error and logs below"),
    VersionStatus.RETIRED: (
        "retired",
        "does not play: a newer version does, or the one its owner chose",
    ),
}
"""Each version status as a word for the badge and a sentence of what happens now and next."""

STEPS: list[tuple[VersionStatus, str]] = [
    (VersionStatus.UPLOADED, "Queued"),
    (VersionStatus.BUILDING, "Build and self-test"),
    (VersionStatus.VALIDATING, "Validation match"),
    (VersionStatus.ACTIVE, "On the ladders"),
]
"""The steps from an upload to the ladders, in order, with their names on the bot page."""


def steps() -> list[tuple[str, str, str, str]]:
    """Each step as (version status, name, badge word, sentence) for the bot page's list."""
    return [(str(status), name, *STAGES[status]) for status, name in STEPS]


PENDING = (VersionStatus.UPLOADED, VersionStatus.BUILDING, VersionStatus.VALIDATING)


@dataclass(frozen=True)
class BotState:
    """The badge (``label``, also its CSS class) and a sentence about the newest version."""

    label: str
    note: str
    pending: bool


def version_stage(version: BotVersion) -> tuple[str, str]:
    """The badge word and the sentence for one version's status."""
    return STAGES.get(VersionStatus(version.status), (str(version.status), ""))


def bot_state(bot: Bot) -> BotState:
    """Paused or retired as the bot says; else active only if a version passed validation."""
    newest = bot.versions[-1] if bot.versions else None
    pending = newest is not None and newest.status in PENDING
    note = ""
    if newest is not None:
        note = f"Version {newest.number} {version_stage(newest)[1]}."
    if bot.status == BotStatus.RETIRED and not pending:
        # Not the newest version's own status ("a newer version plays"): no version plays.
        note = "Retired by its owner: no version plays. Choose one below, or upload a new one."
    if bot.status != BotStatus.ACTIVE:
        return BotState(str(bot.status), note, pending)
    if bot.active_version() is not None:
        return BotState("active", note if pending else "", pending)
    if newest is None:
        return BotState("no version", "No version uploaded yet.", False)
    return BotState(version_stage(newest)[0], note, pending)
