"""Every kit language's sample: start-to-ready time and per-move time, under bwrap and Docker.

For each language of ``sandbox/languages.py`` whose sample folder is here (the others are
skipped, with the reason), in each isolating backend that runs here: the sample is built as an
upload is, then

- ready: milliseconds from ``spawn`` to the bot's ``ready`` answer to ``hello`` (the language's
  runtime start, the kit's start, the sandbox's start), a fresh bot each time;
- move: microseconds from writing a typical Svoi Kozyri request (a two-player match played out
  in-process; the bot gets seat 0's requests, whole or as deltas as its ``ready`` asked) to
  reading its answer: the kit's parse and answer plus the pipe, the same for every language.
  The referee and the bot share one core, as in a match.

Medians; the languages take turns in each round so a busy machine affects them alike. The
anchor is the Python sample (the reference kit; the first language measured if it has none):
each figure is also given as a ratio to the anchor's in the same backend. A move is given twice:
wall time (which on a busy machine is mostly waiting for the core) and the bot's CPU time per
move (its whole CPU time, less a start's, over the moves; this hardly depends on the load), the
kit's own cost. The runner image's size is printed when Docker was measured. The goals: every
language ready within 1 s and a move under 1 ms of CPU. The last line is
``languages=N slowest_ready_ms=.. slowest_move_ms=..`` (the move: CPU).

    .venv/bin/python bench/languages.py [--starts 5] [--moves 300] [--backend bwrap ...]
"""

from __future__ import annotations

import argparse
import os
import random
import select
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.bots import BotManifest, load_bot  # noqa: E402
from arena.checking import build  # noqa: E402
from arena.feed import ObservationFeed  # noqa: E402
from arena.games import make_game  # noqa: E402
from arena.games.base import State  # noqa: E402
from arena.protocol import FULL, Hello, Request, TimeInfo, encode  # noqa: E402
from sandbox import backend_class, get_sandbox  # noqa: E402
from sandbox.base import BotProcess, Limits, Sandbox  # noqa: E402
from sandbox.languages import LANGUAGES, Language  # noqa: E402
from sandbox.runtimes import list_languages  # noqa: E402

Move = tuple[float, float]
"""Median wall microseconds per move, bot CPU microseconds per move."""
Row = tuple[str, str, float, Move]
"""Backend, language, median ready ms, the move figures."""
LIMITS = Limits(memory_mb=512, processes=64)
"""The match runner's defaults."""
GAME = "svoi-kozyri"
READ_TIMEOUT_S = 60.0


def read_line(process: BotProcess, deadline: float) -> bytes:
    data = b""
    poller = select.poll()
    poller.register(process.stdout_fd, select.POLLIN)
    while not data.endswith(b"\n"):
        if not poller.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            raise RuntimeError("the bot did not answer in time")
        chunk = os.read(process.stdout_fd, 65536)
        if not chunk:
            raise RuntimeError(f"the bot ended: {os.read(process.stderr_fd, 4096)!r}")
        data += chunk
    return data


def hello_line() -> bytes:
    hello = Hello(GAME, 2, 0, {}, None, TimeInfo(10000, 1000, 30000), "bench")
    return encode(hello)


CPU = min(os.sched_getaffinity(0))
"""The core the referee and each bot share, as in a match (a move is a hand-off on one core)."""


def start(box: Sandbox, bot: BotManifest) -> tuple[BotProcess, float, str]:
    """A fresh bot past ``hello``: the process, milliseconds to ``ready``, the mode it asked."""
    began = time.perf_counter()
    process = box.spawn(bot.path, list(bot.run), LIMITS, cpu=CPU)
    os.write(process.stdin_fd, hello_line())
    ready = orjson.loads(read_line(process, time.monotonic() + READ_TIMEOUT_S))
    elapsed = (time.perf_counter() - began) * 1000
    return process, elapsed, str(ready.get("observations", FULL))


def requests(mode: str, count: int) -> Iterator[bytes]:
    """``count`` requests to seat 0 of two-player Svoi Kozyri matches, as the referee sends
    them in ``mode`` (seat 1 plays at random in-process)."""
    rng = random.Random(5)
    made, seed = 0, 0
    while True:
        game = make_game(GAME, 2)
        state, feed, seed = game.new_state(seed), ObservationFeed(mode), seed + 1
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.current_player() == 0:
                yield encode(request(state, feed, made + 1))
                made += 1
                if made == count:
                    return
            state.apply_action(rng.choice(legal))


def request(state: State, feed: ObservationFeed, number: int) -> Request:
    body = feed.message_body(state, 0)
    feed.commit()
    legal = [state.action_to_json(a) for a in state.legal_actions()]
    return Request(number, state.deal_index, body, legal, 30000, 1000, delta=feed.mode != FULL)


def move_us(box: Sandbox, bot: BotManifest, moves: int, start_cpu_ms: float) -> Move:
    """Median microseconds from a request written to its answer read, and the bot's CPU
    microseconds per move (its whole CPU time less a start's, over the moves)."""
    process, _, mode = start(box, bot)
    times = []
    try:
        for line in requests(mode, moves):
            began = time.perf_counter()
            os.write(process.stdin_fd, line)
            read_line(process, time.monotonic() + READ_TIMEOUT_S)
            times.append((time.perf_counter() - began) * 1e6)
    finally:
        process.close()
    cpu_us = max(0.0, process.usage().cpu_seconds * 1e6 - start_cpu_ms * 1000) / len(times)
    return statistics.median(times), cpu_us


def ready_ms(box: Sandbox, bot: BotManifest) -> tuple[float, float]:
    """Milliseconds to ``ready``, and the CPU milliseconds of the bot's start and end."""
    process, elapsed, _ = start(box, bot)
    process.close()
    return elapsed, process.usage().cpu_seconds * 1000


def prepared(box: Sandbox, backend: str, scratch: Path) -> dict[str, BotManifest]:
    """The built sample of every language ``backend`` can run (the rest said and skipped)."""
    ready = {s.id: s for s in list_languages(backend)}
    bots = {}
    for language in LANGUAGES:
        folder = ROOT / language.sample
        if not (folder / "bot.toml").is_file():
            print(f"# {backend} {language.id}: skipped, no sample at {language.sample}")
        elif not ready[language.id].available:
            print(f"# {backend} {language.id}: skipped, {ready[language.id].reason}")
        else:
            bots[language.id] = built(box, language, scratch / backend)
    return bots


def built(box: Sandbox, language: Language, scratch: Path) -> BotManifest:
    manifest = load_bot(ROOT / language.sample)
    if not manifest.build:
        return manifest
    source = scratch / f"{language.id}-source"
    shutil.copytree(manifest.path, source)
    log, why = build(box, load_bot(source), scratch / language.id, 300.0, slot=0)
    if why is not None:
        raise SystemExit(f"{language.id}: {why}\n{log}")
    return load_bot(scratch / language.id)


def image_size() -> str:
    from sandbox.docker import api_client, image_name

    size = api_client().inspect_image(image_name())["Size"]
    return f"{image_name()}: {size / 1e6:.0f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=5, help="fresh starts per language")
    parser.add_argument("--moves", type=int, default=300, help="requests per language")
    parser.add_argument("--backend", action="append", choices=["bwrap", "docker"])
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="arena-bench-langs-", dir="/tmp"))
    scratch.chmod(0o755)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {CPU})
    try:
        return measure(args, scratch)
    finally:
        os.sched_setaffinity(0, before)
        shutil.rmtree(scratch, ignore_errors=True)


def measure(args: argparse.Namespace, scratch: Path) -> int:
    rows: list[Row] = []
    for backend in args.backend or ["bwrap", "docker"]:
        reason = backend_class(backend).available()
        if reason is not None:
            print(f"# {backend}: skipped, {reason}")
            continue
        box = get_sandbox(backend)
        (scratch / backend).mkdir()
        (scratch / backend).chmod(0o755)
        bots = prepared(box, backend, scratch)
        starts: dict[str, list[tuple[float, float]]] = {name: [] for name in bots}
        for _ in range(args.starts):
            for name, bot in bots.items():
                starts[name].append(ready_ms(box, bot))
        for name, bot in bots.items():
            start_cpu = statistics.median(cpu for _, cpu in starts[name])
            move = move_us(box, bot, args.moves, start_cpu)
            rows.append((backend, name, statistics.median(ms for ms, _ in starts[name]), move))
        if backend == "docker" and bots:
            print(f"# runner image {image_size()}")
    report(rows)
    return 0


def report(rows: list[Row]) -> None:
    anchors: dict[str, Row] = {}
    for row in rows:
        if row[0] not in anchors or row[1] == "python":
            anchors[row[0]] = row
    print(f"{'backend':<7} {'language':<11} {'ready ms':>8} {'x anch':>6} "
          f"{'move us':>8} {'x anch':>6} {'cpu us':>7} {'x anch':>6}")  # fmt: skip
    for backend, name, ready, (move, cpu) in rows:
        _, _, a_ready, (a_move, a_cpu) = anchors[backend]
        cpu_ratio = cpu / max(a_cpu, 1.0)
        print(f"{backend:<7} {name:<11} {ready:>8.0f} {ready / a_ready:>6.2f} "
              f"{move:>8.0f} {move / a_move:>6.2f} {cpu:>7.0f} {cpu_ratio:>6.2f}")  # fmt: skip
    for backend, row in anchors.items():
        print(f"# {backend} anchor: {row[1]}; move us: wall, request to answer; cpu us: the bot's")
    names = {row[1] for row in rows}
    slowest_ready = max((row[2] for row in rows), default=0.0)
    slowest_move = max((row[3][1] for row in rows), default=0.0) / 1000
    print(f"languages={len(names)} slowest_ready_ms={slowest_ready:.0f} "
          f"slowest_move_ms={slowest_move:.2f}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
