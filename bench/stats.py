"""How fast a bot's statistics answer with a full database, against the bot's own API record.

Fills a separate PostgreSQL database as ``bench/web.py`` does (1,000 bots, ``--matches``
finished 4-seat matches by bulk COPY), then seats bot 1 at seat 0 of every match (a bot with
``--matches`` matches: the worst case), gives 2% of seats an error status and every seat a
think-time summary, and times in-process requests through the app's test client, side by side in
one run:

- anchor: ``GET /api/v1/bots/<id>`` (the bot with its ratings and versions);
- ``GET /api/v1/bots/<id>/stats`` (every version), ``?version=1``, the statistics page, and the
  owner's ``GET /api/v1/errors``;

each for the heavy bot and for an ordinary one (about 400 matches). Prints the median and the
90th percentile of ``--repeat`` requests each, and ``ratio=<heavy stats p50 / anchor p50>``.

    .venv/bin/python bench/stats.py [--matches 100000] [--repeat 15] [--keep]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _bench_web() -> Any:
    spec = importlib.util.spec_from_file_location("bench_web", ROOT / "bench" / "web.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.DB_NAME = "arena_bench_stats"
    return module


def heavy_bot(url: str, matches: int) -> None:
    """Bot 1 at seat 0 of every match; 2% error seats; a think summary on every seat."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        conn.execute("UPDATE match_seats SET bot_id = 1, bot_version_id = 1 WHERE seat = 0")
        conn.execute(
            "UPDATE match_seats SET moves = 30, think_ms_p50 = 5 + id % 40, "
            "think_ms_p90 = 50 + id % 200, think_ms_max = 300 + id % 900, "
            "status = CASE WHEN id % 50 = 0 THEN 'timeout' WHEN id % 97 = 0 THEN 'crash' "
            "ELSE 'ok' END, strikes = CASE WHEN id % 50 = 0 THEN 1 ELSE 0 END"
        )
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE match_seats")
    print(f"bot 1 seated in all {matches} matches, seats marked, in "
          f"{time.perf_counter() - started:.1f}s")  # fmt: skip


def timed(client: Any, path: str, repeat: int, headers: dict[str, str]) -> tuple[float, float]:
    """(p50, p90) milliseconds of ``repeat`` GETs of ``path`` (after one warm-up)."""
    assert client.get(path, headers=headers).status_code == 200, path
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path, headers=headers)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, path
    times.sort()
    return statistics.median(times), times[max(0, round(0.9 * len(times)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    bw = _bench_web()
    url = bw.recreate_database()
    try:
        with tempfile.TemporaryDirectory() as storage:
            run(bw, url, Path(storage), args.matches, args.repeat)
    finally:
        if not args.keep:
            bw.drop_database()


def run(bw: Any, url: str, storage: Path, matches: int, repeat: int) -> None:
    from flask_migrate import upgrade

    from web import create_app
    from web.extensions import db
    from web.models import User
    from web.services import ladders, users

    app = create_app(bw.app_config(url, storage))
    with app.app_context():
        upgrade()
        ladder = ladders.get_or_create_ladder(bw.GAME, players=bw.PLAYERS)
        db.session.commit()
        ladder_id = ladder.id
        db.engine.dispose()
    bw.fill(url, ladder_id, "replays/none.json", matches=matches)
    heavy_bot(url, matches)
    with app.app_context():
        owner = db.session.get(User, 1)
        assert owner is not None
        token = users.issue_token(owner, "bench")
        db.session.commit()
        client = app.test_client()
        bearer = {"Authorization": f"Bearer {token}"}
        rows = []
        for label, bot in (("heavy", 1), ("ordinary", 500)):
            for name, path in (
                ("anchor: bot API", f"/api/v1/bots/{bot}"),
                ("stats API", f"/api/v1/bots/{bot}/stats"),
                ("stats page", f"/bots/{bot}/stats"),
                ("stats API, v1", f"/api/v1/bots/{bot}/stats?version=1"),
            ):
                rows.append((label, name, *timed(client, path, repeat, {})))
        rows.append(("owner 1", "errors API", *timed(client, "/api/v1/errors", repeat, bearer)))
    print(f"{'bot':<9} {'request':<18} {'p50 ms':>8} {'p90 ms':>8}")
    for label, name, p50, p90 in rows:
        print(f"{label:<9} {name:<18} {p50:8.1f} {p90:8.1f}")
    anchor = rows[0][2]
    print(f"ratio={rows[1][2] / anchor:.2f}")


if __name__ == "__main__":
    main()
