"""The protocol self-test every new bot version passes before it plays a ranked match.

The server runs it on every upload and ``arena check`` runs it locally: one code for both.

The bot is started in the sandbox and fed the edge cases a real match can bring: a request with a
single legal action, a request with many, the end of a deal and the end of the match. Every answer
must come in time and be one of the legal actions offered.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.bots import flush_hint
from arena.connection import Connection, ReadEvent
from arena.feed import ObservationFeed
from arena.games import make_game
from arena.games.base import State
from arena.protocol import (
    DELTA,
    PROTOCOL_VERSION,
    ActionReply,
    DealEnd,
    Hello,
    MatchEnd,
    ProtocolError,
    Ready,
    Request,
    Shutdown,
    TimeInfo,
    decode_bot_message,
    encode,
)
from sandbox.base import BotCommandError, Limits, Sandbox, SandboxError

MAX_SCAN_STEPS = 400
"""How far into a greedy playout to look for positions with one and with many legal actions."""
SHUTDOWN_GRACE_S = 1.0
"""How long the bot gets to exit after ``shutdown`` before it is killed (not an error)."""


@dataclass
class SelfTestReport:
    """The self-test's verdict and a log its owner can read."""

    passed: bool = True
    lines: list[str] = field(default_factory=list)
    hint: str | None = None
    """The usual cause of the failure, when there is one (unflushed output, say)."""

    def note(self, text: str) -> None:
        self.lines.append(text)

    def fail(self, text: str) -> None:
        self.passed = False
        self.lines.append(f"FAILED: {text}")

    @property
    def log(self) -> str:
        return "\n".join(self.lines)


def _positions(game_name: str, seed: int) -> tuple[State, State | None]:
    """A position with several legal actions, and the first one found with exactly one (if any)."""
    game = make_game(game_name)
    state = game.new_state(seed)
    rng = random.Random(seed)
    many: State | None = None
    single: State | None = None
    for _ in range(MAX_SCAN_STEPS):
        if state.is_terminal() or (many is not None and single is not None):
            break
        legal = state.legal_actions()
        if len(legal) > 1 and many is None:
            many = state.clone()
        if len(legal) == 1 and single is None:
            single = state.clone()
        state.apply_action(game.greedy_action(state, rng))
    return (many or game.new_state(seed)), single


def _request(
    state: State, rid: int, only_first: bool, move_ms: int, feed: ObservationFeed
) -> tuple[Request, list[Any]]:
    seat = state.current_player()
    legal = state.legal_actions_json()
    if only_first:
        legal = legal[:1]
    request = Request(
        id=rid,
        deal=state.deal_index,
        observation=feed.message_body(state, seat),
        legal_actions=legal,
        time_left_ms=move_ms * 10,
        move_ms=move_ms,
        delta=feed.mode == DELTA,
    )
    feed.commit()  # if it is not delivered, the self-test fails there and goes no further
    return request, legal


class _Probe:
    """One bot process under test."""

    def __init__(
        self, conn: Connection, report: SelfTestReport, timeout: float, silent_hint: str
    ) -> None:
        self.conn = conn
        self.report = report
        self.timeout = timeout
        self.silent_hint = silent_hint
        self.answers = 0
        self.feed = ObservationFeed()
        """Observations as the bot asked for them in ``ready`` (whole until then)."""

    def exchange(self, message: Any, what: str) -> Any:
        """Send ``message`` and decode the answer; None (and a failure noted) if there is none."""
        deadline = time.perf_counter() + self.timeout
        if not self.conn.send(encode(message), deadline):
            self.report.fail(f"{what}: the bot stopped reading its input")
            return None
        started = time.perf_counter()
        event = self.conn.read_line(deadline, [])
        if event is not ReadEvent.LINE:
            self.report.fail(f"{what}: no answer ({event}) within {self.timeout:.1f}s")
            if event is ReadEvent.TIMEOUT and self.answers < 2:
                self.report.hint = self.silent_hint  # no ready, or no first answer
                self.report.note(f"hint: {self.silent_hint}")
            return None
        self.answers += 1
        try:
            answer = decode_bot_message(self.conn.lines.popleft())
        except ProtocolError as exc:
            self.report.fail(f"{what}: bad answer: {exc}")
            return None
        self.report.note(f"{what}: answered in {1000 * (time.perf_counter() - started):.0f} ms")
        return answer

    def tell(self, message: Any) -> bool:
        return self.conn.send(encode(message), time.perf_counter() + self.timeout)


def _check_action(answer: Any, legal: list[Any], what: str, report: SelfTestReport) -> None:
    if not isinstance(answer, ActionReply):
        report.fail(f"{what}: expected an action")
    elif answer.index is not None and not 0 <= answer.index < len(legal):
        report.fail(f"{what}: index {answer.index} is not among the {len(legal)} legal actions")
    elif answer.index is None and answer.action not in legal:
        report.fail(f"{what}: {answer.action} is not a legal action here")


def without_nul(text: str) -> str:
    """``text`` with NUL characters written ``\\x00`` (a database text field cannot hold one)."""
    return text.replace("\x00", "\\x00")


def run_selftest(
    sandbox: Sandbox,
    manifest: Any,
    game_name: str,
    *,
    timeout: float = 5.0,
    limits: Limits | None = None,
    slot: int = 0,
) -> SelfTestReport:
    """Start the bot and put it through the edge cases; never raises for a bot's misbehaviour.

    ``SandboxError`` (the sandbox itself failing, not the bot) propagates: the platform's fault;
    ``BotCommandError`` (the bot's command not found or not runnable) is the bot's, a failure.
    """
    report = SelfTestReport()
    try:
        process = sandbox.spawn(manifest.path, manifest.run, limits or Limits(), slot=slot)
    except BotCommandError as exc:  # its own command cannot start: a verdict on the bot
        report.fail(f"could not start {' '.join(manifest.run)}: {exc}")
        return report
    except SandboxError:
        raise
    except Exception as exc:  # the bot cannot even start: that is the verdict
        report.fail(f"could not start {' '.join(manifest.run)}: {exc}")
        return report
    conn = Connection(process)
    try:
        probe = _Probe(conn, report, timeout, flush_hint(manifest))
        _drive(probe, game_name, manifest.name)
    finally:
        if not report.passed:
            conn.drain_stderr_until_closed(0.5)  # the crash message, if the bot left one
        process.close()
        stderr = conn.stderr.text()
        if stderr:
            report.note("--- the bot's stderr ---\n" + without_nul(str(stderr)[-4000:]))
    return report


def _drive(probe: _Probe, game_name: str, name: str) -> None:
    report = probe.report
    many, single = _positions(game_name, seed=secrets.randbits(64))  # as the service's seeds
    game = many.game
    hello = Hello(
        game=game.name,
        players=game.players,
        seat=many.current_player(),
        params=dict(game.params),
        variant=game.variant,
        time=TimeInfo(init_ms=int(probe.timeout * 1000), move_ms=1000, bank_ms=10000),
        name=name,
    )
    ready = probe.exchange(hello, "hello")
    if not isinstance(ready, Ready):
        if ready is not None:
            report.fail("hello: the answer must be ready")
        return
    if ready.protocol != PROTOCOL_VERSION:
        report.fail(f"hello: the bot speaks protocol {ready.protocol}, not {PROTOCOL_VERSION}")
        return
    probe.feed = ObservationFeed(ready.observations)
    steps: list[tuple[str, Callable[[], None]]] = [
        ("request with many legal actions", lambda: _ask(probe, many, 1, False)),
        ("request with one legal action", lambda: _ask(probe, single or many, 2, single is None)),
    ]
    for _, step in steps:
        if report.passed:
            step()
    if report.passed:
        _endings(probe, many)


def _ask(probe: _Probe, state: State, rid: int, only_first: bool) -> None:
    request, legal = _request(state, rid, only_first, move_ms=1000, feed=probe.feed)
    what = f"request {rid} ({len(legal)} legal action{'s' if len(legal) != 1 else ''})"
    answer = probe.exchange(request, what)
    if answer is not None:
        _check_action(answer, legal, what, probe.report)


def _endings(probe: _Probe, state: State) -> None:
    seat = max(state.current_player(), 0)
    feed = probe.feed
    body = feed.message_body(state, seat)
    ok = probe.tell(DealEnd(deal=state.deal_index, observation=body, delta=feed.mode == DELTA))
    n = state.game.players
    result = {"ranking": [1] * n, "scores": [0.0] * n, "detail": {}}
    ok = ok and probe.tell(MatchEnd(result=result, place=1, status="ok"))
    if not ok:
        probe.report.fail("deal_end/match_end: the bot stopped reading its input")
        return
    if not probe.tell(Shutdown()):  # a bot may leave once it has its match_end: not an error
        probe.report.note("shutdown: the bot had already left after match_end")
    if probe.conn.wait_exit(time.perf_counter() + SHUTDOWN_GRACE_S):
        probe.report.note("deal_end, match_end, shutdown: the bot exited cleanly")
    else:
        probe.report.note("shutdown: the bot did not exit by itself (it is killed; not an error)")
