"""The database: users, bots and their versions, ladders, matches, ratings, tournaments.

Every status is a closed enum stored as a plain string (portable between SQLite and PostgreSQL).
Times are naive UTC (``utcnow``) so that both databases compare them the same way.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from flask_login import UserMixin
from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Index,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    func,
)
from sqlalchemy import Enum as SAEnum
from sqlalchemy.orm import Mapped, mapped_column, relationship

from web.extensions import db


def utcnow() -> datetime:
    """The current time as naive UTC, the form every timestamp column holds."""
    return datetime.now(UTC).replace(tzinfo=None)


class Seed(TypeDecorator[int]):
    """A 64-bit unsigned seed in a signed 64-bit column (two's complement), losslessly."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: int | None, dialect: Any) -> int | None:
        if value is None:
            return None
        if not 0 <= value < 2**64:
            raise ValueError(f"a seed is 0 to 2**64 - 1, not {value}")
        return value - 2**64 if value >= 2**63 else value

    def process_result_value(self, value: int | None, dialect: Any) -> int | None:
        return None if value is None else value % 2**64


def _enum(cls: type[enum.Enum]) -> SAEnum:
    """A string column limited to ``cls``'s values, with no database enum type."""
    return SAEnum(
        cls,
        native_enum=False,
        length=16,
        values_callable=lambda e: [m.value for m in e],
        validate_strings=True,
    )


class BotStatus(enum.StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    RETIRED = "retired"  # its owner stopped it: it plays no ladder match, its page stays
    DELETED = "deleted"  # its owner deleted it: no page; its matches keep showing its name


class VersionStatus(enum.StrEnum):
    UPLOADED = "uploaded"
    BUILDING = "building"
    VALIDATING = "validating"
    ACTIVE = "active"
    REJECTED = "rejected"
    RETIRED = "retired"


class MatchStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


class MatchKind(enum.StrEnum):
    LADDER = "ladder"
    VALIDATION = "validation"
    TOURNAMENT = "tournament"
    CHALLENGE = "challenge"
    HUMAN = "human"  # a person plays one seat from the site (``web.services.tables``)


class TournamentStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class User(UserMixin, db.Model):  # type: ignore[name-defined]
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str | None] = mapped_column(String(254))
    password_hash: Mapped[str | None] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(default=False)
    # A house account holds the project's own sample bots; matchmaking treats each of its bots
    # as a separate author so they can share a table.
    is_house: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    bots: Mapped[list[Bot]] = relationship(back_populates="owner")
    tokens: Mapped[list[ApiToken]] = relationship(back_populates="user")


# A name is taken by any other case of it too; the database holds that even against a race.
Index("uq_users_username_lower", func.lower(User.username), unique=True)


class ApiToken(db.Model):  # type: ignore[name-defined]
    """A bearer token; only its SHA-256 is stored, the token itself is shown once."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]

    user: Mapped[User] = relationship(back_populates="tokens")


class UserSession(db.Model):  # type: ignore[name-defined]
    """A logged-in browser: only the SHA-256 of the key in its cookie is kept.

    Deleting the row ends that session at once (logout, "log out everywhere", a new password).
    """

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # When the session was last used, to the minute (an idle session ends: SESSION_IDLE_TIMEOUT).
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)


class Bot(db.Model):  # type: ignore[name-defined]
    __tablename__ = "bots"
    __table_args__ = (UniqueConstraint("owner_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    status: Mapped[BotStatus] = mapped_column(_enum(BotStatus), default=BotStatus.ACTIVE)
    paused_reason: Mapped[str | None] = mapped_column(Text)
    consecutive_failures: Mapped[int] = mapped_column(default=0)
    failed_matches: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # The version number its owner chose to play the ladders; None: the newest validated one.
    pinned_number: Mapped[int | None]
    deleted_at: Mapped[datetime | None]
    # "bot", or "human": a person's seat at the tables (one per user, status deleted, so that no
    # bot list, ladder or page shows it; matches show its name like any seat's).
    kind: Mapped[str] = mapped_column(String(8), default="bot", server_default="bot")
    # Its owner lets people play against it at the tables (``web.services.tables``).
    humans_may_play: Mapped[bool] = mapped_column(default=False, server_default="false")

    owner: Mapped[User] = relationship(back_populates="bots")
    versions: Mapped[list[BotVersion]] = relationship(
        back_populates="bot", order_by="BotVersion.number"
    )

    def active_version(self) -> BotVersion | None:
        """The newest version that passed validation and is still playing."""
        live = [v for v in self.versions if v.status == VersionStatus.ACTIVE]
        return live[-1] if live else None


class BotVersion(db.Model):  # type: ignore[name-defined]
    """One upload of a bot: a content-addressed archive, unpacked, built and validated."""

    __tablename__ = "bot_versions"
    __table_args__ = (
        UniqueConstraint("bot_id", "number"),
        # the bots still placing on a ladder, without reading every active version
        Index("ix_bot_versions_status_matches", "status", "ladder_matches", "bot_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    number: Mapped[int]
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    status: Mapped[VersionStatus] = mapped_column(
        _enum(VersionStatus), default=VersionStatus.UPLOADED
    )
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    games: Mapped[list[str]] = mapped_column(JSON, default=list)
    language: Mapped[str | None] = mapped_column(String(32))
    trusted: Mapped[bool] = mapped_column(default=False)
    build_log: Mapped[str] = mapped_column(Text, default="")
    validation_log: Mapped[str] = mapped_column(Text, default="")
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    activated_at: Mapped[datetime | None]
    # The claim on its build and self-test (``web.services.lifecycle``).
    prepare_attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    prepare_lost: Mapped[int] = mapped_column(default=0, server_default="0")
    prepare_lease_until: Mapped[datetime | None]
    prepare_due: Mapped[datetime | None]
    # Finished ladder matches this version sat in, counted where a match finishes
    # (``web.services.placement.count_finished``): placement reads it instead of the matches.
    ladder_matches: Mapped[int] = mapped_column(default=0, server_default="0")

    bot: Mapped[Bot] = relationship(back_populates="versions")


class Ladder(db.Model):  # type: ignore[name-defined]
    """A ranked queue for one game, variant and table size."""

    __tablename__ = "ladders"
    __table_args__ = (UniqueConstraint("game", "variant", "players"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(96), unique=True)
    game: Mapped[str] = mapped_column(String(48))
    variant: Mapped[str | None] = mapped_column(String(48))
    players: Mapped[int]
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    mirrored: Mapped[bool] = mapped_column(default=True)
    active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    def game_config(self) -> dict[str, Any]:
        """Arguments of ``arena.games.make_game`` for this ladder."""
        return {
            "game": self.game,
            "players": self.players,
            "variant": self.variant,
            "params": dict(self.params or {}),
        }


class Tournament(db.Model):  # type: ignore[name-defined]
    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(96))
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    game_config: Mapped[dict[str, Any]] = mapped_column(JSON)
    format: Mapped[str] = mapped_column(String(24), default="round-robin")
    rounds: Mapped[int] = mapped_column(default=1)
    seed: Mapped[int | None] = mapped_column(Seed)  # None: secret random deals
    entries: Mapped[list[int]] = mapped_column(JSON, default=list)
    status: Mapped[TournamentStatus] = mapped_column(
        _enum(TournamentStatus), default=TournamentStatus.PENDING
    )
    standings: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


class Challenge(db.Model):  # type: ignore[name-defined]
    """An unrated match or series an author asked for between chosen bot versions."""

    __tablename__ = "challenges"
    __table_args__ = (Index("ix_challenges_user_created", "user_id", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    # The ladder whose game, variant and table size the matches are played on (never rated).
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"))
    # The versions seated, in the order the challenger named them (bot version ids).
    entries: Mapped[list[int]] = mapped_column(JSON, default=list)
    deals: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    user: Mapped[User] = relationship()
    ladder: Mapped[Ladder] = relationship()
    matches: Mapped[list[Match]] = relationship(order_by="Match.id", viewonly=True)


class Match(db.Model):  # type: ignore[name-defined]
    """One match. The row, not the broker message, says whether it still has to be played."""

    __tablename__ = "matches"
    __table_args__ = (
        Index("ix_matches_status_lease", "status", "lease_until"),
        Index("ix_matches_ladder_status", "ladder_id", "status"),  # a ladder's pending matches
        Index("ix_matches_finished_at", "finished_at"),  # workers seen lately
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[MatchKind] = mapped_column(_enum(MatchKind), default=MatchKind.LADDER)
    ladder_id: Mapped[int | None] = mapped_column(ForeignKey("ladders.id"), index=True)
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"), index=True)
    challenge_id: Mapped[int | None] = mapped_column(ForeignKey("challenges.id"), index=True)
    game_config: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(Seed)
    mirror_group: Mapped[str | None] = mapped_column(String(40), index=True)
    rated: Mapped[bool] = mapped_column(default=True)
    status: Mapped[MatchStatus] = mapped_column(_enum(MatchStatus), default=MatchStatus.QUEUED)
    attempts: Mapped[int] = mapped_column(default=0)  # claims so far: each claim's token
    max_attempts: Mapped[int] = mapped_column(default=3)  # bound on ``faults``
    # Plays that ended by a fault of the match itself, and plays whose worker vanished
    # (web.services.attempts says what counts as which).
    faults: Mapped[int] = mapped_column(default=0, server_default="0")
    lost_workers: Mapped[int] = mapped_column(default=0, server_default="0")
    lease_until: Mapped[datetime | None]
    worker: Mapped[str | None] = mapped_column(String(128))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    replay_path: Mapped[str | None] = mapped_column(String(255))
    final_hash: Mapped[str | None] = mapped_column(String(64))
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    queued_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]

    seats: Mapped[list[MatchSeat]] = relationship(
        back_populates="match", order_by="MatchSeat.seat", cascade="all, delete-orphan"
    )


class MatchTotal(db.Model):  # type: ignore[name-defined]
    """How many matches there are (one row, id 1), kept by triggers on ``matches`` on
    PostgreSQL (migration ``scale02``), so the match list need not count a million rows; on
    SQLite there is no row and the list counts."""

    __tablename__ = "match_totals"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    matches: Mapped[int] = mapped_column(BigInteger)


MATCH_BLOCK = 4096
"""Match ids per block of ``MatchBlock``."""


class MatchBlock(db.Model):  # type: ignore[name-defined]
    """How many matches have an id in ``[block * MATCH_BLOCK, (block + 1) * MATCH_BLOCK)``,
    kept with ``MatchTotal`` by the same triggers (migration ``scale03``; PostgreSQL only), so a
    deep page of the match list reads a few hundred numbers and one block of ids."""

    __tablename__ = "match_blocks"

    block: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    matches: Mapped[int] = mapped_column(BigInteger)


class MatchSeat(db.Model):  # type: ignore[name-defined]
    __tablename__ = "match_seats"
    __table_args__ = (
        UniqueConstraint("match_id", "seat"),
        Index("ix_match_seats_bot_match", "bot_id", "match_id"),  # a bot's matches
        # a version's matches, and a bot's matches that ended in an error (its statistics)
        Index("ix_match_seats_version_match", "bot_version_id", "match_id"),
        Index("ix_match_seats_bot_status_match", "bot_id", "status", "match_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    seat: Mapped[int]
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"), index=True)
    status: Mapped[str | None] = mapped_column(String(16))
    place: Mapped[int | None]
    score: Mapped[float | None]
    strikes: Mapped[int] = mapped_column(default=0)
    cpu_seconds: Mapped[float | None]
    # The seat's think time per move, summarised when the match finished (None before, and
    # for matches finished before the summary was kept): moves, median, 90th percentile, most.
    moves: Mapped[int | None]
    think_ms_p50: Mapped[float | None]
    think_ms_p90: Mapped[float | None]
    think_ms_max: Mapped[float | None]
    log_bytes: Mapped[int | None]
    """Size of the seat's whole stderr log as stored (``web.services.seatlogs``); None: none."""

    match: Mapped[Match] = relationship(back_populates="seats")
    bot: Mapped[Bot] = relationship()
    version: Mapped[BotVersion] = relationship()


class Rating(db.Model):  # type: ignore[name-defined]
    """A bot's current skill estimate on one ladder."""

    __tablename__ = "ratings"
    __table_args__ = (UniqueConstraint("bot_id", "ladder_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"), index=True)
    mu: Mapped[float]
    sigma: Mapped[float]
    games: Mapped[int] = mapped_column(default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_played_at: Mapped[datetime | None]

    bot: Mapped[Bot] = relationship()


class HumanRating(db.Model):  # type: ignore[name-defined]
    """A rating on a game's human ladder: people at the tables and the bot versions they met.

    Kept apart from the bot ladders' ``Rating`` rows: a table changes only these. A person is
    rated through their seat's bot row (kind ``human``), a bot per version.
    """

    __tablename__ = "human_ratings"
    __table_args__ = (UniqueConstraint("game", "bot_version_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game: Mapped[str] = mapped_column(String(48))
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    bot_version_id: Mapped[int] = mapped_column(ForeignKey("bot_versions.id"))
    person: Mapped[bool] = mapped_column(default=False)
    mu: Mapped[float]
    sigma: Mapped[float]
    games: Mapped[int] = mapped_column(default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    bot: Mapped[Bot] = relationship()
    version: Mapped[BotVersion] = relationship()


class RatingChange(db.Model):  # type: ignore[name-defined]
    """The effect of one match on one bot; unique per (match, bot) so no match is rated twice."""

    __tablename__ = "rating_changes"
    __table_args__ = (
        UniqueConstraint("match_id", "bot_id"),
        # ladder tables (placements, trends) and rating histories read these in index order
        Index("ix_rating_changes_ladder_bot", "ladder_id", "bot_id", "id", "place"),
        Index("ix_rating_changes_bot_ladder", "bot_id", "ladder_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    ladder_id: Mapped[int] = mapped_column(ForeignKey("ladders.id"))
    place: Mapped[int]
    mu_before: Mapped[float]
    sigma_before: Mapped[float]
    mu_after: Mapped[float]
    sigma_after: Mapped[float]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class BotEvent(db.Model):  # type: ignore[name-defined]
    """Something an owner is told about one of their bots (``web.services.events``)."""

    __tablename__ = "bot_events"
    __table_args__ = (Index("ix_bot_events_bot_created", "bot_id", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    version_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    kind: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    bot: Mapped[Bot] = relationship()
    version: Mapped[BotVersion | None] = relationship()

    def to_json(self) -> dict[str, Any]:
        """The event as the API and the webhooks send it."""
        return {
            "id": self.id,
            "kind": self.kind,
            "bot_id": self.bot_id,
            "version": self.version.number if self.version is not None else None,
            "message": self.message,
            "created_at": self.created_at.isoformat() + "Z",
        }


class Webhook(db.Model):  # type: ignore[name-defined]
    """An owner's subscription: every event of their bots is POSTed, signed, to ``url``."""

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    secret: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    user: Mapped[User] = relationship()


class WebhookDelivery(db.Model):  # type: ignore[name-defined]
    """One event sent (or being sent) to one webhook: its tries and how the last one went."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_hook_created", "webhook_id", "created_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event_id: Mapped[int] = mapped_column(ForeignKey("bot_events.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    tries: Mapped[int] = mapped_column(default=0)
    last_code: Mapped[int | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    done_at: Mapped[datetime | None]

    webhook: Mapped[Webhook] = relationship()
    event: Mapped[BotEvent] = relationship()
