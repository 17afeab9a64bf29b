"""The match runner against real bot processes: sample bots, misbehaving bots, time control."""

from __future__ import annotations

import io
import json
import os
import shutil
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from arena.bots import BotManifest, load_bot
from arena.cli.main import main
from arena.connection import MAX_UNREAD_BYTES, STDERR_LOG_BYTES, Connection
from arena.games import game_class, make_game, names
from arena.games.base import Result
from arena.protocol import MAX_DEBUG_CHARS, DealEnd, Request, encode
from arena.replay import apply_forfeits, read_replay, verify
from arena.runner import (
    FORFEITED,
    BuiltinBot,
    MatchOutcome,
    SeatStatus,
    TimeControl,
    run_match,
)
from sandbox import get_sandbox
from sandbox.base import Limits

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"
BROKEN = SAMPLES / "broken"
QUICK = TimeControl(init_s=2.0, move_s=0.2, bank_s=0.3, max_strikes=3)
NODE = shutil.which("node")


REPLAY_SCHEMA = Draft202012Validator(
    json.loads((ROOT / "docs" / "schemas" / "replay.json").read_text())
)


def processes_in(folder: Path) -> list[int]:
    """Pids of live processes whose working directory is ``folder`` (our bots' marker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def private_copy(folder: Path, tmp_path: Path) -> BotManifest:
    """A copy of a bot in its own folder, so its processes are told apart from other tests'."""
    return load_bot(shutil.copytree(folder, tmp_path / folder.name))


def assert_no_processes(folder: Path) -> None:
    deadline = time.monotonic() + 2.0
    while processes_in(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_in(folder) == []


def play(bots: list[BotManifest | BuiltinBot], game: str = "svoi-kozyri", seed: int = 3,
         tc: TimeControl = QUICK, **params: object) -> MatchOutcome:  # fmt: skip
    g = make_game(game, players=len(bots), params={"deals": 1, **params})
    return run_match(g, bots, seed, sandbox=get_sandbox("none"), time_control=tc)


def make_bot(tmp_path: Path, name: str, code: str) -> BotManifest:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "bot.toml").write_text(
        f'name = "{name}"\ngames = ["svoi-kozyri"]\nlanguage = "python"\n'
        'run = ["python3", "bot.py"]\n'
    )
    (folder / "bot.py").write_text(textwrap.dedent(code))
    return load_bot(folder)


@pytest.fixture(scope="module")
def greedy() -> BotManifest:
    return load_bot(SAMPLES / "python" / "svoi-kozyri-greedy")


BROKEN_CASES = [
    ("never-answers", SeatStatus.TIMEOUT, True),
    ("crash-mid-match", SeatStatus.CRASH, True),
    ("illegal-actions", SeatStatus.ILLEGAL_ACTION, True),
    ("garbage-output", SeatStatus.INVALID_OUTPUT, True),
    ("stdout-flood", SeatStatus.OUTPUT_FLOOD, True),
    ("stderr-flood", SeatStatus.OK, False),
    ("dies-during-init", SeatStatus.INIT_FAILURE, True),
    ("slow-init", SeatStatus.INIT_FAILURE, True),
]


@pytest.mark.parametrize(("fixture", "status", "forfeited"), BROKEN_CASES)
def test_misbehaving_bot_is_policed_and_match_finishes(
    greedy: BotManifest, fixture: str, status: SeatStatus, forfeited: bool, tmp_path: Path
) -> None:
    broken = private_copy(BROKEN / fixture, tmp_path)
    tc = TimeControl(init_s=1.0, move_s=0.2, bank_s=0.3, max_strikes=3)
    outcome = play([greedy, broken, greedy], tc=tc)
    report = outcome.seats[1]
    assert (report.status, report.forfeited) == (status, forfeited), report.message
    assert outcome.replay["outcome"]["status"][1] == status.value
    if forfeited:
        assert outcome.result.ranking[1] == 3
        played, ranked = outcome.game_result.ranking, outcome.result.ranking
        assert (ranked[0] < ranked[2]) == (played[0] < played[2])
        assert (ranked[0] == ranked[2]) == (played[0] == played[2])
        assert min(ranked[0], ranked[2]) == 1
    assert all(s.status is SeatStatus.OK for s in (outcome.seats[0], outcome.seats[2]))
    assert verify(outcome.replay) == []  # type: ignore[arg-type]
    REPLAY_SCHEMA.validate(outcome.replay)
    assert_no_processes(broken.path)


def test_strikes_then_forfeit_and_default_actions(greedy: BotManifest) -> None:
    outcome = play([greedy, load_bot(BROKEN / "illegal-actions"), greedy])
    steps = [s for s in outcome.replay["steps"] if s["seat"] == 1]
    statuses = [s["status"] for s in steps]
    assert statuses[:3] == ["illegal_action"] * 3
    assert set(statuses[3:]) <= {FORFEITED}
    assert outcome.seats[1].strikes == 3


def test_crash_dump_is_kept_in_the_replay(greedy: BotManifest) -> None:
    outcome = play([greedy, load_bot(BROKEN / "crash-mid-match"), greedy])
    crash = next(s for s in outcome.replay["steps"] if s["status"] == "crash")
    assert "deliberate crash" in crash["stderr"]
    assert "Traceback" in outcome.seats[1].stderr
    assert "return code 1" in (outcome.seats[1].message or "")
    assert outcome.seats[1].cpu_s is not None and outcome.seats[1].cpu_s > 0


def test_stderr_flood_is_capped_and_never_blocks(greedy: BotManifest) -> None:
    outcome = play([greedy, load_bot(BROKEN / "stderr-flood"), greedy])
    report = outcome.seats[1]
    assert report.strikes == 0
    assert STDERR_LOG_BYTES < len(report.stderr) < STDERR_LOG_BYTES + 100  # the cut, marked
    assert "more bytes of stderr not kept" in report.stderr
    excerpts = [s["stderr"] for s in outcome.replay["steps"] if s["seat"] == 1]
    assert all(e is not None and len(e) <= 2048 for e in excerpts)


def test_process_tree_is_killed_even_when_the_caller_raises(tmp_path: Path) -> None:
    never = private_copy(BROKEN / "never-answers", tmp_path)
    greedy = private_copy(SAMPLES / "python" / "svoi-kozyri-greedy", tmp_path)

    def explode(state: object, step: object) -> None:
        raise RuntimeError("viewer crashed")

    game = make_game("svoi-kozyri", players=3, params={"deals": 1})
    with pytest.raises(RuntimeError, match="viewer crashed"):
        run_match(game, [never, greedy, never], 1, sandbox=get_sandbox("none"),
                  time_control=QUICK, on_step=explode)  # fmt: skip
    assert_no_processes(never.path)
    assert_no_processes(greedy.path)


@pytest.mark.parametrize("game", ["svoi-kozyri", "challenge"])
def test_sample_bots_play_full_matches(game: str) -> None:
    kinds = ["random", "greedy", "heuristic"]
    bots = [load_bot(SAMPLES / "python" / f"{game}-{kind}") for kind in kinds]
    players = 3 if game == "svoi-kozyri" else 2
    outcome = play(bots[:players], game=game, deals=2)
    assert [s.status for s in outcome.seats] == [SeatStatus.OK] * players
    assert all(s.cpu_s is not None and s.cpu_s > 0 for s in outcome.seats)
    assert outcome.replay["steps"] and outcome.replay["result"]["ranking"]
    assert verify(outcome.replay) == []  # type: ignore[arg-type]
    if game == "challenge":
        heuristic_vs_greedy = play(bots[1:], game=game, deals=2)
        assert heuristic_vs_greedy.seats[1].status is SeatStatus.OK


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_javascript_bots_play() -> None:
    bots = [load_bot(SAMPLES / "js" / f"svoi-kozyri-{kind}") for kind in ("random", "greedy")]
    outcome = play([*bots, BuiltinBot("greedy")], deals=2)
    assert [s.status for s in outcome.seats] == [SeatStatus.OK] * 3
    assert [s.self_name for s in outcome.seats[:2]] == ["random-js", "greedy-js"]
    challenge = load_bot(SAMPLES / "js" / "challenge-random")
    outcome = play([challenge, BuiltinBot("greedy")], game="challenge", deals=2)
    assert outcome.seats[0].status is SeatStatus.OK and outcome.seats[0].self_name == "random-js"


SHORT_MATCH = {"deals": 1, "max_deals": 1, "rounds": 1}
"""Parameters that keep a match short (as few deals as allowed), where a game has them."""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("game", names())
def test_the_javascript_any_game_bot_plays_every_game(game: str) -> None:
    spec = game_class(game).spec
    short = [p for p in spec.params if p.name in SHORT_MATCH]
    params = {p.name: max(SHORT_MATCH[p.name], p.minimum or 0) for p in short}
    players = spec.min_players
    bot = load_bot(SAMPLES / "js" / "any-game-random")
    assert bot.plays(game)
    seats: list[BotManifest | BuiltinBot] = [bot, *[BuiltinBot("greedy")] * (players - 1)]
    g = make_game(game, players=players, params=params)
    outcome = run_match(g, seats, 5, sandbox=get_sandbox("none"), time_control=QUICK)
    assert outcome.seats[0].status is SeatStatus.OK, outcome.seats[0].message
    assert any(s["debug"] for s in outcome.replay["steps"] if s["seat"] == 0)
    again = run_match(g, seats, 5, sandbox=get_sandbox("none"), time_control=QUICK)
    assert again.replay["final_hash"] == outcome.replay["final_hash"]  # seeded: repeatable


def test_protocol_version_is_checked(tmp_path: Path, greedy: BotManifest) -> None:
    future = make_bot(tmp_path, "future", """
        import json, sys
        sys.stdin.readline()
        print(json.dumps({"type": "ready", "protocol": 2}), flush=True)
        sys.stdin.read()
    """)  # fmt: skip
    outcome = play([greedy, future])
    assert outcome.seats[1].status is SeatStatus.INIT_FAILURE
    assert "protocol 2" in (outcome.seats[1].message or "")


def test_an_unknown_observation_mode_fails_the_start_clearly(
    tmp_path: Path, greedy: BotManifest
) -> None:
    odd = make_bot(tmp_path, "odd", """
        import json, sys
        sys.stdin.readline()
        print(json.dumps({"type": "ready", "protocol": 1, "observations": "xml"}), flush=True)
        sys.stdin.read()
    """)  # fmt: skip
    outcome = play([greedy, odd])
    assert outcome.seats[1].status is SeatStatus.INIT_FAILURE
    assert outcome.seats[1].message == (
        "bad answer to hello: ready 'observations' must be 'full' or 'delta', got \"xml\""
    )
    assert outcome.seats[0].status is SeatStatus.OK


LAST_ACTION_BOT = """
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
        elif message["type"] == "request":
            last = len(message["legal_actions"]) - 1
            print(json.dumps({"type": "action", "id": message["id"], "index": last}), flush=True)
        elif message["type"] == "shutdown":
            break
"""


@pytest.mark.parametrize("game_name", ["svoi-kozyri", "svara"])
def test_a_v1_bot_gets_the_plain_encoding_byte_for_byte(tmp_path: Path, game_name: str) -> None:
    bot = make_bot(tmp_path, "last", LAST_ACTION_BOT)
    game = make_game(game_name, players=3, params={"deals": 3})
    logs = [io.BytesIO() for _ in range(3)]
    outcome = run_match(game, [bot] * 3, 4, sandbox=get_sandbox("none"), time_control=QUICK,
                        transcripts=dict(enumerate(logs)))  # fmt: skip
    assert [s.status for s in outcome.seats] == [SeatStatus.OK] * 3
    sent = [
        [line[3:] for line in log.getvalue().splitlines(keepends=True)
         if line.startswith((b'-> {"type":"request"', b'-> {"type":"deal_end"'))]
        for log in logs
    ]  # fmt: skip
    expected: list[list[bytes]] = [[], [], []]
    state = game.new_state(4)
    for step in outcome.replay["steps"]:
        seat, deal = step["seat"], state.deal_index
        line = json.loads(sent[seat][len(expected[seat])])  # the fields the clock decides
        expected[seat].append(encode(Request(line["id"], deal, state.observation(seat),
                                             state.legal_actions_json(), line["time_left_ms"],
                                             line["move_ms"])))  # fmt: skip
        state.apply_json(step["action"])
        if state.is_terminal() or state.deal_index != deal:
            for other in range(3):
                expected[other].append(encode(DealEnd(deal, state.observation(other))))
    assert sent == expected


def whole_observations(bot: BotManifest, tmp_path: Path) -> BotManifest:
    """A copy of a kit bot that asks for whole observations (the kit asks for deltas)."""
    folder = shutil.copytree(bot.path, tmp_path / f"{bot.path.name}-full")
    if bot.language == "python":
        (folder / "bot.py").rename(folder / "strategy.py")
        (folder / "bot.py").write_text(
            "import runpy, pathlib, kozyri_bot\n"
            "kozyri_bot.Bot.observations = 'full'\n"
            "runpy.run_path(str(pathlib.Path(__file__).with_name('strategy.py')), "
            "run_name='__main__')\n"
        )
    else:
        (folder / "bot.js").rename(folder / "strategy.js")
        (folder / "bot.js").write_text(
            'require("kozyri_bot").Bot.observations = "full";\nrequire("./strategy.js");\n'
        )
    return load_bot(folder)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_kit_bots_play_the_same_match_from_deltas_as_from_whole_observations(
    tmp_path: Path,
) -> None:
    kit_bots = [
        load_bot(SAMPLES / "python" / "svoi-kozyri-heuristic"),
        load_bot(SAMPLES / "js" / "svoi-kozyri-greedy"),
        load_bot(SAMPLES / "python" / "svoi-kozyri-random"),
    ]
    game = make_game("svoi-kozyri", players=3, params={"deals": 2})
    replays, lines = [], []
    for bots in (kit_bots, [whole_observations(b, tmp_path) for b in kit_bots]):
        logs = [io.BytesIO() for _ in bots]
        outcome = run_match(game, bots, 11, sandbox=get_sandbox("none"), time_control=QUICK,
                            transcripts=dict(enumerate(logs)))  # fmt: skip
        assert [s.status for s in outcome.seats] == [SeatStatus.OK] * 3
        replays.append(outcome.replay)
        lines.append([log.getvalue().splitlines() for log in logs])
    for delta_log, full_log in zip(*lines, strict=True):
        requests = [line for line in delta_log if line.startswith(b'-> {"type":"request"')]
        assert requests and all(b'"delta":' in r and b'"observation":' not in r for r in requests)
        assert all(b'"observation":' in r for r in full_log if b'"type":"request"' in r)
        assert sum(map(len, delta_log)) < sum(map(len, full_log)) / 2
    moves = [[(s["seat"], s["action"]) for s in replay["steps"]] for replay in replays]
    assert moves[0] == moves[1]
    assert replays[0]["final_hash"] == replays[1]["final_hash"]


def test_stale_answers_are_skipped_and_debug_is_recorded(
    tmp_path: Path, greedy: BotManifest
) -> None:
    # Every answer is preceded by one for an old request id: the runner must skip it.
    chatty = make_bot(tmp_path, "chatty", """
        import json, sys
        sys.stdin.readline()
        print(json.dumps({"type": "ready", "protocol": 1, "name": "chatty"}), flush=True)
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "request":
                print("thinking", file=sys.stderr, flush=True)
                print(json.dumps({"type": "action", "id": -1, "index": 99}))
                print(json.dumps({"type": "action", "id": msg["id"], "index": 0,
                                  "debug": "x" * 5000}), flush=True)
    """)  # fmt: skip
    outcome = play([greedy, chatty])
    assert outcome.seats[1].status is SeatStatus.OK
    assert outcome.seats[1].self_name == "chatty"
    mine = [s for s in outcome.replay["steps"] if s["seat"] == 1]
    assert mine and all(len(s["debug"]) == MAX_DEBUG_CHARS for s in mine)
    assert all(s["stderr"] == "thinking\n" for s in mine)


def test_time_bank_is_spent_then_moves_time_out(tmp_path: Path, greedy: BotManifest) -> None:
    slow = make_bot(tmp_path, "slow", """
        import json, sys, time
        sys.stdin.readline()
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "request":
                print(msg["time_left_ms"], file=sys.stderr, flush=True)
                time.sleep(0.15)
                print(json.dumps({"type": "action", "id": msg["id"], "index": 0}), flush=True)
    """)  # fmt: skip
    tc = TimeControl(init_s=2.0, move_s=0.1, bank_s=0.2, max_strikes=2)
    outcome = play([greedy, slow], tc=tc)
    report = outcome.seats[1]
    assert report.status is SeatStatus.TIMEOUT and report.forfeited
    banks = [int(s["stderr"]) for s in outcome.replay["steps"] if s["seat"] == 1 and s["stderr"]]
    assert banks[0] == 200 and banks == sorted(banks, reverse=True)


def test_no_timeouts_mode_waits_for_a_slow_bot(tmp_path: Path, greedy: BotManifest) -> None:
    slow = make_bot(tmp_path, "slow", """
        import json, sys, time
        sys.stdin.readline()
        time.sleep(0.3)
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "request":
                time.sleep(0.05)
                print(json.dumps({"type": "action", "id": msg["id"], "index": 0}), flush=True)
    """)  # fmt: skip
    tc = TimeControl(init_s=0.01, move_s=0.001, bank_s=0.0, timeouts=False)
    outcome = play([greedy, slow], tc=tc)
    assert outcome.seats[1].status is SeatStatus.OK and outcome.seats[1].strikes == 0


def test_error_notice_reaches_the_bot(tmp_path: Path, greedy: BotManifest) -> None:
    wrong_once = make_bot(tmp_path, "wrong-once", """
        import json, sys
        sys.stdin.readline()
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
        first = True
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] == "error":
                print("notice", msg["status"], msg["strikes"], file=sys.stderr, flush=True)
            if msg["type"] == "request":
                answer = {"index": 1000} if first else {"index": 0}
                first = False
                print(json.dumps({"type": "action", "id": msg["id"], **answer}), flush=True)
    """)  # fmt: skip
    outcome = play([greedy, wrong_once])
    report = outcome.seats[1]
    assert (report.status, report.strikes, report.forfeited) == (
        SeatStatus.ILLEGAL_ACTION, 1, False
    )  # fmt: skip
    assert "notice illegal_action 1" in report.stderr


def test_apply_forfeits_ranks_forfeited_seats_last() -> None:
    result = Result(ranking=(1, 2, 2, 4), scores=(3.0, 2.0, 2.0, 0.0))
    assert apply_forfeits(result, [True, False, False, False]).ranking == (4, 1, 1, 3)
    assert apply_forfeits(result, [False, False, True, True]).ranking == (1, 2, 3, 3)
    assert apply_forfeits(result, [False] * 4) == result


def test_arena_match_command_plays_and_saves_a_replay(tmp_path: Path) -> None:
    replay = tmp_path / "m.json"
    bots = [str(SAMPLES / "python" / f"svoi-kozyri-{k}") for k in ("greedy", "heuristic")]
    argv = ["match", "svoi-kozyri", *bots, "builtin:random", "--seed", "4", "--deals", "1"]
    argv += ["--sandbox", "none", "--replay", str(replay), "--quiet"]
    assert main(argv) == 0
    saved = read_replay(replay)
    assert saved["seed"] == 4 and len(saved["seats"]) == 3
    assert [s["kind"] for s in saved["seats"]] == ["bot", "bot", "builtin"]
    assert verify(saved) == []


def test_arena_match_keeps_each_bots_stderr_beside_the_replay(tmp_path: Path) -> None:
    replay = tmp_path / "m.json"
    crash = str(BROKEN / "crash-mid-match")
    argv = ["match", "svoi-kozyri", crash, "builtin:greedy", "--deals", "1", "--quiet"]
    forfeit = 4  # arena match's exit status when a seat forfeited
    assert main([*argv, "--sandbox", "none", "--replay", str(replay), "--no-build"]) == forfeit
    assert "deliberate crash" in (tmp_path / "m.seat0.log").read_text()
    assert not (tmp_path / "m.seat1.log").exists()


def test_arena_match_refuses_bad_input(tmp_path: Path) -> None:
    assert main(["match", "svoi-kozyri", str(tmp_path), "--sandbox", "none"]) == 2
    assert main(["match", "svoi-kozyri", "builtin:genius", "--sandbox", "none"]) == 2


def processes_running(marker: bytes) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


@pytest.mark.bwrap
def test_bots_play_and_die_under_bubblewrap(greedy: BotManifest, tmp_path: Path) -> None:
    from sandbox import SandboxUnavailable

    try:
        sandbox = get_sandbox("bwrap")
    except (SandboxUnavailable, ImportError) as exc:
        pytest.skip(f"bubblewrap unavailable: {exc}")
    never = private_copy(BROKEN / "never-answers", tmp_path)
    marker = f"time.sleep({600 + os.getpid() % 1000}.5)"  # this test's own sleeping child
    code = (never.path / "bot.py").read_text().replace("time.sleep(600)", marker)
    (never.path / "bot.py").write_text(code)
    bots: list[BotManifest | BuiltinBot] = [greedy, never]
    if NODE is not None:
        bots.append(load_bot(SAMPLES / "js" / "svoi-kozyri-greedy"))
    game = make_game("svoi-kozyri", players=len(bots), params={"deals": 1})
    outcome = run_match(game, bots, 2, sandbox=sandbox, time_control=QUICK)
    assert [s.status for s in outcome.seats] == [
        SeatStatus.OK, SeatStatus.TIMEOUT, *[SeatStatus.OK] * (len(bots) - 2)
    ]  # fmt: skip
    deadline = time.monotonic() + 2.0
    while processes_running(marker.encode()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_running(marker.encode()) == []


def test_a_bot_that_never_reads_cannot_stall_the_referee(tmp_path: Path) -> None:
    deaf = make_bot(tmp_path, "deaf", """
        import json, time
        print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
        while True:  # answers on its own rhythm and never reads a byte of its input
            print(json.dumps({"type": "action", "index": 0}), flush=True)
            time.sleep(0.002)
    """)  # fmt: skip
    greedy_builtin = BuiltinBot("greedy")
    tc = TimeControl(init_s=2.0, move_s=0.001, bank_s=0.0, timeouts=False)
    started = time.monotonic()
    outcome = play([greedy_builtin, deaf], tc=tc, deals=40)
    assert time.monotonic() - started < 30
    report = outcome.seats[1]
    assert report.status is SeatStatus.TIMEOUT and report.forfeited
    assert report.message is not None and "does not read its input" in report.message
    assert_no_processes(deaf.path)


def test_writes_to_a_bot_never_block(tmp_path: Path) -> None:
    bot = make_bot(tmp_path, "sleeper", "import time\ntime.sleep(30)\n")
    process = get_sandbox("none").spawn(bot.path, bot.run, Limits(), slot=0)
    conn = Connection(process)
    line = b"x" * 4095 + b"\n"
    try:
        started = time.monotonic()
        sent = [conn.send(line) for _ in range(MAX_UNREAD_BYTES // len(line) + 32)]
        assert time.monotonic() - started < 1.0
        assert sent[0] and not sent[-1] and conn.stalled and not conn.gone
        assert len(conn.outbox) <= MAX_UNREAD_BYTES
    finally:
        process.close()
    assert_no_processes(bot.path)


def test_a_bot_that_moves_again_at_once_is_not_frozen_in_between(
    greedy: BotManifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The referee's requests to freeze and thaw are watched at its connections (the ``none``
    # sandbox then does nothing, but the referee asks all the same).
    events: list[tuple[str, int]] = []
    conns: list[Connection] = []
    init, thaw, freeze = Connection.__init__, Connection.thaw, Connection.freeze

    def watched_init(conn: Connection, *args: object, **kwargs: object) -> None:
        init(conn, *args, **kwargs)  # type: ignore[arg-type]
        conns.append(conn)

    def watched(kind: str, real: Callable[[Connection], None]) -> Callable[[Connection], None]:
        def call(conn: Connection) -> None:
            events.append((kind, conns.index(conn)))
            real(conn)

        return call

    monkeypatch.setattr(Connection, "__init__", watched_init)
    monkeypatch.setattr(Connection, "thaw", watched("thaw", thaw))
    monkeypatch.setattr(Connection, "freeze", watched("freeze", freeze))
    outcome = play([greedy, greedy])
    steps = outcome.replay["steps"]
    thaws = [i for i, event in enumerate(events) if event[0] == "thaw"]
    again_seen = 0
    for k, step in enumerate(steps):  # each step's thaw is the k-th; freezes follow the answer
        nxt = steps[k + 1] if k + 1 < len(steps) else None
        again = nxt is not None and (nxt["seat"], nxt["deal"]) == (step["seat"], step["deal"])
        between = events[thaws[k] + 1 : thaws[k + 1] if nxt is not None else len(events)]
        assert between.count(("freeze", step["seat"])) == (0 if again else 1), (k, between)
        again_seen += again
    assert again_seen > 10  # Svoi Kozyri: a seat often moves twice in a row
    for seat in outcome.seats:  # the time between such moves was on the bot's clock
        thought = sum(s["time_ms"] for s in steps if s["seat"] == outcome.seats.index(seat))
        assert seat.think_s > thought / 1000
