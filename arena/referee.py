"""The referee: plays one match between bot processes and polices every answer.

Time rule: every move has a free allowance of ``move_s``; time beyond it is drawn from the seat's
match bank, and a move times out once it has used its allowance and the whole remaining bank. The
bank left is sent with every request.

Failure rule: on a timeout, an illegal action, invalid output or an output flood the game's
``default_action()`` is played and the seat gets a strike; ``max_strikes`` strikes forfeit the
match, as do a crash or an init failure at once. A forfeited seat's process is killed, its later
turns are played with the default action, and it is ranked last.

Freezing rule: a bot's processes are frozen (``BotProcess.freeze``) from the moment its ``ready``
or its answer arrives until its next request has been written (it finds the request waiting as
it thaws), so no bot runs on another one's time; all are thawed at the match's end to read
``shutdown``. A move ends only when the bot has really stopped: the time until then is on its
clock, and a bot still running ``FREEZE_WAIT_S`` after its answer (a long system call begun just
before it) gets a strike as for a timeout, though its move stands. A bot whose clean answer is
followed at once by its own next request (the same seat moves again in the same deal) is not
frozen in between: no other bot runs meanwhile, and the time from its answer to that request is
on its clock.

``arena.runner.run_match`` is the entry point; this module holds the rules it applies.
"""

from __future__ import annotations

import enum
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from arena import __version__
from arena.agents import get_agent
from arena.bots import BotManifest
from arena.connection import Connection, ReadEvent, Transcript
from arena.feed import ObservationFeed
from arena.games.base import Action, Game, Result, State
from arena.protocol import (
    DELTA,
    PROTOCOL_VERSION,
    ActionReply,
    BotError,
    DealEnd,
    Encoded,
    ErrorNotice,
    Hello,
    LineTooLong,
    MatchEnd,
    ProtocolError,
    Ready,
    Request,
    Shutdown,
    TimeInfo,
    decode_bot_message,
    encode,
)
from arena.remote_seat import RemoteSeat, Turn, labels
from arena.replay import Outcome, ReplayRecorder, SeatInfo, Step, apply_forfeits
from sandbox.base import Limits, Sandbox, SandboxError

JSON = dict[str, Any]

SHUTDOWN_GRACE_S = 0.5
"""How long bots get to exit on their own after ``shutdown`` before they are killed."""
CRASH_GRACE_S = 0.2
"""How long a crashed bot's stderr is still collected (its crash dump)."""
FREEZE_WAIT_S = 1.0
"""How long after its answer a bot may take to stop (its processes to be really frozen)."""
WAIT_FOR_FREEZE = True
"""False only in tests, to show what the wait closes: the next seat then moves while the last
one may still run on the match's core."""
KEEP_RUNNING_FOR_OWN_MOVE = True
"""False only in ``bench/protocol.py``, to measure what not freezing a bot that moves again at
once saves (every bot is then frozen as soon as its answer is read, as the referee once did)."""
WRITE_BEFORE_THAW = True
"""False only in ``bench/protocol.py``, to measure what writing a request before the thaw
saves (the bot then wakes from the freezer and blocks again on its empty stdin)."""


class SeatStatus(enum.StrEnum):
    """How a seat behaved: ``ok`` or the failure that earned its last strike or its forfeit."""

    OK = "ok"
    TIMEOUT = "timeout"
    CRASH = "crash"
    ILLEGAL_ACTION = "illegal_action"
    INVALID_OUTPUT = "invalid_output"
    OUTPUT_FLOOD = "output_flood"
    INIT_FAILURE = "init_failure"


FORFEITED = "forfeited"
"""Replay step status of a turn played by default for a seat that has forfeited."""

_FATAL = (SeatStatus.CRASH, SeatStatus.INIT_FAILURE)


@dataclass(frozen=True)
class TimeControl:
    """Time limits of a match, in seconds (see the module docstring for the rule)."""

    init_s: float = 10.0
    move_s: float = 1.0
    bank_s: float = 30.0
    max_strikes: int = 3
    timeouts: bool = True

    def info(self) -> TimeInfo:
        return TimeInfo(
            init_ms=round(self.init_s * 1000),
            move_ms=round(self.move_s * 1000),
            bank_ms=round(self.bank_s * 1000),
            timeouts=self.timeouts,
        )


@dataclass(frozen=True)
class BuiltinBot:
    """An in-process agent from ``arena.agents`` taking a seat (``random`` or ``greedy``)."""

    agent: str

    @property
    def name(self) -> str:
        return f"builtin:{self.agent}"


Entrant = BotManifest | BuiltinBot
Seated = Entrant | RemoteSeat
"""Whatever may take a seat: a bot, a built-in agent, or a remote seat (a person)."""


@dataclass(frozen=True)
class SeatReport:
    """How one seat fared: status, strikes, time and CPU used, its stderr log."""

    name: str
    kind: str
    status: SeatStatus
    forfeited: bool
    strikes: int
    message: str | None
    think_s: float
    bank_left_s: float
    cpu_s: float | None
    self_name: str | None
    stderr: str


@dataclass(frozen=True)
class MatchOutcome:
    """A finished match: the result with forfeits applied, per-seat reports and the replay."""

    result: Result
    game_result: Result
    seats: list[SeatReport]
    replay: JSON

    @property
    def steps(self) -> int:
        return len(self.replay["steps"])


@dataclass(frozen=True)
class _Stopping:
    """The bot that moved last, frozen at ``answered`` but maybe not stopped yet."""

    seat: Seat
    answered: float
    elapsed: float
    """Seconds of the move already charged to it."""


StepCallback = Callable[[State, Step], None]
"""Called after each decision is applied, with the state and the step as the replay has it, once
the step's status is final (see ``Referee.play``)."""


@dataclass
class Seat:
    index: int
    entrant: Seated
    bank_s: float
    conn: Connection | None = None
    status: SeatStatus = SeatStatus.OK
    message: str | None = None
    strikes: int = 0
    forfeited: bool = False
    closed: bool = False
    think_s: float = 0.0
    cpu_s: float | None = None
    returncode: int | None = None
    self_name: str | None = None
    rng: random.Random = field(default_factory=random.Random)
    feed: ObservationFeed = field(default_factory=ObservationFeed)
    """What the bot has been sent of its observations (whole, unless it asked for deltas)."""

    @property
    def live(self) -> bool:
        return self.conn is not None and not self.forfeited and not self.closed


class Referee:
    """The match loop: asks the seat to move, polices the answer, records the step."""

    def __init__(
        self,
        game: Game,
        bots: list[Seated],
        seed: int,
        sandbox: Sandbox,
        tc: TimeControl,
        limits: Limits | None,
        transcripts: Mapping[int, BinaryIO] | None = None,
    ) -> None:
        self.game, self.seed, self.sandbox, self.tc = game, seed, sandbox, tc
        self.limits = limits or Limits()
        self.transcripts = dict(transcripts or {})
        self.seats = [
            Seat(i, bot, _bank(bot, tc), rng=random.Random(f"{seed}:{i}"))
            for i, bot in enumerate(bots)
        ]
        self.state = game.new_state(seed)
        self.recorder = ReplayRecorder(game.config(), seed, [_seat_info(b) for b in bots])
        self.request_id = 0
        self._others_cache: dict[int, list[Connection]] = {}
        self._encoded_actions: dict[Action, Encoded] = {}
        self._stopping: _Stopping | None = None
        self._answered: _Stopping | None = None
        """The bot that has just answered, not frozen yet (``_freeze_unless_next``)."""
        self._unreported: Step | None = None
        """The last step, told to ``_on_step`` once the bot that made it has stopped."""
        self._on_step: StepCallback | None = None

    # --- start and stop -----------------------------------------------------------------------

    def start(self, cores: Sequence[int | None], slot_base: int) -> None:
        """Start every bot process (seat ``i`` on ``cores[i]``), send ``hello`` and collect
        each ``ready``."""
        for seat in self.seats:
            if isinstance(seat.entrant, BotManifest):
                self._spawn(seat, seat.entrant, cores[seat.index], slot_base)
        deadline = None if not self.tc.timeouts else time.perf_counter() + self.tc.init_s
        for seat in self.seats:
            if seat.live:
                self._await_ready(seat, deadline)

    def _spawn(self, seat: Seat, bot: BotManifest, cpu: int | None, slot_base: int) -> None:
        try:
            process = self.sandbox.spawn(
                bot.path, bot.run, self.limits, slot=slot_base + seat.index, cpu=cpu
            )
        except SandboxError as exc:
            self._forfeit(seat, SeatStatus.INIT_FAILURE, f"could not start: {exc}")
            return
        sink = self.transcripts.get(seat.index)
        seat.conn = Connection(process, transcript=Transcript(sink) if sink else None)
        seat.conn.apart = cpu is not None and cpu not in os.sched_getaffinity(0)
        hello = Hello(
            game=self.game.name,
            players=self.game.players,
            seat=seat.index,
            params=dict(self.game.params),
            variant=self.game.variant,
            time=self.tc.info(),
            name=bot.name,
        )
        if not seat.conn.send(encode(hello)):
            self._forfeit(seat, SeatStatus.INIT_FAILURE, "exited before reading hello")

    def _await_ready(self, seat: Seat, deadline: float | None) -> None:
        assert seat.conn is not None
        event = seat.conn.read_line(deadline, self._others(seat))
        seat.conn.freeze()  # ready (or not): nothing to do until its first request
        if WAIT_FOR_FREEZE:  # every bot ran at once so far: no strike, but none runs on
            seat.conn.wait_frozen(time.perf_counter() + FREEZE_WAIT_S)
        if event is not ReadEvent.LINE:
            self._forfeit(seat, SeatStatus.INIT_FAILURE, f"no ready after hello ({event})")
            return
        try:
            msg = decode_bot_message(seat.conn.lines.popleft())
        except ProtocolError as exc:
            self._forfeit(seat, SeatStatus.INIT_FAILURE, f"bad answer to hello: {exc}")
            return
        if not isinstance(msg, Ready):
            self._forfeit(seat, SeatStatus.INIT_FAILURE, "the answer to hello must be ready")
        elif msg.protocol != PROTOCOL_VERSION:
            problem = f"bot speaks protocol {msg.protocol}, the referee {PROTOCOL_VERSION}"
            self._forfeit(seat, SeatStatus.INIT_FAILURE, problem)
        else:
            seat.self_name = msg.name
            seat.feed = ObservationFeed(msg.observations)

    def close_all(self) -> None:
        """Say goodbye to every live bot, then kill every process tree; never raises."""
        live = [s for s in self.seats if s.live]
        pending, self._stopping = self._stopping, None
        if pending is not None and pending.seat.live:  # no bot thawed while another runs
            assert pending.seat.conn is not None
            pending.seat.conn.wait_frozen(pending.answered + FREEZE_WAIT_S)
        deadline = time.perf_counter() + SHUTDOWN_GRACE_S
        for seat in live:
            assert seat.conn is not None
            seat.conn.thaw()  # the match is over: each bot may read its last messages and exit
            seat.conn.send(encode(Shutdown()))
        for seat in self.seats:
            if seat.conn is not None:
                if seat.live:
                    seat.conn.wait_exit(deadline)
                self._close(seat)

    def _close(self, seat: Seat) -> None:
        if seat.conn is None or seat.closed:
            return
        seat.closed = True
        self._others_cache.clear()
        try:
            if seat.conn.stderr_open:
                seat.conn.drain_stderr()
            seat.conn.process.close()
            usage = seat.conn.process.usage()
            seat.cpu_s, seat.returncode = usage.cpu_seconds, usage.returncode
        except Exception as exc:  # cleanup must go on for the other seats
            seat.message = seat.message or f"cleanup failed: {exc}"
            seat.cpu_s = 0.0
        finally:
            seat.conn.detach()

    # --- the match loop -----------------------------------------------------------------------

    def play(self, on_step: StepCallback | None) -> MatchOutcome:
        """Play the match to its end. ``on_step`` hears of each step once its status is final:
        a bot's move is reported only after the referee has seen the bot stop (or struck it
        for running on), so that nobody watching is told a move was clean that is not."""
        state = self.state
        self._on_step = on_step
        while not state.is_terminal():
            deal = state.deal_index
            seat = self.seats[state.current_player()]
            action, step = self._turn(seat, deal)
            state.apply_action(action)
            self._freeze_unless_next(deal)
            self.recorder.steps.append(step)
            self._unreported = step
            if state.is_terminal() or state.deal_index != deal:
                self._broadcast_deal_end(deal)
        self._report_step()  # nothing strikes the last move (``close_all`` waits)
        return self._outcome()

    def _before_move(self, seat: Seat) -> None:
        """The verdict on the last move (``_settle``), then its report, before ``seat`` moves."""
        self._settle(seat)
        self._report_step()

    def _report_step(self) -> None:
        step, self._unreported = self._unreported, None
        if step is not None and self._on_step is not None:
            self._on_step(self.state, step)

    def _turn(self, seat: Seat, deal: int) -> tuple[Action, Step]:
        if isinstance(seat.entrant, BuiltinBot):
            self._before_move(seat)
            return self._builtin_turn(seat, seat.entrant, deal)
        if isinstance(seat.entrant, RemoteSeat) and not seat.forfeited:
            self._before_move(seat)  # the person sees every move before theirs
            return self._remote_turn(seat, seat.entrant, deal)
        if not seat.live:
            self._before_move(seat)
            action = self.state.default_action()
            wire = self.state.action_to_json(action)
            return action, _step(seat.index, wire, deal, None, FORFEITED)
        return self._bot_turn(seat, deal)

    def _builtin_turn(self, seat: Seat, bot: BuiltinBot, deal: int) -> tuple[Action, Step]:
        started = time.perf_counter()
        action = get_agent(bot.agent)(self.state, seat.rng)
        ms = (time.perf_counter() - started) * 1000
        wire = self.state.action_to_json(action)
        return action, _step(seat.index, wire, deal, round(ms, 3), SeatStatus.OK)

    def _remote_turn(self, seat: Seat, remote: RemoteSeat, deal: int) -> tuple[Action, Step]:
        """Ask a remote seat (``arena.remote_seat``) and police its answer like a bot's."""
        state = self.state
        legal = state.legal_actions()
        legal_json = [state.action_to_json(a) for a in legal]
        self.request_id += 1
        turn = Turn(
            seat=seat.index,
            request_id=self.request_id,
            step=len(self.recorder.steps),
            deal=deal,
            observation=state.observation(seat.index),
            legal_actions=legal_json,
            labels=labels(legal_json),
            time_left_ms=round(seat.bank_s * 1000),
            move_ms=round(remote.move_s * 1000),
            strikes=seat.strikes,
            max_strikes=self.tc.max_strikes,
            wait_s=remote.move_s + seat.bank_s,
        )
        started = time.perf_counter()
        index = remote.ask(turn)
        elapsed = time.perf_counter() - started
        seat.think_s += elapsed
        seat.bank_s = max(0.0, seat.bank_s - max(0.0, elapsed - remote.move_s))
        if index is not None and 0 <= index < len(legal):
            action, status = legal[index], SeatStatus.OK
        else:
            action = state.default_action()
            status = SeatStatus.TIMEOUT if index is None else SeatStatus.ILLEGAL_ACTION
            self._penalise(seat, status, "no answer in time" if index is None else "no such action")
        wire = state.action_to_json(action)
        return action, _step(seat.index, wire, deal, round(elapsed * 1000, 3), status)

    def _bot_turn(self, seat: Seat, deal: int) -> tuple[Action, Step]:
        assert seat.conn is not None
        state = self.state
        legal = state.legal_actions()
        legal_json = self._legal_json(state, legal)
        self.request_id += 1
        feed = seat.feed
        request = encode(Request(
            id=self.request_id,
            deal=deal,
            observation=feed.message_body(state, seat.index),
            legal_actions=legal_json,
            time_left_ms=round(seat.bank_s * 1000),
            move_ms=round(self.tc.move_s * 1000),
            delta=feed.mode == DELTA,
        ))  # fmt: skip
        # Only now, with the request ready, wait for the bot that moved last to have stopped:
        # it had the building of the request to get there.
        self._before_move(seat)
        if not seat.live:  # cannot happen today (only another seat is struck): be safe
            return self._turn(seat, deal)
        # Written while the bot is still frozen: it finds the request waiting as it thaws, so
        # its wake-up from the freezer and its read are one. The bot's clock starts once its
        # request is ready, as ever (the write is on it), and the thaw is not on it.
        if self._answered is not None:
            self._charge_unfrozen(seat, time.perf_counter())
        if WRITE_BEFORE_THAW:
            ready = time.perf_counter()
            sent = seat.conn.send(request)
            thawing = time.perf_counter()
            seat.conn.thaw()
            started = ready + (time.perf_counter() - thawing)
        else:
            seat.conn.thaw()
            started = time.perf_counter()
            sent = seat.conn.send(request)
        deadline = started + self.tc.move_s + seat.bank_s if self.tc.timeouts else None
        reply, status, message = self._exchange(seat, sent, deadline)
        elapsed = time.perf_counter() - started
        if sent:  # the bot has it: its next delta builds on this observation
            seat.feed.commit()
        self._charge(seat, elapsed)
        self._answered = _Stopping(seat, time.perf_counter(), elapsed)
        if not KEEP_RUNNING_FOR_OWN_MOVE:
            self._freeze_answered()  # at once, as any other (the bench's comparison)
        action: Action | None = None
        if reply is not None:
            action, status, message = _resolve(state, reply, legal)
        if action is None:
            self._freeze_answered()  # a failure: frozen at once, whoever moves next
            action = state.default_action()
            self._penalise(seat, status, message or status.value)
        debug = reply.debug if reply is not None else None
        seat.conn.drain_waiting_stderr()  # what the bot logged before answering is there now
        excerpt = seat.conn.stderr.take_step_excerpt()
        wire = state.action_to_json(action)
        step = _step(seat.index, wire, deal, round(elapsed * 1000, 3), status, debug, excerpt)
        return action, step

    def _freeze_unless_next(self, deal: int) -> None:
        """After the move is applied: freeze the bot that answered, unless it moves again at
        once (same deal): then it runs on into its next request, on its own clock."""
        answered = self._answered
        if answered is None:
            return
        state = self.state
        if (
            KEEP_RUNNING_FOR_OWN_MOVE
            and not state.is_terminal()
            and state.deal_index == deal
            and state.current_player() == answered.seat.index
        ):
            return  # charged at its next request (``_charge_unfrozen``)
        self._freeze_answered()

    def _freeze_answered(self) -> None:
        """Freeze the bot that has just answered (not its turn any more); the next seat waits
        until it has stopped (``_settle``)."""
        answered, self._answered = self._answered, None
        if answered is None or not answered.seat.live:
            return
        assert answered.seat.conn is not None
        answered.seat.conn.freeze()
        if WAIT_FOR_FREEZE:
            self._stopping = answered

    def _charge_unfrozen(self, seat: Seat, ready: float) -> None:
        """A bot left running since its last answer (it moves again at once): that time is on
        its clock, as part of its last move."""
        answered, self._answered = self._answered, None
        if answered is not None and answered.seat is seat:
            self._charge(seat, ready - answered.answered, before=answered.elapsed)

    def _legal_json(self, state: State, legal: list[Action]) -> list[Any]:
        """The wire forms of ``legal``: encoded once per match where the game allows it."""
        if not state.fixed_action_json:
            return [state.action_to_json(a) for a in legal]
        known = self._encoded_actions
        for action in legal:
            if action not in known:
                known[action] = Encoded(orjson.dumps(state.action_to_json(action)))
        return [known[a] for a in legal]

    def _settle(self, next_seat: Seat) -> None:
        """Before ``next_seat`` is thawed: wait until the bot that moved last has really
        stopped, so that nothing of it runs on another seat's time.

        The freeze was asked for at its answer and usually took effect while the referee
        worked; a bot that was still running then has its move last until it stopped (on its
        clock), and one still running ``FREEZE_WAIT_S`` after its answer gets a strike.
        """
        pending, self._stopping = self._stopping, None
        if pending is None or pending.seat is next_seat or not pending.seat.live:
            return
        conn = pending.seat.conn
        assert conn is not None
        if conn.process.is_frozen():
            return
        stopped = conn.wait_frozen(pending.answered + FREEZE_WAIT_S)
        late = time.perf_counter() - pending.answered
        self._charge(pending.seat, late, before=pending.elapsed)
        if not stopped and self.tc.timeouts:
            message = f"still running {FREEZE_WAIT_S:g} s after its answer (did not stop)"
            self._mark_last_step(pending.seat, SeatStatus.TIMEOUT)
            self._penalise(pending.seat, SeatStatus.TIMEOUT, message)

    def _mark_last_step(self, seat: Seat, status: SeatStatus) -> None:
        """Give ``seat``'s last recorded step ``status`` (its move stands)."""
        for step in reversed(self.recorder.steps):
            if step["seat"] == seat.index:
                step["status"] = status.value
                return

    def _charge(self, seat: Seat, elapsed: float, before: float = 0.0) -> None:
        """Charge ``elapsed`` more seconds of one move to ``seat`` (``before`` already were)."""
        seat.think_s += elapsed
        over = max(0.0, before + elapsed - self.tc.move_s) - max(0.0, before - self.tc.move_s)
        seat.bank_s = max(0.0, seat.bank_s - over)

    def _exchange(
        self, seat: Seat, sent: bool, deadline: float | None
    ) -> tuple[ActionReply | None, SeatStatus, str | None]:
        """Wait for the answer to the request just sent (``sent``: whether the bot could take
        it); stale answers to older requests are skipped."""
        conn = seat.conn
        assert conn is not None
        if not sent:
            if conn.stalled:
                unread = f"{len(conn.outbox)} bytes of earlier messages still unread"
                return None, SeatStatus.TIMEOUT, f"does not read its input ({unread})"
            return None, SeatStatus.CRASH, self._crash_message(seat)
        while True:
            event = conn.read_line(deadline, self._others(seat))
            if event is ReadEvent.TIMEOUT:
                return None, SeatStatus.TIMEOUT, "no answer in time"
            if event is ReadEvent.EOF:
                return None, SeatStatus.CRASH, self._crash_message(seat)
            if event is ReadEvent.FLOOD:
                return None, SeatStatus.OUTPUT_FLOOD, "output flood (line too long or too many)"
            try:
                msg = decode_bot_message(conn.lines.popleft())
            except LineTooLong as exc:
                return None, SeatStatus.OUTPUT_FLOOD, str(exc)
            except ProtocolError as exc:
                return None, SeatStatus.INVALID_OUTPUT, str(exc)
            if type(msg) is ActionReply:
                if msg.id is None or msg.id == self.request_id:
                    return msg, SeatStatus.OK, None
                continue  # a late answer to an older request
            if isinstance(msg, BotError):
                if msg.id not in (None, self.request_id):
                    continue
                return None, SeatStatus.INVALID_OUTPUT, f"bot reported an error: {msg.message}"
            return None, SeatStatus.INVALID_OUTPUT, "ready sent in answer to a request"

    def _crash_message(self, seat: Seat) -> str:
        """Collect a crashed bot's last stderr, reap it, and say how it ended."""
        assert seat.conn is not None
        seat.conn.drain_stderr_until_closed(CRASH_GRACE_S)
        self._close(seat)  # reaping here keeps the bot's final CPU use and return code
        return f"the bot's stdout closed (return code {seat.returncode})"

    def _penalise(self, seat: Seat, status: SeatStatus, message: str) -> None:
        if status in _FATAL:
            self._forfeit(seat, status, message)
            return
        seat.strikes += 1
        seat.status, seat.message = status, message
        if seat.strikes >= self.tc.max_strikes:
            self._forfeit(
                seat, status, f"{message}; strike {seat.strikes} of {self.tc.max_strikes}"
            )
            return
        if seat.conn is None:  # a remote seat: its next turn says how many strikes it has
            return
        notice = ErrorNotice(
            self.request_id, status.value, message, seat.strikes, self.tc.max_strikes
        )
        self._tell(seat, encode(notice))

    def _forfeit(self, seat: Seat, status: SeatStatus, message: str) -> None:
        seat.status, seat.message, seat.forfeited = status, message, True
        if seat.conn is not None:
            self._close(seat)

    def _tell(self, seat: Seat, data: bytes) -> bool:
        """Send a message that needs no answer; a bot whose stdin is gone has crashed.

        A stalled bot (one that reads nothing) misses the message; its next request says so.
        True if the message was sent.
        """
        assert seat.conn is not None
        if seat.conn.send(data):
            return True
        if seat.conn.gone:
            self._forfeit(seat, SeatStatus.CRASH, self._crash_message(seat))
        return False

    def _broadcast_deal_end(self, deal: int) -> None:
        for seat in self.seats:
            if seat.live:
                feed = seat.feed
                body = feed.message_body(self.state, seat.index)
                if self._tell(seat, encode(DealEnd(deal, body, feed.mode == DELTA))):
                    feed.commit()

    def _others(self, seat: Seat) -> list[Connection]:
        """The other live bots (whose stderr is drained while ``seat`` thinks); cached per seat."""
        cached = self._others_cache.get(seat.index)
        if cached is None:
            cached = [s.conn for s in self.seats if s is not seat and s.live and s.conn is not None]
            self._others_cache[seat.index] = cached
        return cached

    # --- the outcome --------------------------------------------------------------------------

    def _outcome(self) -> MatchOutcome:
        game_result = self.state.result()
        forfeited = [s.forfeited for s in self.seats]
        result = apply_forfeits(game_result, forfeited)
        for seat in self.seats:
            if seat.live:
                end = MatchEnd(result.to_json(), result.ranking[seat.index], seat.status.value)
                assert (
                    seat.conn is not None
                )  # the result is final: a bot gone by now is not faulted
                seat.conn.send(encode(end))
        self.close_all()
        return MatchOutcome(result, game_result, [self._report(s) for s in self.seats],
                            self._replay())  # fmt: skip

    def _report(self, seat: Seat) -> SeatReport:
        conn = seat.conn
        return SeatReport(
            name=seat.entrant.name,
            kind=_kind(seat.entrant),
            status=seat.status,
            forfeited=seat.forfeited,
            strikes=seat.strikes,
            message=seat.message,
            think_s=seat.think_s,
            bank_left_s=seat.bank_s,
            cpu_s=seat.cpu_s,
            self_name=seat.self_name,
            stderr=conn.stderr.text() if conn is not None else "",
        )

    def _replay(self) -> JSON:
        outcome = Outcome(
            status=[s.status.value for s in self.seats],
            forfeited=[s.forfeited for s in self.seats],
            strikes=[s.strikes for s in self.seats],
        )
        replay: JSON = {**self.recorder.finish(self.state, outcome)}
        return replay


def _kind(entrant: Seated) -> str:
    if isinstance(entrant, BuiltinBot):
        return "builtin"
    return "human" if isinstance(entrant, RemoteSeat) else "bot"


def _bank(entrant: Seated, tc: TimeControl) -> float:
    """A seat's time bank at the start: a remote seat's own, else the match's."""
    return entrant.bank_s if isinstance(entrant, RemoteSeat) else tc.bank_s


def _seat_info(entrant: Seated) -> SeatInfo:
    if isinstance(entrant, BuiltinBot):
        return SeatInfo(name=entrant.name, kind="builtin", version=__version__)
    if isinstance(entrant, RemoteSeat):
        return SeatInfo(name=entrant.name, kind="human", version=None)
    return SeatInfo(name=entrant.name, kind="bot", version=entrant.version)


def _step(
    seat: int,
    action: JSON,
    deal: int,
    time_ms: float | None,
    status: str,
    debug: str | None = None,
    stderr: str | None = None,
) -> Step:
    return Step(
        seat=seat,
        action=action,
        deal=deal,
        time_ms=time_ms,
        status=str(status),
        debug=debug,
        stderr=stderr,
    )


def _resolve(
    state: State, reply: ActionReply, legal: list[Action]
) -> tuple[Action | None, SeatStatus, str | None]:
    """The engine action a reply names, or why it names none that is legal."""
    if reply.index is not None:
        if 0 <= reply.index < len(legal):
            return legal[reply.index], SeatStatus.OK, None
        return None, SeatStatus.ILLEGAL_ACTION, f"index {reply.index} out of 0..{len(legal) - 1}"
    try:
        action = state.action_from_json(reply.action)
    except Exception as exc:  # a game's parser may raise anything on hostile input
        return None, SeatStatus.ILLEGAL_ACTION, f"unreadable action {reply.action!r}: {exc}"
    if action not in legal:
        return None, SeatStatus.ILLEGAL_ACTION, f"{reply.action!r} is not legal now"
    return action, SeatStatus.OK, None
