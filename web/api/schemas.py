"""The JSON API's payloads: marshmallow schemas, from which the OpenAPI document is generated.

Every answer is one envelope: ``{"data": ..., "meta": {...}}`` on success and
``{"error": {"status", "code", "message", "details"}}`` on failure. The replay download is the one
exception: it is the replay file itself (``docs/api.md``).
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

_envelopes: dict[tuple[str, bool], type[Schema]] = {}


class PageMeta(Schema):
    page = fields.Integer(required=True)
    per_page = fields.Integer(required=True)
    total = fields.Integer(required=True)
    pages = fields.Integer(required=True)


class ErrorBody(Schema):
    status = fields.Integer(required=True)
    code = fields.String(required=True)
    message = fields.String(required=True)
    details = fields.Dict()


class ErrorEnvelope(Schema):
    error = fields.Nested(ErrorBody, required=True)


def envelope(schema: type[Schema], many: bool = False) -> type[Schema]:
    """The envelope schema around ``schema`` (one class per payload, named after it)."""
    key = (schema.__name__, many)
    if key not in _envelopes:
        name = schema.__name__ + ("ListEnvelope" if many else "Envelope")
        attrs: dict[str, Any] = {
            "data": fields.Nested(schema, many=many, required=True),
            "meta": fields.Nested(PageMeta),
        }
        _envelopes[key] = type(name, (Schema,), attrs)
    return _envelopes[key]


# --- query arguments ---------------------------------------------------------------------------


class PageArgs(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(1, 100_000))
    per_page = fields.Integer(load_default=25, validate=validate.Range(1, 100))


class StandingsArgs(PageArgs):
    sort = fields.String(
        load_default="rank",
        validate=validate.OneOf(["rank", "score", "mu", "sigma", "matches", "active", "bot"]),
    )


class MatchArgs(PageArgs):
    game = fields.String(validate=validate.Length(1, 48))
    bot = fields.Integer(validate=validate.Range(1, 2**31 - 1))
    status = fields.String(
        validate=validate.OneOf(["queued", "running", "finished", "failed", "cancelled"])
    )
    ladder = fields.String(validate=validate.Length(1, 96))
    tournament = fields.Integer(validate=validate.Range(1, 2**31 - 1))
    before = fields.Integer(
        validate=validate.Range(1, 2**31 - 1),
        metadata={"description": "only matches with a smaller id (walk a long list by id)"},
    )


class BotArgs(PageArgs):
    user = fields.String(validate=validate.Length(1, 64))


class RatingArgs(Schema):
    ladder = fields.String(validate=validate.Length(1, 96))
    points = fields.Integer(load_default=500, validate=validate.Range(2, 5000))


MAX_FRAMES = 500
"""The most frames one request for a match's frames may ask for."""


class FrameArgs(Schema):
    seat = fields.Integer(validate=validate.Range(0, 15))
    start = fields.Integer(
        validate=validate.Range(0, 10_000_000),
        metadata={"description": "the window's first frame (0 by default)"},
    )
    stop = fields.Integer(
        validate=validate.Range(1, 10_000_000),
        metadata={"description": f"the frame after the window (at most start + {MAX_FRAMES})"},
    )
    since = fields.Integer(
        validate=validate.Range(0, 10_000_000),
        metadata={"description": "only the frames after this one (live polling), not with start"},
    )

    @validates_schema
    def _window(self, data: dict[str, Any], **_: Any) -> None:
        if "since" in data and ("start" in data or "stop" in data):
            raise ValidationError("give either since or start and stop")
        start, stop = data.get("start", 0), data.get("stop")
        if stop is not None and not start < stop <= start + MAX_FRAMES:
            raise ValidationError(f"stop must be after start and at most start + {MAX_FRAMES}")


class LiveArgs(Schema):
    seat = fields.Integer(
        validate=validate.Range(0, 15),
        metadata={"description": "your own seat's view (its owner only); public by default"},
    )
    since = fields.Integer(
        validate=validate.Range(0, 10_000_000),
        metadata={"description": "only the frames after this one (a Last-Event-ID wins)"},
    )


class UploadForm(Schema):
    manifest = fields.String(
        metadata={"description": "bot.toml text, when the file is a single source file"}
    )


class UploadFiles(Schema):
    file = fields.Raw(
        required=True,
        metadata={"type": "string", "format": "binary", "description": "zip, tar.gz or a file"},
    )
    manifest = fields.Raw(
        metadata={
            "type": "string",
            "format": "binary",
            "description": "bot.toml as a file part (-F manifest=@bot.toml), instead of text",
        },
    )


# --- payloads ---------------------------------------------------------------------------------


class Game(Schema):
    name = fields.String(required=True)
    title = fields.String(required=True)
    min_players = fields.Integer(required=True)
    max_players = fields.Integer(required=True)
    default_players = fields.Integer(required=True)
    variants = fields.List(fields.String(), required=True)
    ladders = fields.List(fields.String(), required=True)


class Ladder(Schema):
    slug = fields.String(required=True)
    game = fields.String(required=True)
    variant = fields.String(allow_none=True)
    players = fields.Integer(required=True)
    mirrored = fields.Boolean(required=True)
    active = fields.Boolean(required=True)


class Placing(Schema):
    played = fields.Integer(required=True, metadata={"description": "placement matches played"})
    of = fields.Integer(required=True, metadata={"description": "placement matches owed in all"})


RANK_DOC = "by mu among the bots with rated matches and placement over; null otherwise"
RANK_LABEL_DOC = 'the rank as the site shows it: "3", "placing, 7 of 10" or "unranked"'
PLACING_DOC = "while the bot's active version plays its placement matches, else null"


class Standing(Schema):
    rank = fields.Integer(required=True, allow_none=True, metadata={"description": RANK_DOC})
    rank_label = fields.String(required=True, metadata={"description": RANK_LABEL_DOC})
    placing = fields.Nested(Placing, allow_none=True, metadata={"description": PLACING_DOC})
    bot_id = fields.Integer(required=True)
    bot = fields.String(required=True)
    author = fields.String(required=True)
    status = fields.String(required=True)
    score = fields.Float(required=True)
    mu = fields.Float(required=True)
    sigma = fields.Float(required=True)
    matches = fields.Integer(required=True)
    last_active = fields.String(allow_none=True)
    placements = fields.Dict(keys=fields.String(), values=fields.Integer())
    trend = fields.List(fields.Float())


class LadderStandings(Schema):
    ladder = fields.Nested(Ladder, required=True)
    standings = fields.List(fields.Nested(Standing), required=True)


class Version(Schema):
    id = fields.Integer(required=True)
    bot_id = fields.Integer(required=True)
    number = fields.Integer(required=True)
    status = fields.String(required=True)
    games = fields.List(fields.String())
    language = fields.String(allow_none=True)
    error = fields.String(allow_none=True)
    created_at = fields.String(allow_none=True)
    activated_at = fields.String(allow_none=True)
    build_log = fields.String(allow_none=True, metadata={"description": "owner only"})
    validation_log = fields.String(allow_none=True, metadata={"description": "owner only"})
    placement_left = fields.Integer(
        metadata={"description": "placement matches the (active) version still has to play"}
    )


class BotRating(Schema):
    ladder = fields.String(required=True)
    rank = fields.Integer(allow_none=True, metadata={"description": RANK_DOC})
    rank_label = fields.String(metadata={"description": RANK_LABEL_DOC})
    placing = fields.Nested(Placing, allow_none=True, metadata={"description": PLACING_DOC})
    score = fields.Float(required=True)
    mu = fields.Float(required=True)
    sigma = fields.Float(required=True)
    matches = fields.Integer(required=True)


class Bot(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    owner = fields.String(required=True)
    status = fields.String(required=True)
    playing = fields.Integer(
        allow_none=True, metadata={"description": "the number of the version playing the ladders"}
    )
    pinned = fields.Integer(
        allow_none=True,
        metadata={
            "description": "the version its owner chose to play (null: the newest validated "
            "version plays, and each newer one once validated)"
        },
    )
    paused_reason = fields.String(allow_none=True)
    created_at = fields.String(allow_none=True)
    ratings = fields.List(fields.Nested(BotRating))
    versions = fields.List(fields.Nested(Version))


class Seat(Schema):
    seat = fields.Integer(required=True)
    bot_id = fields.Integer(required=True)
    bot = fields.String(required=True)
    owner = fields.String(required=True)
    version = fields.Integer(allow_none=True)
    status = fields.String(allow_none=True)
    place = fields.Integer(allow_none=True)
    score = fields.Float(allow_none=True)


class Match(Schema):
    id = fields.Integer(required=True)
    kind = fields.String(required=True)
    status = fields.String(required=True)
    game = fields.String(required=True)
    ladder = fields.String(allow_none=True)
    tournament_id = fields.Integer(allow_none=True)
    rated = fields.Boolean(required=True)
    seed = fields.String(
        allow_none=True,
        metadata={
            "description": "decimal digits of the 64-bit seed (a string: JSON numbers lose "
            "precision beyond 2**53); finished, unsealed matches only"
        },
    )
    sealed = fields.String(
        allow_none=True,
        metadata={"description": "why the match is sealed (its deal group is still being played)"},
    )
    seats = fields.List(fields.Nested(Seat), required=True)
    created_at = fields.String(allow_none=True)
    finished_at = fields.String(allow_none=True)
    replay_url = fields.String(allow_none=True)


class FramePage(Schema):
    match_id = fields.Integer(required=True)
    seat = fields.Integer(allow_none=True)
    live = fields.Boolean(required=True)
    total = fields.Integer(required=True, metadata={"description": "frames so far, all windows"})
    frames = fields.List(fields.Dict(), required=True)


class Tournament(Schema):
    id = fields.Integer(required=True)
    name = fields.String(required=True)
    status = fields.String(required=True)
    seed = fields.String(
        allow_none=True,
        metadata={
            "description": "the seed every deal follows from (decimal digits), if one was given; "
            "null: every deal was drawn secretly at random"
        },
    )
    reproducible = fields.Boolean(
        required=True,
        metadata={"description": "true: the deals follow from the seed, so are known in advance"},
    )
    game = fields.Dict(required=True)
    entries = fields.List(fields.Integer())
    standings = fields.List(fields.Dict())
    progress = fields.Dict(keys=fields.String(), values=fields.Integer())


class QueueStatus(Schema):
    queued = fields.Integer(required=True)
    running = fields.Integer(required=True)
    workers = fields.List(fields.String(), required=True)


class Runtime(Schema):
    command = fields.String(required=True)
    language = fields.String(required=True)
    kind = fields.String(required=True, metadata={"enum": ["interpreter", "compiler"]})
    path = fields.String(required=True)
    version = fields.String(required=True)


class Language(Schema):
    id = fields.String(required=True, metadata={"description": "`language` in bot.toml"})
    name = fields.String(required=True)
    available = fields.Boolean(required=True)
    version = fields.String(
        allow_none=True, required=True, metadata={"description": "its compiler's version line"}
    )
    release = fields.String(allow_none=True, required=True, metadata={"example": "17.0.15"})
    missing = fields.List(
        fields.String(), required=True, metadata={"description": "programs not found"}
    )
    reason = fields.String(allow_none=True, required=True)
    install = fields.String(
        allow_none=True, required=True, metadata={"description": "what adds it, if missing"}
    )


class Runtimes(Schema):
    backend = fields.String(required=True)
    available = fields.Boolean(required=True)
    reason = fields.String(allow_none=True, required=True)
    languages = fields.List(
        fields.Nested(Language),
        required=True,
        metadata={"description": "every language with a starter kit, in this sandbox"},
    )
    runtimes = fields.List(fields.Nested(Runtime), required=True)


class Me(Schema):
    id = fields.Integer(required=True)
    username = fields.String(required=True)
    is_admin = fields.Boolean(required=True)


class RatingHistoryEnvelope(Schema):
    data = fields.List(
        fields.List(fields.Raw()),
        required=True,
        metadata={
            "description": "[[iso time, mu - 3 sigma, mu, sigma, version], ...], oldest first; "
            "version: the number of the bot's version that played the match (a change of it "
            "marks a new version, or its owner's choice of another)"
        },
    )


# --- versions and challenges ----------------------------------------------------------------

_ID = validate.Range(1, 2**31 - 1)


class PlayBody(Schema):
    version = fields.Integer(
        required=True,
        allow_none=True,
        validate=_ID,
        metadata={
            "description": "the version number to play the ladders (any that passed validation: "
            "a rollback, or forward again); null: the newest validated version, and each newer "
            "one from now on"
        },
    )


class DeleteBody(Schema):
    confirm = fields.String(
        required=True,
        validate=validate.Length(1, 64),
        metadata={"description": "the bot's name, to confirm"},
    )


class VersionRecord(Schema):
    version_id = fields.Integer(required=True)
    number = fields.Integer(required=True)
    status = fields.String(required=True)
    matches = fields.Integer(required=True, metadata={"description": "finished, any kind"})
    ladder_matches = fields.Integer(required=True)
    wins = fields.Integer(required=True, metadata={"description": "matches finished first"})
    win_rate = fields.Float(allow_none=True)
    average_place = fields.Float(allow_none=True)
    errors = fields.Integer(
        required=True, metadata={"description": "matches it ended with an error"}
    )
    error_rate = fields.Float(allow_none=True)
    think_seconds = fields.Float(
        allow_none=True, metadata={"description": "CPU seconds it spent thinking per match"}
    )
    ratings = fields.Dict(
        keys=fields.String(),
        values=fields.Float(),
        metadata={"description": "score (mu - 3 sigma) after its last rated match, by ladder"},
    )


class CompareArgs(Schema):
    a = fields.Integer(required=True, validate=_ID, metadata={"description": "a version number"})
    b = fields.Integer(required=True, validate=_ID, metadata={"description": "another one"})


class Comparison(Schema):
    bot_id = fields.Integer(required=True)
    a = fields.Nested(VersionRecord, required=True)
    b = fields.Nested(VersionRecord, required=True)


class ChallengeEntry(Schema):
    bot = fields.Integer(required=True, validate=_ID, metadata={"description": "a bot id"})
    version = fields.Integer(
        allow_none=True,
        validate=_ID,
        metadata={
            "description": "a version number (own bots only); missing: the version playing now"
        },
    )


class ChallengeBody(Schema):
    ladder = fields.String(
        required=True,
        validate=validate.Length(1, 96),
        metadata={"description": "the ladder whose game, variant and table size to play"},
    )
    entries = fields.List(
        fields.Nested(ChallengeEntry),
        required=True,
        validate=validate.Length(1, 16),
        metadata={"description": "one per seat, as many as the ladder seats"},
    )
    deals = fields.Integer(
        load_default=1,
        validate=validate.Range(1, 100),
        metadata={"description": "deals to play; on a mirrored ladder each in every seat rotation"},
    )


class ChallengeArgs(PageArgs):
    user = fields.String(validate=validate.Length(1, 64))
    bot = fields.Integer(validate=_ID)


class Challenge(Schema):
    id = fields.Integer(required=True)
    user = fields.String(required=True)
    ladder = fields.String(required=True)
    deals = fields.Integer(required=True)
    created_at = fields.String(allow_none=True)
    status = fields.String(
        required=True, metadata={"enum": ["queued", "running", "finished", "failed"]}
    )
    seats = fields.List(fields.Dict(), required=True)
    standings = fields.List(
        fields.Dict(),
        required=True,
        metadata={"description": "per seat as named: matches finished, wins, average place"},
    )
    matches = fields.List(fields.Nested(Match), required=True)


class ReplayDocument(Schema):
    format = fields.String(required=True)
    version = fields.Integer(required=True)
    game = fields.Dict(required=True)
    seats = fields.List(fields.Dict(), required=True)
    steps = fields.List(fields.Dict(), required=True)
    seed = fields.Integer(metadata={"description": "finished, unsealed matches only"})
    result = fields.Dict(metadata={"description": "finished, unsealed matches only"})
    outcome = fields.Dict(metadata={"description": "finished, unsealed matches only"})
    final_hash = fields.String(metadata={"description": "finished, unsealed matches only"})
    live = fields.Boolean(metadata={"description": "true while the match is running or sealed"})
    sealed = fields.String(
        allow_none=True,
        metadata={"description": "how far its deal group is while it is sealed (public view only)"},
    )


# --- the collusion report (administrators only) -------------------------------------------------


class CollusionArgs(Schema):
    game = fields.String(validate=validate.Length(1, 64))
    matches = fields.Integer(load_default=100, validate=validate.Range(1, 1000))
    alpha = fields.Float(load_default=0.01, validate=validate.Range(1e-9, 0.5))


class CollusionTest(Schema):
    statistic = fields.Float(allow_none=True, required=True)
    p_value = fields.Float(allow_none=True, required=True)
    adjusted_p_value = fields.Float(allow_none=True, required=True)
    flagged = fields.Boolean(required=True)


class CollusionResult(CollusionTest):
    author = fields.String(required=True)
    matches_together = fields.Integer(required=True)
    matches_apart = fields.Integer(required=True)
    mean_place_score_together = fields.Float(allow_none=True, required=True)
    mean_place_score_apart = fields.Float(allow_none=True, required=True)


class CollusionTogether(CollusionTest):
    results = fields.Nested(CollusionResult, many=True, required=True)


class CollusionTiming(CollusionTest):
    sender = fields.String(required=True)
    reader = fields.String(required=True)
    observations = fields.Integer(required=True)
    degrees_of_freedom = fields.Integer(required=True)
    mutual_information_bits = fields.Float(allow_none=True, required=True)


class CollusionPair(Schema):
    authors = fields.List(fields.String(), required=True)
    flagged = fields.Boolean(required=True)
    together = fields.Nested(CollusionTogether, required=True)
    timing = fields.Nested(CollusionTiming, many=True, required=True)


class CollusionReport(Schema):
    alpha = fields.Float(required=True)
    matches = fields.Integer(required=True)
    skipped_matches = fields.Integer(required=True)
    unreadable_matches = fields.Integer(required=True)
    tests = fields.Integer(required=True)
    flagged_pairs = fields.Integer(required=True)
    pairs = fields.Nested(CollusionPair, many=True, required=True)


# --- a bot's statistics and an owner's matches with errors ----------------------------------


class StatsArgs(Schema):
    version = fields.Integer(
        validate=_ID, metadata={"description": "a version number (default: every version)"}
    )


class StatsRecord(Schema):
    matches = fields.Integer(required=True)
    wins = fields.Integer(required=True, metadata={"description": "matches finished first"})
    win_rate = fields.Float(allow_none=True, required=True)
    average_place = fields.Float(allow_none=True, required=True)


class SeatRecord(StatsRecord):
    seat = fields.Integer(required=True)


class TableRecord(StatsRecord):
    players = fields.Integer(required=True)


class DayRecord(StatsRecord):
    day = fields.String(required=True, metadata={"description": "YYYY-MM-DD (UTC)"})


class OpponentRecord(StatsRecord):
    bot_id = fields.Integer(required=True)
    name = fields.String(required=True)
    ahead = fields.Integer(
        required=True, metadata={"description": "matches this bot placed ahead of the opponent"}
    )
    ahead_rate = fields.Float(required=True)


class ErrorCounts(Schema):
    matches_with_errors = fields.Integer(required=True)
    by_kind = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True)
    timeouts = fields.Integer(required=True)
    strikes = fields.Integer(required=True)
    matches_with_strikes = fields.Integer(required=True)


class ThinkTimes(Schema):
    matches = fields.Integer(required=True, metadata={"description": "matches with move times"})
    moves = fields.Integer(required=True)
    p50_ms = fields.Float(allow_none=True, required=True)
    p90_ms = fields.Float(allow_none=True, required=True)
    max_ms = fields.Float(allow_none=True, required=True)


class BotStats(Schema):
    bot_id = fields.Integer(required=True)
    version = fields.Integer(allow_none=True, required=True)
    version_id = fields.Integer(allow_none=True, required=True)
    window = fields.Integer(
        required=True, metadata={"description": "the most recent matches counted, at most"}
    )
    overall = fields.Nested(StatsRecord, required=True)
    by_seat = fields.Nested(SeatRecord, many=True, required=True)
    by_players = fields.Nested(TableRecord, many=True, required=True)
    by_opponent = fields.Nested(OpponentRecord, many=True, required=True)
    by_day = fields.Nested(DayRecord, many=True, required=True)
    errors = fields.Nested(ErrorCounts, required=True)
    think = fields.Nested(ThinkTimes, required=True)


class ErrorListArgs(PageArgs):
    bot = fields.Integer(validate=_ID, metadata={"description": "only this bot of yours"})


class ErrorSeat(Schema):
    match_id = fields.Integer(required=True)
    kind = fields.String(required=True)
    finished_at = fields.String(allow_none=True, required=True)
    bot_id = fields.Integer(required=True)
    bot = fields.String(required=True)
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    status = fields.String(required=True)
    strikes = fields.Integer(required=True)
    forfeited = fields.Boolean(required=True)
    message = fields.String(allow_none=True, required=True)
    place = fields.Integer(allow_none=True, required=True)
