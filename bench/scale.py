"""A million matches: pages, API lists, the scheduler and placement on a big database, and the
storage a match takes.

Creates a separate PostgreSQL database (``arena_scale_<random>``, or ``--name``, on the server
of ``--database-url``), migrates it and fills it with rows PostgreSQL generates itself
(``INSERT ... SELECT`` over ``generate_series``; the big tables' secondary indexes built after
the load): 10,000 users, 20,000 bots, 50,000 versions, 1,000,000 finished ladder matches in
mirrored deal groups with their seats (about four million) and one rating change per seat,
and the ratings they lead to (``--scale`` shrinks every count). Then, through the real Flask
app in this process (its test client: the whole request, routing, queries and templates,
without a network hop; page cache off, rate limits off), it requests each kind of page
``--requests`` times with random ids and pages and reports p50 and p99:

- ``home`` (``/``), ``ladder`` (a ladder page), ``bot`` (a bot page), ``match`` (a match page);
- ``api_matches``, ``api_bot_matches``, ``api_bots``, ``api_ladder``: the API's paged lists
  (all matches, one bot's, all bots, a ladder's standings), at random page numbers;
  ``api_matches_before``: the match list at a random id (``?before=``, a keyset page).

Then scheduler runs (``schedule_all``: every ladder topped up; its matches then count as
played, so the first runs pay off the placement the fill left owed and the later ones, whose
median is reported, show the steady state), placement of a new version (the scheduler pass
after it became active), and the storage per match: matches of the house bots played by the
bare runner on every house ladder (``--replays`` each), their replays as stored (sorted JSON,
as ``web.services.play`` writes it) and gzipped. The database is dropped at the end, whatever
happened (``--keep`` keeps it, ``--reuse NAME`` measures a kept one again). The last line:

    pages_p99_ms=<worst kind> scheduler_ms=<steady-state median> replay_kb=<median stored>

    .venv/bin/python bench/scale.py [--scale 1.0] [--requests 100] [--replays 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# bench/ holds scripts named like the packages (sandbox.py, web.py): import the packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

USERS, BOTS, VERSIONS, MATCHES = 10_000, 20_000, 50_000, 1_000_000
# Matches per ladder (game, players): a match has 3.7 seats on average, and every bot of the
# two-player ladder has enough matches that its active version owes no placement.
LADDER_WEIGHTS = {
    ("challenge", 2): 3,
    ("svara", 3): 1,
    ("kozyr-boys", 3): 1,
    ("svoi-kozyri", 4): 3,
    ("svoi-kozyri-tricks", 4): 3,
    ("svara", 6): 2,
}
START = datetime(2025, 1, 1)
ACTIVE_FROM = 0.2
"""Each bot's active (newest) version plays from this fraction of the year on: enough matches
that few versions owe placement matches (mirrored groups seat a bot in three to six matches at
once, so the counts spread widely), as on a ladder that has run a while."""
YEAR = timedelta(days=365)
GOALS = {"pages_p99_ms": 300.0, "scheduler_ms": 1000.0, "replay_kb": 20.0}


@contextmanager
def scale_database(
    server: str, reuse: str = "", keep: bool = False, name: str = ""
) -> Iterator[str]:
    """A new database on ``server`` (named ``name``, or at random), or the one named ``reuse``
    (filled by an earlier run); dropped when the block ends unless ``keep``."""
    from sqlalchemy import create_engine, make_url, text

    admin = make_url(server)
    name = reuse or name or f"arena_scale_{uuid.uuid4().hex[:8]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    if not reuse:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        if keep:
            print(f"kept {name} (--reuse {name}; drop it with: dropdb -h 127.0.0.1 {name})")
        else:
            with engine.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            print(f"dropped {name}")
        engine.dispose()


def migrate(url: str) -> None:
    from flask_migrate import upgrade

    from web import create_app

    with create_app({"DATABASE_URL": url, "STORAGE_DIR": "/nonexistent"}).app_context():
        upgrade()


def make_app(url: str, redis_url: str, storage: Path) -> Any:
    from web import create_app

    return create_app(
        {
            "DATABASE_URL": url,
            "REDIS_URL": redis_url,
            "BROKER_PREFIX": f"scale-{uuid.uuid4().hex[:8]}:",
            "STORAGE_DIR": str(storage),
            "PAGE_CACHE_SECONDS": 0,
            "RATELIMIT_ENABLED": False,
            "SECRET_KEY": "bench-" + uuid.uuid4().hex,
        }
    )


# --- filling ----------------------------------------------------------------------------------


class Filler:
    """The big world's shape (counts, which bot plays on which ladder), and the statements that
    generate its rows inside PostgreSQL."""

    def __init__(
        self, scale: float, ladders: dict[tuple[str, int], int], configs: dict[int, str]
    ) -> None:
        self.users = max(10, int(USERS * scale))
        self.bots = max(20, int(BOTS * scale))
        self.versions = max(self.bots, int(VERSIONS * scale))
        self.matches = max(100, int(MATCHES * scale))
        self.ladders = ladders  # (game, players) -> ladder id
        self.configs = configs  # ladder id -> its game configuration as JSON
        keys = list(LADDER_WEIGHTS)
        self.bot_ladder = [keys[b % len(keys)] for b in range(self.bots)]
        self.by_ladder: dict[tuple[str, int], list[int]] = {k: [] for k in keys}
        for b in range(self.bots):
            self.by_ladder[self.bot_ladder[b]].append(b + 1)

    def parameters(self) -> dict[str, Any]:
        extra = self.versions - self.bots  # bots with more than one version
        return {
            "users": self.users,
            "bots": self.bots,
            "matches": self.matches,
            "ladders": len(LADDER_WEIGHTS),
            "weights": sum(LADDER_WEIGHTS.values()),
            "base_versions": 1 + extra // self.bots,
            "more_versions": extra % self.bots,  # bots 1..this have one version more
            "groups": self.matches // 2 + 1,  # enough mirrored groups of two or more matches
            "start": START,
            "year": YEAR,
            "active_from": ACTIVE_FROM,
        }

    def fill(self, conn: Any) -> dict[str, int]:
        """Every row, generated by PostgreSQL; the big tables' secondary indexes are dropped
        for the load and built again after it, and foreign keys are not checked (the rows are
        made consistent by construction). Commits."""
        import psycopg

        # bound on the client: CREATE TABLE AS takes no server-side parameters
        with psycopg.ClientCursor(conn) as cur:
            cur.execute("SET work_mem = '256MB'")
            cur.execute("SET maintenance_work_mem = '1GB'")
            cur.execute("SELECT setseed(0.20261127)")
            self._ladder_table(cur)
            rebuild = _drop_secondary_indexes(cur, BIG_TABLES)
            cur.execute("SET session_replication_role = replica")  # no FK or count triggers
            for label, statement in FILL_STATEMENTS:
                started = time.perf_counter()
                cur.execute(statement, self.parameters())
                print(f"  {label}: {cur.rowcount} rows in {time.perf_counter() - started:.0f} s")
            cur.execute("SET session_replication_role = origin")
            started = time.perf_counter()
            for statement in rebuild:
                cur.execute(statement)
            print(f"  indexes built in {time.perf_counter() - started:.0f} s")
            for statement in FINISH_STATEMENTS:
                cur.execute(statement)
            counted = cur.execute("SELECT count(*) FROM match_seats").fetchone()
            seats = int(counted[0]) if counted else 0
        conn.commit()
        return {
            "users": self.users,
            "bots": self.bots,
            "versions": self.versions,
            "matches": self.matches,
            "seats": seats,
            "rating_changes": seats,
        }

    def _ladder_table(self, cur: Any) -> None:
        """``scale_ladders``: each ladder's index (a bot's is ``(id - 1) % 6``), id, game,
        players, configuration, number of bots, and its range of the weights."""
        cur.execute(
            "CREATE TEMP TABLE scale_ladders (k int, ladder_id int, game text, players int,"
            " config json, n int, lo int, hi int)"
        )
        lo = 0
        for k, key in enumerate(LADDER_WEIGHTS):
            ladder = self.ladders[key]
            hi = lo + LADDER_WEIGHTS[key]
            cur.execute(
                "INSERT INTO scale_ladders VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (k, ladder, key[0], key[1], self.configs[ladder], len(self.by_ladder[key]), lo, hi),
            )
            lo = hi


BIG_TABLES = ("matches", "match_seats", "rating_changes")


def _drop_secondary_indexes(cur: Any, tables: tuple[str, ...]) -> list[str]:
    """Drops every index of ``tables`` but their primary keys; returns the statements that
    make them again (unique constraints as constraints)."""
    cur.execute(
        "SELECT i.indexrelid::regclass::text, c.conname, t.relname,"
        " pg_get_indexdef(i.indexrelid), pg_get_constraintdef(c.oid)"
        " FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid"
        " LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid AND c.conrelid = t.oid"
        " WHERE t.relname = ANY(%s) AND NOT i.indisprimary",
        (list(tables),),
    )
    rebuild = []
    for index, constraint, table, index_def, constraint_def in cur.fetchall():
        if constraint:
            cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{constraint}"')
            rebuild.append(f'ALTER TABLE {table} ADD CONSTRAINT "{constraint}" {constraint_def}')
        else:
            cur.execute(f"DROP INDEX {index}")
            rebuild.append(index_def)
    return rebuild


_WHEN = "(%(start)s::timestamp + %(year)s::interval * (m.id::float8 / %(matches)s))"

FILL_STATEMENTS = [
    (
        "users",
        "INSERT INTO users (id, username, is_admin, is_house, created_at)"
        " SELECT u, 'user' || lpad(u::text, greatest(5, length(u::text)), '0'), false, false,"
        " %(start)s FROM generate_series(1, %(users)s) u",
    ),
    (
        "bots",
        "INSERT INTO bots (id, owner_id, name, status, consecutive_failures, failed_matches,"
        " created_at)"
        " SELECT b, (b - 1) %% %(users)s + 1, 'bot' || lpad(b::text, greatest(5, length(b::text)),"
        " '0'), 'active', 0, 0, %(start)s FROM generate_series(1, %(bots)s) b",
    ),
    # Each bot's ladder, number of versions and first version id (versions are numbered bot by
    # bot, oldest first; the newest is active).
    (
        "bot shapes",
        "CREATE TEMP TABLE scale_bots AS SELECT b, k, versions,"
        " (sum(versions) OVER (ORDER BY b) - versions + 1)::int AS first_version"
        " FROM (SELECT b, (b - 1) %% %(ladders)s AS k,"
        " %(base_versions)s + (b <= %(more_versions)s)::int AS versions"
        " FROM generate_series(1, %(bots)s) b) s",
    ),
    (
        "versions",
        "INSERT INTO bot_versions (id, bot_id, number, sha256, status, manifest, games, language,"
        " trusted, build_log, validation_log, created_at, activated_at, prepare_attempts,"
        " prepare_lost)"
        " SELECT b.first_version + v.n - 1, b.b, v.n, md5(random()::text) || md5(random()::text),"
        " CASE WHEN v.n = b.versions THEN 'active' ELSE 'retired' END, '{}',"
        " json_build_array(l.game), 'python', false, '', '', %(start)s, %(start)s, 1, 0"
        " FROM scale_bots b JOIN scale_ladders l USING (k),"
        " generate_series(1, b.versions) v(n)",
    ),
    # Mirrored deal groups: a ladder drawn by weight, its table of distinct bots (a random
    # start and stride through the ladder's bots), one match per rotation of the seats.
    (
        "deal groups",
        "CREATE TEMP TABLE scale_groups AS SELECT g, k, players, n, j0, stride, seed, grp,"
        " (sum(players) OVER w - players)::int AS first_match,"
        " (sum(players * players) OVER w - players * players)::bigint AS first_seat"
        " FROM (SELECT x.g, l.k, l.players, l.n, floor(x.a * l.n)::int AS j0,"
        " 1 + floor(x.c * ((l.n - 1) / (l.players - 1)))::int AS stride, x.seed, x.grp"
        " FROM (SELECT g, floor(random() * %(weights)s)::int AS w, random() AS a,"
        " random() AS c, floor(random() * 4.6e18)::bigint AS seed,"
        " md5(g::text || random()::text) AS grp FROM generate_series(1, %(groups)s) g) x"
        " JOIN scale_ladders l ON x.w >= l.lo AND x.w < l.hi) s WINDOW w AS (ORDER BY g)",
    ),
    (
        "match shapes",
        "CREATE TEMP TABLE scale_m AS SELECT g.first_match + r + 1 AS id, g.k, g.players,"
        " r AS rotation, g.n, g.j0, g.stride, g.seed, g.grp,"
        " floor(random() * g.players)::int AS off, g.first_seat + r * g.players AS first_seat"
        " FROM scale_groups g, generate_series(0, g.players - 1) r"
        " WHERE g.first_match + r + 1 <= %(matches)s",
    ),
    (
        "matches",
        "INSERT INTO matches (id, kind, ladder_id, game_config, seed, mirror_group, rated,"
        " status, attempts, max_attempts, faults, lost_workers, worker, result, outcome,"
        " replay_path, final_hash, created_at, queued_at, started_at, finished_at)"
        " SELECT m.id, 'ladder', l.ladder_id, l.config, m.seed, m.grp, true, 'finished', 1, 3,"
        " 0, 0, 'scale:1', json_build_object('ranking', ARRAY(SELECT (s + m.off) %% m.players"
        " + 1 FROM generate_series(0, m.players - 1) s)),"
        " json_build_object('steps', 200 + floor(random() * 7801)::int),"
        " 'replays/' || left(m.grp, 2) || '/' || m.grp || lpad(m.rotation::text, 24, '0')"
        " || '.json', m.grp || m.grp, "
        + ", ".join([_WHEN] * 3)
        + ", "
        + _WHEN
        + " + interval '20 seconds'"
        " FROM scale_m m JOIN scale_ladders l USING (k)",
    ),
    # Seat s of rotation r holds the table's bot (s + r) mod players; the version it played is
    # the active one from ACTIVE_FROM of the year on, the older ones before it in turn.
    (
        "seats",
        "INSERT INTO match_seats (id, match_id, seat, bot_id, bot_version_id, status, place,"
        " score, strikes, cpu_seconds)"
        " SELECT m.first_seat + s + 1, m.id, s, b.b, b.first_version + CASE"
        " WHEN m.id >= %(matches)s * %(active_from)s THEN b.versions - 1"
        " ELSE floor((b.versions - 1) * (m.id::float8 / %(matches)s) / %(active_from)s)::int"
        " END,"
        " 'ok', (s + m.off) %% m.players + 1, (m.players - 1 - (s + m.off) %% m.players)::float8,"
        " 0, 0.5"
        " FROM scale_m m CROSS JOIN generate_series(0, m.players - 1) s"
        " JOIN scale_bots b ON b.b = m.k + 1 + %(ladders)s"
        " * ((m.j0 + ((s + m.rotation) %% m.players) * m.stride) %% m.n)",
    ),
    # One rating change per seat: sigma shrinks by 0.5 %% a match down to 0.8, mu moves by
    # (players + 1 - 2 place) sigma / 20 from 25.
    (
        "rating changes",
        "INSERT INTO rating_changes (id, match_id, bot_id, ladder_id, place, mu_before,"
        " sigma_before, mu_after, sigma_after, created_at)"
        " SELECT id, match_id, bot_id, ladder_id, place, mu_after - delta, sigma_before,"
        " mu_after, sigma_after, created_at"
        " FROM (SELECT *, 25 + sum(delta) OVER (PARTITION BY bot_id ORDER BY match_id)"
        " AS mu_after"
        " FROM (SELECT s.id, s.match_id, s.bot_id, l.ladder_id, s.place, "
        + _WHEN
        + " AS created_at,"
        " greatest(0.8, 25.0 / 3 * 0.995 ^ (row_number() OVER w - 1)) AS sigma_before,"
        " greatest(0.8, 25.0 / 3 * 0.995 ^ row_number() OVER w) AS sigma_after,"
        " (m.players + 1 - 2 * s.place) * greatest(0.8, 25.0 / 3 * 0.995"
        " ^ (row_number() OVER w - 1)) / 20 AS delta"
        " FROM match_seats s JOIN scale_m m ON m.id = s.match_id JOIN scale_ladders l USING (k)"
        " WINDOW w AS (PARTITION BY s.bot_id ORDER BY s.match_id)) c) r",
    ),
    (
        "ratings",
        "INSERT INTO ratings (bot_id, ladder_id, mu, sigma, games, updated_at, last_played_at)"
        " SELECT b.b, l.ladder_id, coalesce(r.mu_after, 25), coalesce(r.sigma_after, 25.0 / 3),"
        " coalesce(r.games, 0), coalesce(r.created_at, %(start)s), r.created_at"
        " FROM scale_bots b JOIN scale_ladders l USING (k) LEFT JOIN ("
        " SELECT DISTINCT ON (bot_id) bot_id, mu_after, sigma_after, created_at,"
        " count(*) OVER (PARTITION BY bot_id) AS games FROM rating_changes"
        " ORDER BY bot_id, match_id DESC) r ON r.bot_id = b.b",
    ),
]

FINISH_STATEMENTS = [
    *(
        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"
        for table in ("users", "bots", "bot_versions", "matches", "match_seats", "rating_changes")
    ),
    # the triggers that keep the match total and the blocks' counts were off for the load
    "DELETE FROM match_totals",
    "INSERT INTO match_totals (id, matches) SELECT 1, count(*) FROM matches",
    "DELETE FROM match_blocks",
    "INSERT INTO match_blocks (block, matches)"
    " SELECT id / 4096, count(*) FROM matches GROUP BY 1",  # web.models.MATCH_BLOCK
    "DROP TABLE scale_ladders, scale_bots, scale_groups, scale_m",
]


COUNT_LADDER_MATCHES = (
    "UPDATE bot_versions SET ladder_matches = played.n FROM ("
    " SELECT s.bot_version_id AS id, count(*) AS n FROM match_seats s"
    " JOIN matches m ON m.id = s.match_id"
    " WHERE m.kind = 'ladder' AND m.status = 'finished'"
    " GROUP BY s.bot_version_id) AS played"
    " WHERE bot_versions.id = played.id"
)
"""Each version's finished ladder matches, as migration ``scale02`` counts the existing ones."""


def fill(app: Any, scale: float, reuse: bool = False) -> tuple[Filler, dict[str, int]]:
    from sqlalchemy import text

    from web.extensions import db
    from web.services import ladders

    with app.app_context():
        ids, configs = {}, {}
        for game, players in LADDER_WEIGHTS:
            ladder = ladders.get_or_create_ladder(game, players)
            ids[(game, players)] = ladder.id
            configs[ladder.id] = json.dumps(ladder.game_config())
        db.session.commit()
        filler = Filler(scale, ids, configs)
        if reuse:  # filled by an earlier run with the same scale: the same ids
            return filler, {}
        raw = db.engine.raw_connection()
        try:
            counts = filler.fill(raw.driver_connection)
        finally:
            raw.close()
        started = time.perf_counter()
        db.session.execute(text(COUNT_LADDER_MATCHES))
        db.session.commit()
        print(f"versions' ladder matches counted in {time.perf_counter() - started:.0f} s")
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    return filler, counts


# --- measuring --------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def page_kinds(app: Any, filler: Filler) -> dict[str, Callable[[random.Random], str]]:
    from web.extensions import db
    from web.models import Ladder

    with app.app_context():
        slugs = list(db.session.scalars(db.select(Ladder.slug)))
    per_ladder = max(len(v) for v in filler.by_ladder.values())
    return {
        "home": lambda r: "/",
        "ladder": lambda r: f"/ladders/{r.choice(slugs)}",
        "bot": lambda r: f"/bots/{r.randint(1, filler.bots)}",
        "match": lambda r: f"/matches/{r.randint(1, filler.matches)}",
        "api_matches": lambda r: f"/api/v1/matches?page={r.randint(1, filler.matches // 25)}",
        "api_matches_before": lambda r: f"/api/v1/matches?before={r.randint(2, filler.matches)}",
        "api_bot_matches": lambda r: (
            f"/api/v1/matches?bot={r.randint(1, filler.bots)}&page={r.randint(1, 8)}"
        ),
        "api_bots": lambda r: f"/api/v1/bots?page={r.randint(1, filler.bots // 25)}",
        "api_ladder": lambda r: (
            f"/api/v1/ladders/{r.choice(slugs)}?page={r.randint(1, max(1, per_ladder // 50))}"
        ),
    }


def measure_pages(app: Any, filler: Filler, requests: int) -> dict[str, tuple[float, float]]:
    client = app.test_client()
    rng = random.Random(7)
    found = {}
    for kind, url_of in page_kinds(app, filler).items():
        client.get(url_of(rng)).close()  # warm the path (templates, plans)
        times = []
        for _ in range(requests):
            url = url_of(rng)
            started = time.perf_counter()
            answer = client.get(url)
            answer.get_data()
            times.append((time.perf_counter() - started) * 1000)
            answer.close()
            if answer.status_code != 200:
                raise SystemExit(f"{url}: {answer.status_code}")
        found[kind] = (statistics.median(times), percentile(times, 0.99))
        print(f"  {kind:16} p50 {found[kind][0]:7.1f} ms   p99 {found[kind][1]:7.1f} ms")
    return found


def play_out() -> None:
    """Every queued match counts as played (finished, unrated), each version's count of
    finished ladder matches kept as ``play.finish`` keeps it. Commits."""
    from sqlalchemy import select, update

    from web.extensions import db
    from web.models import Match, MatchStatus
    from web.services import placement

    ids = list(db.session.scalars(select(Match.id).where(Match.status == MatchStatus.QUEUED)))
    db.session.execute(
        update(Match).where(Match.id.in_(ids)).values(status=MatchStatus.FINISHED, rated=False)
    )
    placement.count_finished(ids)
    db.session.commit()


def measure_scheduler(app: Any, runs: int) -> list[float]:
    """Scheduler passes; after each, its matches count as played (finished, unrated), so
    placement matches owed by versions of the fill are paid off in the first passes and the
    later ones show the steady state: each ladder topped up to ``QUEUE_TARGET``."""

    from web.services import ladders

    times: list[float] = []
    with app.app_context():
        for _ in range(runs):
            started = time.perf_counter()
            made = ladders.schedule_all(random.Random(len(times)))
            times.append((time.perf_counter() - started) * 1000)
            play_out()
            print(f"  scheduler run: {made} matches queued in {times[-1]:.0f} ms")
    return times


def measure_placement(app: Any, filler: Filler) -> float:
    """A new version of a new bot becomes active on the busiest ladder; the scheduler pass that
    seats its placement matches."""
    from sqlalchemy import select

    from web.extensions import db
    from web.models import (
        Bot,
        BotVersion,
        Match,
        MatchSeat,
        MatchStatus,
        Rating,
        VersionStatus,
        utcnow,
    )
    from web.services import ladders
    from web.services.users import get_or_create_user

    key = ("svoi-kozyri", 4)
    with app.app_context():
        owner = get_or_create_user("newcomer")
        bot = Bot(owner=owner, name=f"fresh-{uuid.uuid4().hex[:8]}")
        db.session.add(bot)
        db.session.flush()
        version = BotVersion(
            bot_id=bot.id,
            number=1,
            sha256="0" * 64,
            status=VersionStatus.ACTIVE,
            games=[key[0]],
            activated_at=utcnow(),
        )
        db.session.add(version)
        db.session.add(Rating(bot_id=bot.id, ladder_id=filler.ladders[key], mu=25.0, sigma=25 / 3))
        db.session.commit()
        started = time.perf_counter()
        ladders.schedule_all(random.Random(99))
        took = (time.perf_counter() - started) * 1000
        seated = db.session.scalar(
            select(db.func.count())
            .select_from(MatchSeat)
            .join(Match, Match.id == MatchSeat.match_id)
            .where(MatchSeat.bot_version_id == version.id, Match.status == MatchStatus.QUEUED)
        )
        play_out()
    print(f"  placement: {seated} placement matches queued in {took:.0f} ms")
    if not seated:
        raise SystemExit("the new version was not seated")
    return took


# --- storage per match ------------------------------------------------------------------------


def _play(spec: tuple[dict[str, Any], list[str], int]) -> tuple[int, int]:
    import orjson

    from arena.bots import load_bot
    from arena.games import make_game
    from arena.runner import TimeControl, run_match
    from sandbox import get_sandbox
    from web.storage.folder import FolderStorage

    config, folders, seed = spec
    game = make_game(**config)
    bots = [load_bot(Path(folder)) for folder in folders]
    outcome = run_match(game, bots, seed, sandbox=get_sandbox("bwrap"), time_control=TimeControl())
    encoded = orjson.dumps(outcome.replay, option=orjson.OPT_SORT_KEYS)  # as the worker does
    import tempfile

    with tempfile.TemporaryDirectory() as folder:  # and as the storage keeps it (compressed)
        storage = FolderStorage(Path(folder))
        key = storage.put_replay(encoded)
        kept = (Path(folder) / key).stat().st_size
    return kept, len(encoded)


def replay_sizes(per_ladder: int) -> list[tuple[int, int]]:
    """(stored, as JSON) bytes of house-bot matches on every default ladder."""
    import multiprocessing

    from arena.games import make_game, names
    from web.services.bots import sample_bot_folders

    rng = random.Random(11)
    specs = []
    for name in names():
        config = make_game(name).config()  # the house ladder: the game's defaults
        folders = [str(f) for f in sample_bot_folders([name])]
        if not folders:
            continue
        for _ in range(per_ladder):
            table = [rng.choice(folders) for _ in range(int(config["players"]))]
            specs.append((dict(config), table, rng.getrandbits(63)))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(_play, specs, chunksize=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of every count")
    parser.add_argument("--requests", type=int, default=100, help="requests per kind of page")
    parser.add_argument("--scheduler-runs", type=int, default=6)
    parser.add_argument("--replays", type=int, default=2, help="matches per house ladder")
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "ARENA_TEST_DATABASE_URL", "postgresql+psycopg://root@127.0.0.1:5432/postgres"
        ),
    )
    parser.add_argument("--keep", action="store_true", help="keep the filled database")
    parser.add_argument("--reuse", default="", help="a database kept by --keep (same --scale)")
    parser.add_argument("--name", default="", help="the new database's name (else at random)")
    parser.add_argument(
        "--no-migrate", action="store_true", help="with --reuse: measure older code as it is"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/15")
    parser.add_argument(
        "--pages-only",
        action="store_true",
        help="pages and API lists alone (run beside another code's run on one database)",
    )
    args = parser.parse_args()
    import tempfile

    with (
        tempfile.TemporaryDirectory() as storage,
        scale_database(args.database_url, args.reuse, args.keep, args.name) as url,
    ):
        if not args.no_migrate:
            migrate(url)
        app = make_app(url, args.redis_url, Path(storage))
        started = time.perf_counter()
        filler, counts = fill(app, args.scale, bool(args.reuse))
        print(f"filled in {time.perf_counter() - started:.0f} s: {counts}")
        print("pages (Flask test client, in process; page cache and rate limits off):")
        pages = measure_pages(app, filler, args.requests)
        if args.pages_only:
            worst = max(p99 for _, p99 in pages.values())
            print(f"pages_p99_ms={worst:.0f}")
            return
        scheduler = measure_scheduler(app, args.scheduler_runs)
        placement = measure_placement(app, filler)
        with app.app_context():
            from web.extensions import db

            db.session.remove()
            db.engine.dispose()
    sizes = replay_sizes(args.replays) if args.replays > 0 else [(0, 0)]
    stored = statistics.median(s for s, _ in sizes) / 1024
    plain = statistics.median(j for _, j in sizes) / 1024
    print(
        f"replays: {len(sizes)} house matches, median {stored:.1f} KB stored (compressed),"
        f" {plain:.1f} KB as JSON"
    )
    worst = max(p99 for _, p99 in pages.values())
    sched = statistics.median(scheduler[2:] or scheduler)  # the steady state
    print(f"placement_ms={placement:.0f} replay_json_kb={plain:.1f}")
    print("goals: " + ", ".join(f"{k} < {v:g}" for k, v in GOALS.items()))
    print(f"pages_p99_ms={worst:.0f} scheduler_ms={sched:.0f} replay_kb={stored:.1f}")


if __name__ == "__main__":
    main()
