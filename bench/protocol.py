"""Per-move cost of the match runner with a trivial bot, against a raw pipe ping-pong floor.

Figures measured in one run, for the same moves and the same request lines, with the referee
and the bots on the cores the runner gives them (see below):

- engine: building each request in-process (legal actions, observation, encoding) and applying
  the action;
- floor: in that same in-process match, each request line sent to the same trivial bot over raw
  pipes (``os.write``, then ``poll`` + ``os.read`` until the answer line), timed alone; one bot
  process per seat, each on its seat's core, and the bench on seat 0's core, as the runner
  places its bots and the referee;
- runner exchange: inside ``arena.runner.run_match`` with that bot in every seat, the time from
  sending a request to holding the decoded answer (the step's ``time_ms``): the referee's
  protocol overhead, directly comparable with the floor;
- runner per move: the time between successive decisions in that match, everything included
  (engine, exchange, policing, replay recording);
- CPU per move: this process's CPU time per move in the runner pass against that of the
  in-process pass (engine and raw pipes): what the referee itself spends, which a busy machine
  hardly moves, where the times above include waiting for a core.

Freezing: the same match is also played under bubblewrap (where bots are frozen between their
turns, and each move ends only once the bot has really stopped, as in production) and under
bubblewrap with freezing off, in alternate passes; the whole per-move time of each, and
``freeze_ratio=<with freezing / without>`` (the median over rounds of each round's ratio of
medians), measure what freezing costs a move. Three more frozen passes split that cost:
``thaw_first_ratio``, the request written only after the thaw (as the referee once did),
``no_wait_ratio``, the next seat thawed without waiting for the last bot to be really frozen,
and ``refreeze_ratio``, every bot frozen as soon as its answer is read, also one that moves
again at once (as the referee once did; ``arena.referee.WRITE_BEFORE_THAW``,
``WAIT_FOR_FREEZE`` and ``KEEP_RUNNING_FOR_OWN_MOVE`` switched off for that pass). Two more
passes give the bot a stdin pipe instead of its Unix socket (``sandbox.bwrap.STDIN_SOCKET``
off), unfrozen and frozen: ``pipe_freeze_ratio`` is freezing's cost as it was with a pipe,
``socket_ratio`` the unfrozen move with the socket against the pipe, and
``frozen_over_pipe_ratio`` the frozen move now against the unfrozen one with a pipe;
``freeze_mean_over_pipe_ratio`` and ``pipe_freeze_mean_over_pipe_ratio`` compare mean moves
(frozen with the socket, frozen with a pipe, each over the unfrozen move with a pipe), which
the few long waits of a busy host weigh on and medians do not.
``--no-bwrap`` skips it. Each seat runs on a
core of its own where there are enough (as in production); ``--shared-core`` puts every seat
on one core, as on a host with fewer cores than seats.

Both observation modes are measured, in alternate passes: ``full`` (protocol v1's default,
every request carries the whole observation) and ``delta`` (the bot asks for deltas in its
``ready``). Each mode has its own floor: the same trivial bot, sent that mode's request lines
over raw pipes. The request lines' sizes (p50 and p99 bytes) are printed per mode.

The bot answers every request with index 0. Last line: ``ratio=<runner exchange / floor>``
(full mode), the median over rounds of each round's ratio of medians (a round's floor and
runner passes run back to back, so they share the machine's load even when it changes between
rounds); ``full_ratio`` and ``delta_full_ratio`` compare the whole per-move time of each mode
with its floor instead; ``request_p50_bytes`` is the median delta-mode request line
(``full_request_p50_bytes`` the full one's), and ``delta_ratio`` the delta mode's exchange
ratio.

    .venv/bin/python bench/protocol.py [--game svoi-kozyri] [--players 2] [--deals 6]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import arena.referee  # noqa: E402
import sandbox.bwrap  # noqa: E402
from arena.bots import load_bot  # noqa: E402
from arena.feed import ObservationFeed  # noqa: E402
from arena.games import make_game  # noqa: E402
from arena.games.base import Game, State  # noqa: E402
from arena.protocol import DELTA, FULL, Hello, Request, TimeInfo, encode  # noqa: E402
from arena.replay import Step  # noqa: E402
from arena.runner import TimeControl, run_match, seat_cores  # noqa: E402
from sandbox import get_sandbox  # noqa: E402
from sandbox.base import Sandbox  # noqa: E402
from sandbox.bwrap import BwrapSandbox  # noqa: E402

Times = list[float]

TRIVIAL_BOT = r"""
import os, sys
out = sys.stdout.buffer
ready = b'{"type":"ready","protocol":1,"observations":"%s"}\n' % sys.argv[1].encode()
for line in sys.stdin.buffer:
    if b'"type":"request"' in line[:40]:
        start = line.index(b'"id":') + 5
        end = line.index(b",", start)
        out.write(b'{"type":"action","id":' + line[start:end] + b',"index":0}\n')
        out.flush()
    elif line.startswith(b'{"type":"hello"'):
        out.write(ready)
        out.flush()
    elif line.startswith(b'{"type":"shutdown"'):
        break
"""


MODES = (FULL, DELTA)


def write_bot(folder: Path, mode: str) -> Path:
    """The trivial bot, asking for observations in ``mode``."""
    folder.mkdir()
    (folder / "bot.py").write_text(TRIVIAL_BOT)
    (folder / "bot.toml").write_text(
        'name = "index-zero"\ngames = ["svoi-kozyri", "challenge"]\n'
        f'language = "python"\nrun = ["python3", "bot.py", "{mode}"]\n'
    )
    return folder


def engine_and_floor(
    game: Game, seed: int, bot: Path, cores: list[int | None], mode: str
) -> tuple[Times, Times, list[int]]:
    """Play index 0 everywhere in-process, each request also sent to the bot over raw pipes.

    Returns the engine time per move (building the request as the referee does in ``mode``,
    applying the action), the raw round-trip time per move and the request lines' sizes. The
    engine work between round trips is the same as in the runner, so both see the same cache
    state. Each seat has a bot process of its own on ``cores[seat]``, and this process runs on
    seat 0's core, as the runner places the referee and the bots.
    """
    state = game.new_state(seed)
    feeds = [ObservationFeed(mode) for _ in range(game.players)]
    engine: Times = []
    floor: Times = []
    sizes: list[int] = []
    with contextlib.ExitStack() as stack:
        pipes = [stack.enter_context(raw_bot(bot, core, mode)) for core in cores]
        stack.enter_context(pinned(cores[0]))
        cpu = time.process_time()
        while not state.is_terminal():
            started = time.perf_counter()
            out_fd, in_fd = pipes[state.current_player()]
            line = request_line(state, len(engine) + 1, feeds)
            state.apply_action(state.legal_actions()[0])
            engine.append(time.perf_counter() - started)
            started = time.perf_counter()
            round_trip(out_fd, in_fd, line)
            floor.append(time.perf_counter() - started)
            sizes.append(len(line))
        CPU.setdefault(f"{mode} in-process", []).append((time.process_time() - cpu) / len(engine))
    return engine, floor, sizes


CPU: dict[str, list[float]] = {}
"""CPU seconds of this process per move, per pass: ``<mode> in-process`` (engine and raw
pipes, ``engine_and_floor``) and ``<mode> runner`` (the whole match in ``run_match``, bots
started and stopped included). Unlike the wall-clock figures, a busy machine hardly moves
them: they count what this process does, not how long it waits for a core."""


@contextmanager
def pinned(core: int | None) -> Iterator[None]:
    """This process on ``core`` (nowhere in particular if None) for the block."""
    before = os.sched_getaffinity(0)
    if core is not None:
        os.sched_setaffinity(0, {core})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def request_line(state: State, request_id: int, feeds: list[ObservationFeed]) -> bytes:
    legal = state.legal_actions()
    seat = state.current_player()
    feed = feeds[seat]
    request = Request(
        id=request_id,
        deal=state.deal_index,
        observation=feed.message_body(state, seat),
        legal_actions=[state.action_to_json(a) for a in legal],
        time_left_ms=30000,
        move_ms=1000,
        delta=feed.mode == DELTA,
    )
    feed.commit()
    return encode(request)


@contextmanager
def raw_bot(bot: Path, core: int | None, mode: str) -> Iterator[tuple[int, int]]:
    """The trivial bot as a bare subprocess on ``core``, past its hello; its (stdin, stdout).

    In a session of its own, as every sandbox starts a bot: where the kernel groups the tasks
    of a session for fair shares of a core (autogroups), a bot in the bench's own session
    would be woken within the bench's share, which no bot of the runner is.
    """
    proc = subprocess.Popen(
        ["/usr/bin/python3", "bot.py", mode],
        cwd=bot,
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        preexec_fn=None if core is None else lambda: os.sched_setaffinity(0, {core}),
    )
    assert proc.stdin and proc.stdout
    out_fd, in_fd = proc.stdin.fileno(), proc.stdout.fileno()
    hello = Hello("svoi-kozyri", 2, 0, {}, None, TimeInfo(1, 1, 1), "index-zero")
    try:
        round_trip(out_fd, in_fd, encode(hello))
        yield out_fd, in_fd
    finally:
        proc.kill()
        proc.wait()


def round_trip(out_fd: int, in_fd: int, line: bytes) -> bytes:
    view = memoryview(line)
    while view:
        view = view[os.write(out_fd, view) :]
    poller = select.poll()
    poller.register(in_fd, select.POLLIN)
    answer = b""
    while not answer.endswith(b"\n"):
        poller.poll(1000)
        answer += os.read(in_fd, 65536)
    return answer


OWN_CORES = True
"""Whether the runner gives each seat a core of its own (``--shared-core`` turns it off)."""


def runner_pass(
    game: Game,
    seed: int,
    bot: Path,
    pin: bool,
    sandbox: Sandbox | None = None,
    cpu_key: str | None = None,
) -> tuple[list[float], list[float]]:
    """Play the match through the runner; per-move times and exchange times, in seconds."""
    stamps: list[float] = []

    def on_step(state: State, step: Step) -> None:
        stamps.append(time.perf_counter())

    manifest = load_bot(bot)
    started = time.perf_counter()
    cpu = time.process_time()
    outcome = run_match(
        game,
        [manifest] * game.players,
        seed,
        sandbox=sandbox or get_sandbox("none"),
        time_control=TimeControl(),
        on_step=on_step,
        pin_cpu=pin,
        own_cores=OWN_CORES,
    )
    if cpu_key is not None:
        CPU.setdefault(cpu_key, []).append((time.process_time() - cpu) / len(stamps))
    stamps.insert(0, started)
    per_move = [b - a for a, b in itertools.pairwise(stamps)][1:]
    exchanges = [step["time_ms"] / 1000 for step in outcome.replay["steps"]]
    return per_move, exchanges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="svoi-kozyri")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--deals", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5, help="floor and runner passes, alternated")
    parser.add_argument("--no-pin", action="store_true", help="let the runner use every core")
    parser.add_argument("--no-bwrap", action="store_true", help="skip the freezing passes")
    parser.add_argument(
        "--shared-core", action="store_true", help="every seat on one core (as on a small host)"
    )
    args = parser.parse_args()
    global OWN_CORES
    OWN_CORES = not args.shared_core
    cores: list[int | None] = [None] * args.players
    if not args.no_pin:
        cores = seat_cores(args.players, OWN_CORES)
    game = make_game(args.game, players=args.players, params={"deals": args.deals})
    figures: dict[str, list[Times]] = {}
    sizes: dict[str, list[int]] = {}
    boxes = freezing_boxes(args.no_bwrap)
    with tempfile.TemporaryDirectory() as tmp:
        bots = {mode: write_bot(Path(tmp) / mode, mode) for mode in MODES}
        for _ in range(args.rounds):  # alternating passes share the same background load
            for mode in MODES:
                engine, floor, sizes[mode] = engine_and_floor(
                    game, args.seed, bots[mode], cores, mode
                )
                runner, exchange = runner_pass(
                    game, args.seed, bots[mode], not args.no_pin, cpu_key=f"{mode} runner"
                )
                passes = {"engine": engine, "floor": floor, "exchange": exchange, "runner": runner}
                for key, values in passes.items():
                    figures.setdefault(f"{mode} {key}", []).append(values)
            for key, box in boxes.items():
                arena.referee.WRITE_BEFORE_THAW = key != "bwrap-thaw-first"
                arena.referee.WAIT_FOR_FREEZE = key != "bwrap-no-wait"
                arena.referee.KEEP_RUNNING_FOR_OWN_MOVE = key != "bwrap-refreeze"
                sandbox.bwrap.STDIN_SOCKET = not key.endswith("-pipe")
                figures.setdefault(key, []).append(
                    runner_pass(game, args.seed, bots[FULL], not args.no_pin, box)[0]
                )
            arena.referee.WRITE_BEFORE_THAW = arena.referee.WAIT_FOR_FREEZE = True
            arena.referee.KEEP_RUNNING_FOR_OWN_MOVE = sandbox.bwrap.STDIN_SOCKET = True
    report(args, cores, figures, sizes, bool(boxes))


def report(
    args: argparse.Namespace,
    cores: list[int | None],
    figures: dict[str, list[Times]],
    sizes: dict[str, list[int]],
    frozen: bool,
) -> None:
    moves = len(figures["full floor"][0])
    print(f"{args.game}, {args.players} players, {args.deals} deals: {moves} moves x {args.rounds}")
    print(f"seat cores {cores}")
    medians = {
        key: statistics.median(statistics.median(v) for v in runs) for key, runs in figures.items()
    }
    labels = {
        "engine": "engine (no processes)",
        "floor": "floor (raw pipes)",
        "exchange": "runner exchange",
        "runner": "runner per move",
    }
    ratios: dict[str, float] = {}
    for mode in MODES:
        lines = sorted(sizes[mode])
        p50, p99 = lines[len(lines) // 2], lines[min(len(lines) - 1, len(lines) * 99 // 100)]
        print(f"{mode} observations: request lines p50 {p50} bytes, p99 {p99} bytes")
        for key, label in labels.items():
            print(f"  {label:24s}median {medians[f'{mode} {key}'] * 1e6:7.1f} us")
        paired = round_ratios(figures[f"{mode} exchange"], figures[f"{mode} floor"])
        print("  per-round exchange ratios " + " ".join(f"{r:.2f}" for r in paired))
        ratios[f"{mode} exchange"] = statistics.median(paired)
        ratios[f"{mode} move"] = medians[f"{mode} runner"] / medians[f"{mode} floor"]
        ratios[f"{mode} p50"] = p50
        in_process = statistics.median(CPU[f"{mode} in-process"])
        runner_cpu = statistics.median(CPU[f"{mode} runner"])
        print(f"  CPU per move: runner {runner_cpu * 1e6:.1f} us, engine and raw pipes "
              f"{in_process * 1e6:.1f} us, ratio {runner_cpu / in_process:.2f}")  # fmt: skip
        print(f"  {mode}: exchange ratio {ratios[f'{mode} exchange']:.2f}, "
              f"per move / floor {ratios[f'{mode} move']:.2f}")  # fmt: skip
    if frozen:
        print(f"{'bwrap, unfrozen, move':24s}median {medians['bwrap'] * 1e6:7.1f} us")
        print(f"{'bwrap, frozen, move':24s}median {medians['bwrap-frozen'] * 1e6:7.1f} us")
        print(f"{'  thawed, then written':24s}median {medians['bwrap-thaw-first'] * 1e6:7.1f} us")
        print(f"{'  without the wait':24s}median {medians['bwrap-no-wait'] * 1e6:7.1f} us")
        print(f"{'  refrozen for own move':24s}median {medians['bwrap-refreeze'] * 1e6:7.1f} us")
        print(f"{'stdin pipe, unfrozen':24s}median {medians['bwrap-pipe'] * 1e6:7.1f} us")
        print(f"{'stdin pipe, frozen':24s}median {medians['bwrap-frozen-pipe'] * 1e6:7.1f} us")
        variants = (
            ("bwrap-thaw-first", "thaw_first"),
            ("bwrap-no-wait", "no_wait"),
            ("bwrap-refreeze", "refreeze"),
        )
        for key, name in variants:
            variant = round_ratios(figures[key], figures["bwrap"])
            print(f"{name}_ratio={statistics.median(variant):.2f}")
        pipe = round_ratios(figures["bwrap-frozen-pipe"], figures["bwrap-pipe"])
        print(f"pipe_freeze_ratio={statistics.median(pipe):.2f}")
        socket = round_ratios(figures["bwrap"], figures["bwrap-pipe"])
        print(f"socket_ratio={statistics.median(socket):.2f}")
        against_pipe = round_ratios(figures["bwrap-frozen"], figures["bwrap-pipe"])
        print(f"frozen_over_pipe_ratio={statistics.median(against_pipe):.2f}")
        for key, name in (("bwrap-frozen", "freeze"), ("bwrap-frozen-pipe", "pipe_freeze")):
            means = round_ratios(figures[key], figures["bwrap-pipe"], statistics.fmean)
            print(f"{name}_mean_over_pipe_ratio={statistics.median(means):.2f}")
        freezing = round_ratios(figures["bwrap-frozen"], figures["bwrap"])
        print("freezing per-round ratios " + " ".join(f"{r:.2f}" for r in freezing))
        print(f"freeze_ratio={statistics.median(freezing):.2f}")
    print(
        f"ratio={ratios['full exchange']:.2f} full_ratio={ratios['full move']:.2f} "
        f"delta_full_ratio={ratios['delta move']:.2f} "
        f"request_p50_bytes={ratios['delta p50']:.0f} "
        f"full_request_p50_bytes={ratios['full p50']:.0f} "
        f"delta_ratio={ratios['delta exchange']:.2f}"
    )


def round_ratios(
    values: list[Times], anchors: list[Times], average: Callable[[Times], float] = statistics.median
) -> list[float]:
    """Each round's ratio of medians (or of ``average``)."""
    return [average(v) / average(a) for v, a in zip(values, anchors, strict=True)]


def freezing_boxes(skip: bool) -> dict[str, Sandbox]:
    """bubblewrap without and with freezing, if it runs here (else nothing, and why)."""
    if skip:
        return {}
    reason = BwrapSandbox.available()
    if reason is not None:
        print(f"# freezing not measured: {reason}")
        return {}
    frozen = BwrapSandbox()
    return {
        "bwrap": BwrapSandbox(freeze=False),
        "bwrap-frozen": frozen,
        "bwrap-thaw-first": frozen,
        "bwrap-no-wait": frozen,
        "bwrap-refreeze": frozen,
        "bwrap-pipe": BwrapSandbox(freeze=False),
        "bwrap-frozen-pipe": frozen,
    }


if __name__ == "__main__":
    main()
