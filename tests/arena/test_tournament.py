"""Local tournaments: planning, standings, and real tournaments through the runner."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import orjson
import pytest

from arena.cli.main import main
from arena.replay import read_replay, verify
from arena.tournament import (
    MatchRecord,
    Tournament,
    TournamentSpec,
    entry_names,
    load_summary,
    match_seed,
    meetings,
    plan_round_robin,
    standings,
    swiss_rounds,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"


def spec(**kw: object) -> TournamentSpec:
    base: dict[str, object] = {"game": "challenge", "bots": ("a", "b", "c", "d"), "sandbox": "none"}
    return TournamentSpec(**{**base, **kw})  # type: ignore[arg-type]


def record(
    index: int, seats: tuple[int, ...], ranking: tuple[int, ...], **kw: object
) -> MatchRecord:
    fields: dict[str, object] = {
        "index": index,
        "seats": seats,
        "seed": index,
        "ranking": ranking,
        "statuses": ("ok",) * len(seats),
        "strikes": (0,) * len(seats),
        "cpu_s": (None,) * len(seats),
        "replay": None,
    }
    return MatchRecord(**{**fields, **kw})  # type: ignore[arg-type]


# --- planning -------------------------------------------------------------------------------


def test_mirrored_groups_share_a_seed_and_rotate_every_seat() -> None:
    planned = plan_round_robin(spec(mirrored=True, matches=24), players=3)
    assert len(planned) == 24
    assert [p.index for p in planned] == list(range(24))
    groups: dict[int, list[tuple[int, ...]]] = {}
    for p in planned:
        groups.setdefault(p.group, []).append(p.seats)
        assert p.seed == match_seed(0, p.group)
    assert len(groups) == 8
    for seatings in groups.values():
        assert len(seatings) == 3
        for seat in range(3):
            assert sorted(s[seat] for s in seatings) == sorted(seatings[0])


def test_round_robin_plays_every_table_and_rotates_seats() -> None:
    planned = plan_round_robin(spec(matches=8), players=3)  # 4 tables of 3, twice each
    tables = Counter(tuple(sorted(p.seats)) for p in planned)
    assert set(tables.values()) == {2}
    seats: dict[int, Counter[int]] = {}
    for p in planned:
        for seat, entry in enumerate(p.seats):
            seats.setdefault(entry, Counter())[seat] += 1
    for entry, counts in seats.items():
        assert sum(counts.values()) == 6
        assert max(counts.values()) - min(counts.get(s, 0) for s in range(3)) <= 1, entry


def test_match_seeds_follow_the_tournament_seed() -> None:
    a = [p.seed for p in plan_round_robin(spec(seed=1), players=2)]
    b = [p.seed for p in plan_round_robin(spec(seed=1), players=2)]
    c = [p.seed for p in plan_round_robin(spec(seed=2), players=2)]
    assert a == b
    assert a != c
    assert len(set(a)) == len(a)


def test_swiss_round_count_covers_the_requested_matches() -> None:
    assert swiss_rounds(spec(format="swiss", matches=6), players=2) == 3
    assert swiss_rounds(spec(format="swiss", matches=6, mirrored=True), players=2) == 2
    assert swiss_rounds(spec(format="swiss", matches=1), players=4) == 1


def test_bad_specs_are_refused() -> None:
    with pytest.raises(ValueError):
        spec(format="knockout")
    with pytest.raises(ValueError):
        spec(matches=0)


def test_spec_json_round_trip() -> None:
    s = spec(mirrored=True, params={"deals": 2}, players=2, variant=None)
    assert TournamentSpec.from_json(orjson.loads(orjson.dumps(s.to_json()))) == s


# --- standings ------------------------------------------------------------------------------


def test_standings_count_places_points_and_errors() -> None:
    records = [
        record(0, (0, 1, 2), (1, 2, 3)),
        record(1, (1, 2, 0), (2, 3, 1)),
        record(2, (2, 0, 1), (3, 1, 1), statuses=("crash", "ok", "ok")),
    ]
    rows = standings(["x", "y", "z"], records)
    assert [r.name for r in rows] == ["x", "y", "z"]
    x, y, z = rows
    assert x.places == (3, 0, 0) and x.average_place == 1.0 and x.points == 2 + 2 + 1.5
    assert y.places == (1, 2, 0) and y.matches == 3
    assert z.errors == {"crash": 1}
    assert x.rating.mu > y.rating.mu > z.rating.mu


def test_standings_do_not_depend_on_finishing_order() -> None:
    records = [record(i, (i % 3, (i + 1) % 3), (1, 2)) for i in range(9)]
    forward = standings(["x", "y", "z"], records)
    backward = standings(["x", "y", "z"], records[::-1])
    assert forward == backward


def test_byes_are_worth_an_average_place() -> None:
    rows = standings(["x", "y", "z"], [record(0, (0, 1), (1, 2))], Counter({2: 1}))
    assert {r.name: r.points for r in rows} == {"x": 1, "y": 0, "z": 0.5}


def test_meetings_count_a_mirror_group_once() -> None:
    records = [record(0, (0, 1), (1, 2), seed=7), record(1, (1, 0), (1, 2), seed=7)]
    records.append(record(2, (0, 1), (1, 2), seed=8))
    assert meetings(records) == Counter({(0, 1): 2})


def test_repeated_bots_get_numbered_names() -> None:
    assert entry_names(["builtin:random", "builtin:greedy", "builtin:random"]) == [
        "builtin:random",
        "builtin:greedy",
        "builtin:random#2",
    ]


# --- real tournaments -----------------------------------------------------------------------


def test_builtin_tournament_is_reproducible_and_parallel_safe(tmp_path: Path) -> None:
    s = spec(
        game="svoi-kozyri",
        bots=("builtin:random", "builtin:greedy", "builtin:random", "builtin:greedy"),
        players=2,
        matches=12,
        params={"deals": 2},
        seed=5,
    )
    one = Tournament(s, entry_names(s.bots), tmp_path / "one", jobs=1)
    (tmp_path / "one").mkdir()
    rows = one.run()
    summary = one.write_summary()
    assert summary is not None and summary.is_file()
    two = Tournament(load_summary(summary), entry_names(s.bots), None, jobs=2)
    rows_again = two.run()
    assert rows_again == rows
    key = sorted((r.index, r.seats, r.ranking) for r in two.records)
    assert key == sorted((r.index, r.seats, r.ranking) for r in one.records)
    assert {r.name for r in rows[:2]} == {"builtin:greedy", "builtin:greedy#2"}
    replay = read_replay(tmp_path / "one" / one.records[0].replay)  # type: ignore[operator]
    assert verify(replay) == []


def _run_cli(args: list[str], out: Path) -> dict[str, object]:
    code = main(["tournament", *args, "--sandbox", "none", "--out", str(out)])
    assert code == 0
    data: dict[str, object] = orjson.loads((out / "tournament.json").read_bytes())
    return data


def _order(data: dict[str, object]) -> list[str]:
    return [row["name"] for row in data["standings"]]  # type: ignore[attr-defined]


def test_sample_bots_finish_in_the_expected_order(tmp_path: Path) -> None:
    bots = [str(SAMPLES / "python" / f"challenge-{k}") for k in ("random", "greedy", "heuristic")]
    data = _run_cli(["challenge", *bots, "--matches", "12", "--mirrored", "--jobs", "2"], tmp_path)
    assert _order(data) == ["challenge-heuristic", "challenge-greedy", "challenge-random"]
    assert len(data["matches"]) == 12  # type: ignore[arg-type]
    for match in data["matches"]:  # type: ignore[attr-defined]
        assert (tmp_path / match["replay"]).is_file()
        assert match["statuses"] == ["ok", "ok"]


def test_swiss_of_svoi_kozyri_samples_puts_random_last(tmp_path: Path) -> None:
    kinds = ("random", "greedy", "heuristic")
    bots = [str(SAMPLES / "python" / f"svoi-kozyri-{k}") for k in kinds]
    args = ["svoi-kozyri", *bots, "--format", "swiss", "--players", "2", "--matches", "6"]
    data = _run_cli([*args, "--param", "deals=3", "--seed", "3"], tmp_path)
    assert _order(data)[-1] == "svoi-kozyri-random"
    # six rounds of one table: the bye rotates, so everyone sits out twice
    assert data["byes"] == {"0": 2, "1": 2, "2": 2}


def test_a_crashing_bot_shows_up_in_the_error_counts(tmp_path: Path) -> None:
    bots = [
        str(SAMPLES / "broken" / "crash-mid-match"),
        str(SAMPLES / "python" / "challenge-greedy"),
    ]
    data = _run_cli(["challenge", *bots, "--matches", "2"], tmp_path)
    rows = {row["name"]: row for row in data["standings"]}  # type: ignore[attr-defined]
    assert rows["broken-crash-mid-match"]["errors"] == {"crash": 2}
    assert rows["broken-crash-mid-match"]["places"] == [0, 2]
    assert _order(data)[0] == "challenge-greedy"


def test_cli_leaves_out_bots_written_for_other_games(tmp_path: Path) -> None:
    every_sample = sorted(str(p) for p in (SAMPLES / "python").iterdir() if p.is_dir())
    data = _run_cli(["challenge", *every_sample, "--matches", "3", "--param", "deals=2"], tmp_path)
    seated = set(_order(data))
    # The any-game sample plays every game, challenge included; the others are left out.
    assert seated == {
        "challenge-random",
        "challenge-greedy",
        "challenge-heuristic",
        "any-game-random-python",
    }


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler (gcc) here")
def test_cli_builds_compiled_bots_before_playing(tmp_path: Path) -> None:
    bot = tmp_path / "c-bot"
    shutil.copytree(SAMPLES / "c" / "svoi-kozyri-random", bot, ignore=shutil.ignore_patterns("bot"))
    assert not (bot / "bot").exists()
    python = str(SAMPLES / "python" / "svoi-kozyri-random")
    args = ["svoi-kozyri", str(bot), python, "--players", "2", "--matches", "1"]
    data = _run_cli([*args, "--param", "deals=1"], tmp_path / "out")
    assert (bot / "bot").is_file()
    assert data["matches"][0]["statuses"] == ["ok", "ok"]  # type: ignore[index]


def test_cli_refuses_too_few_bots_for_the_table(tmp_path: Path) -> None:
    bot = str(SAMPLES / "python" / "challenge-random")
    code = main(["tournament", "svoi-kozyri", bot, bot, "--players", "4", "--sandbox", "none"])
    assert code == 2
    assert main(["tournament", "challenge", "--sandbox", "none"]) == 2


def test_check_warns_about_bots_that_do_not_list_the_game() -> None:
    bots = (str(SAMPLES / "python" / "challenge-random"), "builtin:random")
    s = spec(game="svoi-kozyri", bots=bots, players=2)
    warnings = Tournament(s, entry_names(s.bots), None).check()
    assert warnings == ["challenge-random does not list svoi-kozyri in its bot.toml"]


def test_cli_names_an_unknown_builtin_agent_before_any_match(tmp_path: Path, capsys) -> None:
    args = ["svoi-kozyri", "builtin:genius", "builtin:random", "--players", "2"]
    assert main(["tournament", *args, "--out", str(tmp_path / "t"), "--sandbox", "none"]) == 2
    assert "no built-in agent 'genius'" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read (No such file or directory)"),
        (b"{broken", "not JSON"),
        (b"[1]", "not a tournament summary"),
        (b'{"format": "kozyri-arena-tournament"}', "a damaged tournament summary"),
        (b'{"format": "kozyri-arena-tournament", "spec": {"game": "x"}}', "damaged"),
    ],
)
def test_again_with_a_bad_summary_says_what_is_wrong(
    tmp_path: Path, capsys, content: bytes | None, message: str
) -> None:
    path = tmp_path / "tournament.json"
    if content is not None:
        path.write_bytes(content)
    assert main(["tournament", "--again", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and message in err
