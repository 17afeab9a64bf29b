"""The referee's end of one bot's pipes: bounded writes, line reads with deadlines, stderr capture.

Nothing a bot does here can block the referee: every fd is non-blocking, every wait has a deadline
(unless timeouts are off), stdout lines are length-capped, and stderr is always drained into a
capped log while the referee waits on any bot.
"""

from __future__ import annotations

import enum
import errno
import fcntl
import os
import select
import time
from collections import deque
from dataclasses import dataclass, field
from typing import BinaryIO

from arena.protocol import MAX_LINE_BYTES, LineReader, LineTooLong
from sandbox.base import BotProcess

STDERR_LOG_BYTES = 1 << 20
"""stderr kept per seat for the whole match, 1 MiB (the first part; the rest is counted, not
kept, and the cut is marked in the text)."""

STDERR_STEP_BYTES = 2048
"""stderr kept per step in the replay (the last part written since the seat's previous step)."""

MAX_QUEUED_LINES = 64
"""Complete lines a bot may have waiting unanswered; more is an output flood."""

MAX_UNREAD_BYTES = 1 << 20
"""Bytes the referee queues for a bot that is not reading its stdin; beyond that it is stalled."""

FROZEN_SPIN_S = 300e-6
"""How long ``wait_frozen`` checks without sleeping (a bot usually stops within microseconds;
a sleep costs at least the timer slack, 50 µs)."""
FROZEN_SPIN_APART_S = 1e-3
"""The same for a bot on another core than the referee's: its checks do not yield (a yield
would give the referee's core away to any other task for a whole time slice), and the bot may
have to wait for its own core a little longer on a busy host."""
FROZEN_POLL_FIRST_S = 20e-6
FROZEN_POLL_MAX_S = 1e-3
"""How often ``wait_frozen`` looks again after that: first after 20 µs, backing off to 1 ms."""

_READ_CHUNK = 1 << 16
_STDOUT_CHUNK = 1 << 12
"""Answers are short: a small read buffer is cheaper to allocate, and long lines still arrive."""


class ReadEvent(enum.StrEnum):
    """Why ``Connection.read_line`` returned without a line."""

    LINE = "line"
    TIMEOUT = "timeout"
    EOF = "eof"
    FLOOD = "flood"


@dataclass
class StderrLog:
    """A seat's stderr: a capped whole-match log plus the text since its last step."""

    total_cap: int = STDERR_LOG_BYTES
    step_cap: int = STDERR_STEP_BYTES
    kept: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    recent: deque[bytes] = field(default_factory=deque)
    recent_size: int = 0

    def add(self, data: bytes) -> None:
        room = self.total_cap - len(self.kept)
        self.kept += data[:room]
        self.dropped += max(0, len(data) - room)
        self.recent.append(data[-self.step_cap :])
        self.recent_size += min(len(data), self.step_cap)
        while self.recent_size - len(self.recent[0]) >= self.step_cap:
            self.recent_size -= len(self.recent.popleft())

    def take_step_excerpt(self) -> str | None:
        """The last ``step_cap`` bytes written since the previous call, or None."""
        if not self.recent:
            return None
        data = b"".join(self.recent)[-self.step_cap :]
        self.recent.clear()
        self.recent_size = 0
        return data.decode("utf-8", "replace")

    def text(self) -> str:
        tail = f"\n[... {self.dropped} more bytes of stderr not kept]" if self.dropped else ""
        return self.kept.decode("utf-8", "replace") + tail


def _set_nonblocking(fd: int) -> None:
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)


def _ms_until(deadline: float | None) -> int | None:
    """poll() timeout for ``deadline`` (None waits forever)."""
    if deadline is None:
        return None
    return max(0, int((deadline - time.perf_counter()) * 1000) + 1)


class Transcript:
    """A seat's conversation, one line per message: ``->`` from the referee, ``<-`` from the bot."""

    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink

    def sent(self, data: bytes) -> None:
        self.sink.write(b"-> " + data)

    def received(self, line: bytes) -> None:
        self.sink.write(b"<- " + line + b"\n")


class Connection:
    """One bot process seen from the referee."""

    def __init__(
        self,
        process: BotProcess,
        stderr_log: StderrLog | None = None,
        transcript: Transcript | None = None,
    ) -> None:
        self.process = process
        self.stderr = stderr_log or StderrLog()
        self.transcript = transcript
        self.reader = LineReader(MAX_LINE_BYTES)
        self.lines: deque[bytes] = deque()
        self.outbox = bytearray()
        self.gone = False
        self.stalled = False
        self.stdout_open = True
        self.stderr_open = True
        self.detached = False
        self.apart = False
        """True when the bot runs on a core the referee does not (set by the referee)."""
        self._stderr_seen = False
        """True when the last line came from a wait that also looked at this bot's stderr (and
        drained whatever it held): ``drain_waiting_stderr`` need not look again."""
        self._poll_cache: tuple[list[Connection], select.poll, dict[int, Connection]] | None = None
        self._stderr_poll = select.poll()
        self._stderr_poll.register(process.stderr_fd, select.POLLIN)
        for fd in (process.stdin_fd, process.stdout_fd, process.stderr_fd):
            _set_nonblocking(fd)

    # --- freezing -----------------------------------------------------------------------------

    def freeze(self) -> None:
        """Stop every process of the bot: it is not its turn (nothing once it is closed).

        What is sent meanwhile waits in the pipe (or ``outbox``) until the bot runs again.
        """
        if not self.detached:
            self.process.freeze()

    def thaw(self) -> None:
        """Let the bot run again, just before its next request is written."""
        if not self.detached:
            self.process.thaw()

    def wait_frozen(self, deadline: float) -> bool:
        """Wait until every process of the frozen bot has really stopped; False at ``deadline``.

        A freeze takes effect as each task leaves the kernel: one inside a long system call
        keeps its core meanwhile. The first checks only yield the core (the usual wait: the
        bot's tasks have to be scheduled once), or, for a bot on another core (``apart``), do
        not even that; later ones sleep, backing off to a millisecond.
        """
        if self.detached:
            return True
        process = self.process
        apart = self.apart
        spin_until = time.perf_counter() + (FROZEN_SPIN_APART_S if apart else FROZEN_SPIN_S)
        while not process.is_frozen():
            if time.perf_counter() >= spin_until:
                return self._wait_frozen_slowly(deadline)
            if not apart:
                os.sched_yield()  # the bot shares this core: let it run to its stop
        return True

    def _wait_frozen_slowly(self, deadline: float) -> bool:
        """``wait_frozen`` past its first checks: sleeps, from 20 µs backing off to 1 ms."""
        pause = FROZEN_POLL_FIRST_S
        while not self.process.is_frozen():
            now = time.perf_counter()
            if now >= deadline:
                return False
            time.sleep(min(pause, deadline - now))
            pause = min(2 * pause, FROZEN_POLL_MAX_S)
        return True

    # --- writing ------------------------------------------------------------------------------

    def send(self, data: bytes, deadline: float | None = None) -> bool:
        """Write ``data`` to the bot without ever blocking; False if the bot cannot take it.

        What the pipe cannot take now waits in ``outbox`` and is written while the referee
        waits on this bot (``read_line``), so a bot that stops reading its stdin never stalls
        the referee, even without timeouts. False when the bot's stdin is gone (``gone``) or
        it has left more than ``MAX_UNREAD_BYTES`` unread (``stalled``; ``data`` is dropped).
        ``deadline`` is accepted for older callers and not needed: no write ever waits.
        """
        if self.gone:
            return False
        if self.outbox:
            if len(self.outbox) + len(data) > MAX_UNREAD_BYTES:
                self.stalled = True
                return False
            self.outbox += data
            accepted = self.flush()
        else:
            accepted = self._write_now(data)
        if accepted:
            self.stalled = False
            if self.transcript is not None:
                self.transcript.sent(data)
        return accepted

    def _write_now(self, data: bytes) -> bool:
        """Write what the pipe takes of ``data`` and queue the rest; False if the bot is gone."""
        try:
            written = os.write(self.process.stdin_fd, data)
        except BlockingIOError:
            written = 0
        except OSError:  # EPIPE and friends: the bot has closed its stdin or died
            self.gone = True
            return False
        if written < len(data):
            self.outbox += data[written:]
        return True

    def flush(self) -> bool:
        """Write what the pipe takes now of the queued output; False once the bot is gone."""
        while self.outbox:
            try:
                written = os.write(self.process.stdin_fd, self.outbox)
            except BlockingIOError:
                return True
            except OSError:
                self.gone = True
                self.outbox.clear()
                return False
            del self.outbox[:written]
        return True

    # --- reading ------------------------------------------------------------------------------

    def read_line(self, deadline: float | None, others: list[Connection]) -> ReadEvent:
        """Wait for a complete stdout line (then in ``self.lines``), draining every stderr.

        ``others`` are the other bots whose stderr is drained meanwhile.
        """
        self._stderr_seen = False
        if self.lines:
            return ReadEvent.LINE
        if not self.stdout_open:
            return ReadEvent.EOF
        if self.outbox and not self.gone:
            return self._read_while_writing(deadline, others)
        # No first look at stdout alone: the answer is seldom there yet (the bot has just been
        # woken), and that extra poll cost more than it saved (docs/benchmarks.md).
        poller, owners = self._poller(others)
        return self._wait_line(deadline, poller, owners)

    def _read_while_writing(self, deadline: float | None, others: list[Connection]) -> ReadEvent:
        """``read_line`` while output waits in ``outbox``: write the rest as the bot reads."""
        poller, owners = self._poller(others)
        stdin_fd = self.process.stdin_fd
        poller.register(stdin_fd, select.POLLOUT)
        owners[stdin_fd] = self
        try:
            return self._wait_line(deadline, poller, owners)
        finally:
            if owners.pop(stdin_fd, None) is not None:
                poller.unregister(stdin_fd)

    def _wait_line(
        self, deadline: float | None, poller: select.poll, owners: dict[int, Connection]
    ) -> ReadEvent:
        """Poll until stdout gives an event; every stderr reported by the same poll is drained
        first, so what a bot logged before its answer is in hand with the answer."""
        stdout_fd = self.process.stdout_fd
        while True:
            timeout = _ms_until(deadline)
            event: ReadEvent | None = None
            for fd, _ in poller.poll(timeout):
                if fd == stdout_fd:
                    event = self._read_stdout()
                else:
                    self._on_readable(fd, owners, poller)
            if event is not None:
                self._stderr_seen = owners.get(self.process.stderr_fd) is self
                return event
            if deadline is not None and time.perf_counter() >= deadline:
                return ReadEvent.TIMEOUT

    def _poller(self, others: list[Connection]) -> tuple[select.poll, dict[int, Connection]]:
        """A poller on this bot's stdout and every open stderr, reused while nothing changes.

        The cache is keyed by the identity of ``others`` (kept alive by the cache itself), so a
        caller that passes the same list object each time pays nothing here.
        """
        cache = self._poll_cache
        if cache is not None and cache[0] is others:
            return cache[1], cache[2]
        poller = select.poll()
        owners: dict[int, Connection] = {}
        if self.stdout_open:
            poller.register(self.process.stdout_fd, select.POLLIN)
            owners[self.process.stdout_fd] = self
        for conn in [self, *others]:
            if conn.stderr_open:
                poller.register(conn.process.stderr_fd, select.POLLIN)
                owners[conn.process.stderr_fd] = conn
        self._poll_cache = (others, poller, owners)
        return poller, owners

    def _on_readable(self, fd: int, owners: dict[int, Connection], poller: select.poll) -> None:
        """A stderr to drain or, while writing, room in this bot's stdin."""
        if fd == self.process.stdin_fd:
            if not self.flush() or not self.outbox:
                poller.unregister(fd)
                del owners[fd]
        elif not owners[fd].drain_stderr():
            self._forget(fd, owners, poller)

    def _forget(self, fd: int, owners: dict[int, Connection], poller: select.poll) -> None:
        """Stop polling a closed pipe; the cached poller no longer fits the table."""
        poller.unregister(fd)
        del owners[fd]
        self._poll_cache = None

    def _read_stdout(self) -> ReadEvent | None:
        try:
            data = os.read(self.process.stdout_fd, _STDOUT_CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        if not data:
            self.stdout_open = False
            self._poll_cache = None  # the poller watches a closed pipe
            return ReadEvent.EOF
        if data.find(b"\n") == len(data) - 1 and not self.reader.pending and not self.lines:
            return self._one_line(data)  # the usual case: exactly one whole answer
        try:
            for line in self.reader.feed(data):
                if line and not line.isspace():
                    self.lines.append(line)
                    if self.transcript is not None:
                        self.transcript.received(line)
        except LineTooLong:
            self.reset_output()
            return ReadEvent.FLOOD
        if len(self.lines) > MAX_QUEUED_LINES:
            self.reset_output()
            return ReadEvent.FLOOD
        return ReadEvent.LINE if self.lines else None

    def _one_line(self, data: bytes) -> ReadEvent | None:
        """``data`` is one complete line (newline last) and nothing else is buffered."""
        if len(data) > MAX_LINE_BYTES + 1:
            self.reset_output()
            return ReadEvent.FLOOD
        line = data[:-1].rstrip(b"\r")
        if not line or line.isspace():
            return None
        self.lines.append(line)
        if self.transcript is not None:
            self.transcript.received(line)
        return ReadEvent.LINE

    def reset_output(self) -> None:
        """Forget buffered stdout (after a flood) and whatever is waiting in the pipe."""
        self.lines.clear()
        self.reader = LineReader(MAX_LINE_BYTES)
        for _ in range(64):
            try:
                if not os.read(self.process.stdout_fd, _READ_CHUNK):
                    break
            except OSError:
                break

    def detach(self) -> None:
        """Stop using the pipes (the process is closed; its fd numbers may be reused)."""
        self.detached = True
        self.stdout_open = self.stderr_open = False
        self.gone = True
        self.outbox.clear()
        self._poll_cache = None

    def drain_waiting_stderr(self) -> None:
        """``drain_stderr`` if stderr has something to read (or has closed): a poll costs
        less than a read that finds nothing, for which Python builds an exception. Nothing
        when the wait that brought the last line has just done that (``_stderr_seen``)."""
        if self._stderr_seen:
            self._stderr_seen = False
            return
        if self.stderr_open and self._stderr_poll.poll(0):
            self.drain_stderr()

    def drain_stderr(self, limit: int = 16) -> bool:
        """Read what stderr holds now (at most ``limit`` chunks); False once it is closed."""
        for _ in range(limit):
            try:
                data = os.read(self.process.stderr_fd, _READ_CHUNK)
            except BlockingIOError:
                return True
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                data = b""
            if not data:
                self.stderr_open = False
                return False
            self.stderr.add(data)
        return True

    def wait_exit(self, deadline: float) -> bool:
        """Wait until the bot closes its stdout (it has exited), discarding what it still says.

        Waiting on the pipe rather than on the process leaves reaping to the sandbox, which
        collects the resource use at that moment.
        """
        while self.stdout_open:
            event = self.read_line(deadline, [])
            if event is ReadEvent.TIMEOUT:
                return False
            self.lines.clear()
        return True

    def drain_stderr_until_closed(self, grace_s: float) -> None:
        """After a crash: collect the dying bot's last words for up to ``grace_s``."""
        deadline = time.perf_counter() + grace_s
        poller = select.poll()
        if self.stderr_open:
            poller.register(self.process.stderr_fd, select.POLLIN)
        while self.stderr_open and time.perf_counter() < deadline:
            if poller.poll(_ms_until(deadline)) and not self.drain_stderr():
                break
