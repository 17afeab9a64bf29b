"""Each seat's think time per move, summarised from a finished match's replay steps, and the
charts of a bot's statistics page (no database needed)."""

from __future__ import annotations

from web import charts
from web.services.stats import percentile, think_summary


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 0.5) == 5.0
    assert percentile(values, 0.9) == 9.0, "no float rounding pushes the rank past 9 of 10"
    assert percentile([7.0], 0.9) == 7.0
    assert percentile([], 0.5) is None


def test_a_seats_summary_counts_only_its_own_timed_moves() -> None:
    steps = [
        {"seat": 0, "time_ms": 30.0, "status": "ok"},
        {"seat": 1, "time_ms": 999.0, "status": "ok"},
        {"seat": 0, "time_ms": 10.0, "status": "timeout"},
        {"seat": 0, "time_ms": 20.0, "status": "ok"},
        {"seat": 0, "time_ms": None, "status": "ok"},  # an untimed local replay
        {"seat": 0, "time_ms": 0.0, "status": "forfeited"},  # played for it by default
    ]
    summary = think_summary(steps, 0)
    assert (summary.moves, summary.p50, summary.p90, summary.most) == (3, 20.0, 30.0, 30.0)
    empty = think_summary(steps, 2)
    assert (empty.moves, empty.p50, empty.most) == (0, None, None)


def test_rate_charts_label_every_bar_and_need_two_days() -> None:
    bars = charts.rate_bars([("seat 0", 0.5, 4), ("seat <1>", None, 0)])
    assert "50% of 4" in bars and "– of 0" in bars and "seat &lt;1&gt;" in bars
    assert 'width="0.0"' in bars, "a seat without matches has an empty bar"
    assert "No counted matches" in charts.rate_bars([])
    assert "second day" in charts.rate_line([("2026-11-01", 0.5)])
    line = charts.rate_line([("2026-11-01", 0.0), ("2026-11-02", None), ("2026-11-03", 1.0)])
    assert line.count("<circle") == 2 and "2026-11-03" in line
