"""``arena play``, ``arena verify``, ``arena replay`` and ``arena games``, in process and as the
real console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from arena.cli.main import main
from arena.replay import read_replay, verify, write_replay

ARENA = str(Path(sys.executable).with_name("arena"))


def test_play_saves_a_replay_that_verifies(toy: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "m.json"
    code = main(
        [
            "play",
            toy,
            "--players",
            "3",
            "--seed",
            "4",
            "--deals",
            "2",
            "--agents",
            "greedy,random",
            "--replay",
            str(path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    replay = read_replay(path)
    assert replay["seed"] == 4 and replay["game"]["params"]["deals"] == 2
    assert [s["name"] for s in replay["seats"]] == ["greedy", "random", "greedy"]
    assert verify(replay) == []
    assert "P1 random: lay" in out and "Result" in out and "replay saved" in out
    assert out.count("╭─ toy-high-card") >= 3  # start, the new deal, the end


def test_play_is_reproducible_from_the_seed(toy: str, tmp_path: Path) -> None:
    hashes = []
    for name in ("a.json", "b.json"):
        main(
            [
                "play",
                toy,
                "--seed",
                "12",
                "--agents",
                "random",
                "--quiet",
                "--replay",
                str(tmp_path / name),
            ]
        )
        hashes.append(read_replay(tmp_path / name)["final_hash"])
    assert hashes[0] == hashes[1]


def test_play_quiet_prints_only_the_result(toy: str, capsys) -> None:
    assert main(["play", toy, "--seed", "1", "--quiet", "--param", "hand=1"]) == 0
    out = capsys.readouterr().out
    assert "Result" in out and ": lay" not in out and "4 actions, 2 deals" in out


def test_play_rejects_bad_parameters(toy: str, capsys) -> None:
    assert main(["play", toy, "--param", "hand=99"]) == 2
    assert "must be <= 6" in capsys.readouterr().out
    assert main(["play", toy, "--agents", "genius"]) == 2
    assert "no built-in agent 'genius'" in capsys.readouterr().out
    assert main(["play", toy, "--variant", "nope"]) == 2


def test_verify_reports_each_file(toy: str, tmp_path: Path, capsys) -> None:
    good = tmp_path / "good.json"
    main(["play", toy, "--seed", "2", "--quiet", "--replay", str(good)])
    replay = read_replay(good)
    replay["result"]["scores"][0] += 5
    bad = tmp_path / "bad.json"
    write_replay(bad, replay)
    capsys.readouterr()
    assert main(["verify", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: OK\n"
    assert main(["verify", str(good), str(bad), str(tmp_path / "missing.json")]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: FAILED\n  result differs" in out
    assert "missing.json: FAILED" in out


def test_replay_prints_every_step_from_one_seat(toy: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "m.json"
    main(["play", toy, "--seed", "3", "--quiet", "--replay", str(path)])
    replay = read_replay(path)
    capsys.readouterr()
    assert main(["replay", str(path), "--seat", "0", "--no-interactive"]) == 0
    out = capsys.readouterr().out
    steps = len(replay["steps"])
    assert out.count("step ") == steps + 1 and f"step {steps} / {steps}" in out
    assert "P0 greedy (you)" in out and "▒ ×3" in out and "Result" in out
    assert main(["replay", str(path), "--seat", "7", "--no-interactive"]) == 2


def test_replay_steps_on_commands(toy: str, tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "m.json"
    main(["play", toy, "--seed", "3", "--quiet", "--replay", str(path)])
    capsys.readouterr()
    commands = iter(["", "n", "p", "5", "zzz", "q"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(commands))
    assert main(["replay", str(path), "--step", "1"]) == 0
    shown = [
        line.split("step ")[1].split(" /")[0]
        for line in capsys.readouterr().out.splitlines()
        if " step " in line and " / " in line
    ]
    assert shown == ["1", "2", "3", "2", "5", "5"]


def test_games_lists_and_describes(toy: str, capsys) -> None:
    assert main(["games"]) == 0
    assert "toy-high-card" in capsys.readouterr().out
    assert main(["games", toy]) == 0
    out = capsys.readouterr().out
    assert "seeds/toy.md" in out and "1..20" in out and "deals=1, hand=1" in out
    assert main(["games", toy, "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["variants"]["duel"] == {"players": 2, "hand": 2}
    assert main(["games", "no-such-game"]) == 2


def test_console_script_plays_and_verifies(tmp_path: Path) -> None:
    path = tmp_path / "sk.json"
    play = subprocess.run(
        [
            ARENA,
            "play",
            "svoi-kozyri",
            "--players",
            "3",
            "--deals",
            "1",
            "--seed",
            "8",
            "--quiet",
            "--replay",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert play.returncode == 0, play.stderr
    assert "Result" in play.stdout
    check = subprocess.run(
        [ARENA, "verify", str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert (check.returncode, check.stdout) == (0, f"{path}: OK\n")
    listing = subprocess.run(
        [ARENA, "games", "--json"], capture_output=True, timeout=60, check=True
    )
    assert "svoi-kozyri" in orjson.loads(listing.stdout)


def test_replay_from_a_seat_hides_other_seats_secret_choices(tmp_path: Path, capsys) -> None:
    path = tmp_path / "tricks.json"
    main(
        [
            "play",
            "svoi-kozyri-tricks",
            "--seed",
            "3",
            "--param",
            "max_deals=2",
            "--quiet",
            "--replay",
            str(path),
        ]
    )
    chosen = [s for s in read_replay(path)["steps"] if s["action"]["type"] == "choose_trump"]
    assert chosen and all("suit" in s["action"] for s in chosen)
    capsys.readouterr()
    main(["replay", str(path), "--seat", "0", "--no-interactive"])
    seat_view = capsys.readouterr().out
    assert "P0 greedy: choose_trump suit=" in seat_view
    assert "P1 greedy: choose_trump\n" in seat_view
    assert "P1 greedy: choose_trump suit=" not in seat_view
    main(["replay", str(path), "--no-interactive"])
    assert "P1 greedy: choose_trump suit=" in capsys.readouterr().out


def test_deals_sets_each_games_match_length(capsys) -> None:
    assert main(["play", "kozyr-boys", "--deals", "6", "--seed", "2", "--quiet"]) == 0
    assert "6 deals" in capsys.readouterr().out
    assert main(["play", "svoi-kozyri-tricks", "--deals", "1", "--seed", "2", "--quiet"]) == 0
    assert "actions, 1 deal, seed" in capsys.readouterr().out
    assert main(["play", "svara", "--deals", "2", "--seed", "2", "--quiet"]) == 0
    assert "2 deals" in capsys.readouterr().out
    assert main(["play", "kozyr-boys", "--deals", "4"]) == 2
    assert "rounds of 3 deals" in capsys.readouterr().out


def test_the_commentary_shows_the_events_each_action_caused(capsys) -> None:
    assert main(["play", "svoi-kozyri-tricks", "--players", "3", "--seed", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = next(i for i, line in enumerate(lines) if "d0 P0" in line)
    assert not any("deal 0, dealer" in line for line in lines[first : first + 3])  # not repeated
    taken = [i for i, line in enumerate(lines) if line.strip().startswith("→ P")]
    assert len(taken) >= 12  # a whole deal of 12 tricks at least
    assert all(": play " in lines[i - 1] or "trump is" in lines[i - 1] for i in taken)
    assert all(lines[i].endswith("takes the trick") for i in taken)


def test_a_svara_deal_ends_with_its_showdown_and_winner_in_the_commentary(capsys) -> None:
    assert main(["play", "svara", "--seed", "1", "--deals", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = next(i for i, line in enumerate(lines) if "showdown:" in line)
    assert "wins the pot" in "\n".join(lines[shown : shown + 3])
    assert any(line.strip().startswith("everyone antes 10") for line in lines[shown:])


def test_play_makes_the_replay_folder_or_says_why_it_cannot(
    toy: str, tmp_path: Path, capsys
) -> None:
    made = tmp_path / "new" / "m.json"
    assert main(["play", toy, "--quiet", "--replay", str(made)]) == 0
    assert verify(read_replay(made)) == []
    (tmp_path / "file").write_text("")
    blocked = tmp_path / "file" / "m.json"
    capsys.readouterr()
    assert main(["play", toy, "--quiet", "--replay", str(blocked)]) == 2
    out = capsys.readouterr().out
    assert out == f"error: --replay {blocked}: cannot create {blocked.parent} (File exists)\n"


def _damaged(replay: dict, damage: str) -> dict:
    """``replay`` with one field broken the way a hand-edited or truncated file might be."""
    if damage == "seats":
        replay["seats"] = 3
    elif damage == "seed":
        replay["seed"] = "seven"
    elif damage == "step":
        replay["steps"][1] = 7
    elif damage == "step-seat":
        replay["steps"][0]["seat"] = None
    elif damage == "outcome":
        replay["outcome"] = []
    elif damage == "game":
        replay["game"]["colour"] = "red"
    return replay


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("seats", "'seats' must be a list"),
        ("outcome", "'outcome' must be objects"),
        ("seed", "'seed' must be an integer"),
        ("step", "step 1: not an object"),
        ("step-seat", "step 0: 'seat' and 'deal' must be integers"),
        ("game", "cannot rebuild the game 'toy-high-card'"),
    ],
)
def test_damaged_replays_get_one_clear_line(
    toy: str, tmp_path: Path, capsys, damage: str, message: str
) -> None:
    good = tmp_path / "good.json"
    main(["play", toy, "--seed", "2", "--quiet", "--replay", str(good)])
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(_damaged(orjson.loads(good.read_bytes()), damage)))
    capsys.readouterr()
    assert main(["replay", str(bad), "--no-interactive"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: ") and message in out and "Traceback" not in out
    assert main(["verify", str(bad)]) == 1
    assert message in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read (No such file or directory)"),
        (b"{broken", "not JSON"),
        (b"[1, 2]", "not a kozyri-arena-replay document"),
        (b"\x1f\x8b\x08\x00", "cannot read"),
    ],
)
def test_unreadable_replay_files_get_one_clear_line(
    tmp_path: Path, capsys, content: bytes | None, message: str
) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_bytes(content)
    assert main(["replay", str(path), "--no-interactive"]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"error: {path}: ") and message in out
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: FAILED\n  ") and message in out
    assert out.count(str(path)) == 1


@pytest.mark.parametrize("option", ["--delay", "--every"])
def test_negative_pacing_is_a_usage_error(toy: str, capsys, option: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["play", toy, option, "-1"])
    assert stopped.value.code == 2
    assert f"argument {option}: must not be negative, got -1" in capsys.readouterr().err
