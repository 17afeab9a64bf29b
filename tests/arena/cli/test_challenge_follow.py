"""``arena challenge`` while it waits: a line each time the challenge's matches move on."""

from __future__ import annotations

from typing import Any

import pytest

from arena.cli import challenge as cli


def state(*statuses: str) -> dict[str, Any]:
    done = all(s == "finished" for s in statuses)
    matches = [{"id": i, "status": s} for i, s in enumerate(statuses)]
    return {"id": 1, "status": "finished" if done else "queued", "matches": matches}


def test_following_prints_each_change_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    polls = [
        state("queued", "queued"),  # nothing moved: nothing printed
        state("running", "queued"),
        state("running", "queued"),
        state("finished", "running"),
        state("finished", "finished"),
    ]
    asked: list[str] = []

    def answer(_server: str, path: str, _token: str) -> dict[str, Any]:
        asked.append(path)
        return {"data": polls[len(asked) - 1]}

    monkeypatch.setattr(cli, "get_json", answer)
    monkeypatch.setattr(cli.time, "sleep", lambda _s: None)
    final = cli.follow("http://arena.test", "ka_x", state("queued", "queued"), 600)
    assert final["status"] == "finished" and asked == ["/challenges/1"] * 5
    lines = [line.split(" ", 1)[1] for line in capsys.readouterr().out.splitlines()]
    assert lines == ["1 queued, 1 running", "1 finished, 1 running", "2 finished"]


def test_progress_escapes_what_the_server_says() -> None:
    # A status from the server never reaches the terminal as an escape sequence.
    assert cli.progress(state("run\x1b[2Jning")) == "1 run\\x1b[2Jning"


def test_the_results_fit_80_columns_whatever_the_bot_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    done = state("finished", "finished")
    row = {"version": 1, "owner": "demo", "wins": 2, "matches": 2, "average_place": 1.0}
    long = {**row, "bot": "svoi-kozyri-heuristic-" + "x" * 20, "errors": 0}
    done["standings"] = [{**row, "bot": "svoi-kozyri-heuristic", "errors": 0}, long]
    for match in done["matches"]:
        match["replay_url"] = f"/api/v1/matches/{match['id']}/replay"
    assert cli.report("http://127.0.0.1:8000", done) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  svoi-kozyri-heuristic v1 (demo)" in lines
    assert "      2 wins of 2, average place 1.00, 0 with errors" in lines
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
