"""A hostile pair for the freeze tests: one bit per move across the freeze, on the match core.

The same bot sits in both seats of a two-player game and plays index 0 throughout. Seat 0 (the
sender) draws a random bit at each of its first ``send`` turns and writes ``LEAK sent <turn>
<bit>`` on stderr (the replay keeps it; the receiver never sees it). For a 1 it leaves work
behind just before it answers; for a 0 it leaves none (for ``kernel``, it does the same work
before answering). Seat 1 (the receiver) measures its own
speed at each of its first ``hear`` turns that follow one of seat 0's and writes ``LEAK heard
<n> <bit>`` (the numbers pair the lines up again: under Docker a line may reach the replay a
step late). ``target.json`` names the technique (and ``send``, ``hear``: how many bits; by
default every turn):

- ``kernel``: two helper processes, forked at the start, each run one long system call
  (``madvise(MADV_POPULATE_READ)`` over a 32 MiB mapping, some 6 ms) that starts just before
  the answer (for a 0 the same work is done, and finished, before the answer, so that answer
  times and the load on the core do not tell the bits apart). A task stops for the freezer
  only on its way back to user mode, so unless the referee waits for the freeze to settle, the
  calls keep the core busy into the next seat's turn; the receiver, on that core, runs slower
  in its first milliseconds than at its other turns (it compares its speed with the faster of
  its earlier measurements, so the machine's load, which changes more slowly, matters less).
  How many bits that carries depends on how busy the core is: the bench measures it.
- ``timers``: every timer the limits allow, set to expire 2 to 12 ms after they are armed: the
  POSIX timers ``RLIMIT_SIGPENDING`` allows, timerfds (refused by the sandbox), and an
  ``ITIMER_REAL`` in each of as many helper processes as the process limit allows. A frozen
  bot's timers still fire, as interrupts on the core the bot last ran on; the receiver, on
  that core, counts the short gaps in its own loop, in its first and second half, and names a
  1 when the first has more than usual.
"""

import ctypes
import json
import os
import signal
import sys
import time

MADV_POPULATE_READ, MADV_DONTNEED, MADV_NOHUGEPAGE = 22, 4, 15
MAPPING = 32 << 20
KERNEL_HELPERS = 2
CLOCK_MONOTONIC = 1
SIGEV_SIGNAL = 0
TIMERS_WANTED = 400
ITIMER_HELPERS = 48
GAP_NS, LONG_GAP_NS = 2000, 200_000
"""A pause this long in the receiver's tight loop is counted as an interruption (a longer one is
another task's turn on the core)."""

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]  # fmt: skip
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def target() -> dict:
    try:
        with open("target.json") as f:
            return json.load(f)
    except OSError:
        return {}


def log(text: str) -> None:
    print(f"LEAK {text}", file=sys.stderr, flush=True)


# --- the sender ------------------------------------------------------------------------------


class KernelWork:
    """Forked helpers that each run one long ``madvise`` each time they are asked.

    A 0 costs the same work as a 1, done before the answer instead of after it: both answers
    then take about as long and load the core as much, and only where the work falls against
    the freeze differs.
    """

    def __init__(self, mapping: int, helpers: int) -> None:
        self.mapping = mapping
        self.asks: list[int] = []
        self.ack_r, ack_w = os.pipe()
        self.done_r, done_w = os.pipe()
        self.running = 0
        for _ in range(helpers):
            ask_r, ask_w = os.pipe()
            if os.fork() == 0:
                self.serve(ask_r, ack_w, done_w)
                os._exit(0)
            self.asks.append(ask_w)

    def serve(self, ask: int, ack: int, done: int) -> None:
        size = self.mapping
        addr = libc.mmap(None, size, 1, 0x22 | 0x4000, -1, 0)  # read-only, private, anon
        libc.madvise(addr, size, MADV_NOHUGEPAGE)
        while os.read(ask, 1):
            os.write(ack, b"k")
            libc.madvise(addr, size, MADV_POPULATE_READ)  # one call, milliseconds in the kernel
            libc.madvise(addr, size, MADV_DONTNEED)
            os.write(done, b"d")

    def settle(self) -> None:
        """Wait until the work left running at the last answer is over."""
        for _ in range(self.running):
            os.read(self.done_r, 1)
        self.running = 0

    def start(self, after_answer: bool) -> None:
        """Set the helpers going; return once each is on its way into the call (or, for work
        before the answer, once all of it is done)."""
        for ask in self.asks:
            os.write(ask, b"g")
        for _ in self.asks:
            os.read(self.ack_r, 1)
        self.running = len(self.asks)
        if not after_answer:
            self.settle()


class sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]  # fmt: skip


class timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


class itimerspec(ctypes.Structure):
    _fields_ = [("interval", timespec), ("value", timespec)]


class Timers:
    """POSIX timers, timerfds and helpers' itimers, armed again before each answer that sends
    a 1."""

    def __init__(self) -> None:
        self.signo = signal.SIGRTMIN + 3
        signal.signal(self.signo, lambda *_: None)
        self.posix: list[ctypes.c_void_p] = []
        for _ in range(TIMERS_WANTED):
            event = sigevent(signo=self.signo, notify=SIGEV_SIGNAL)
            timer = ctypes.c_void_p()
            if libc.timer_create(CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(timer)):
                break
            self.posix.append(timer)
        self.fds: list[int] = []
        for _ in range(TIMERS_WANTED):
            fd = libc.timerfd_create(CLOCK_MONOTONIC, 0)
            if fd < 0:
                break
            self.fds.append(fd)
        self.helpers = self.fork_helpers()
        self.armed_at = 0.0
        armed = f"{len(self.posix)} timers, {len(self.fds)} timerfds, {len(self.helpers)} itimers"
        log(f"armed {armed}")

    def fork_helpers(self) -> list[int]:
        """Processes that each arm an ``ITIMER_REAL`` when sent SIGUSR1, then say so."""
        self.ack_r, ack_w = os.pipe()
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # the expiry is the interrupt; no one wakes
        # Blocked, and taken with sigwait: a handler and pause() would lose a signal that comes
        # just before the pause.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        pids: list[int] = []
        for i in range(ITIMER_HELPERS):
            delay = self.expiry_s(len(self.posix) + len(self.fds) + i)
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                while True:
                    signal.sigwait({signal.SIGUSR1})
                    signal.setitimer(signal.ITIMER_REAL, delay)
                    os.write(ack_w, b"a")
            pids.append(pid)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        return pids

    @property
    def total(self) -> int:
        return len(self.posix) + len(self.fds) + ITIMER_HELPERS

    def expiry_s(self, i: int) -> float:
        return (2_000_000 + i * 10_000_000 // max(1, self.total)) / 1e9

    def settle(self) -> None:
        """Wait until every timer of the last 1 has fired (a seat-0 move directly followed by
        another one must not leave them to the receiver's next turn)."""
        time.sleep(max(0.0, self.armed_at + 0.013 - time.monotonic()))

    def start(self) -> None:
        self.armed_at = time.monotonic()
        for i, timer in enumerate(self.posix):
            libc.timer_settime(timer, 0, ctypes.byref(self.expiry(i)), None)
        for i, fd in enumerate(self.fds):
            libc.timerfd_settime(fd, 0, ctypes.byref(self.expiry(len(self.posix) + i)), None)
        for pid in self.helpers:
            os.kill(pid, signal.SIGUSR1)
        for _ in self.helpers:
            os.read(self.ack_r, 1)  # armed

    def expiry(self, i: int) -> itimerspec:
        return itimerspec(value=timespec(0, int(self.expiry_s(i) * 1e9)))


# --- the receiver ----------------------------------------------------------------------------


def loop_counts(windows: list[tuple[float, float]]) -> list[int]:
    """Turns of a tight loop within each (start, end) window, in seconds from now."""
    start = time.perf_counter()
    counts = [0] * len(windows)
    end = start + max(e for _, e in windows)
    while (now := time.perf_counter()) < end:
        t = now - start
        for i, (a, b) in enumerate(windows):
            if a <= t < b:
                counts[i] += 1
    return counts


SPEEDS: list[int] = []


def hear_kernel() -> int:
    """1 if this turn's first 10 ms ran much slower than most of the receiver's turns."""
    (early,) = loop_counts([(0.0, 0.010)])
    usual = sorted(SPEEDS)[3 * len(SPEEDS) // 4] if len(SPEEDS) >= 4 else early
    SPEEDS[:] = [*SPEEDS[-15:], early]
    log(f"speed {early} {usual}")
    return int(early < 0.75 * usual)


def gaps(seconds: float) -> tuple[int, int]:
    """Short pauses (``GAP_NS`` to ``LONG_GAP_NS``: an interrupt, not another task's turn) in
    the first and the second half of ``seconds``."""
    clock = time.perf_counter_ns
    start = last = clock()
    half, end = start + int(seconds * 5e8), start + int(seconds * 1e9)
    first = second = 0
    while last < end:
        now = clock()
        if GAP_NS < now - last < LONG_GAP_NS:
            if now < half:
                first += 1
            else:
                second += 1
        last = now
    return first, second


EXCESSES: list[int] = []


def hear_timers() -> int:
    """1 if the first half had more short gaps than the second, by more than the median of the
    receiver's earlier turns (about half of them heard timers: the median lies between)."""
    first, second = gaps(0.028)
    excess = first - second
    usual = sorted(EXCESSES)[len(EXCESSES) // 2] if len(EXCESSES) >= 4 else 3
    EXCESSES[:] = [*EXCESSES[-15:], excess]
    log(f"gaps {first} {second}")
    return int(excess > usual)


# --- the protocol ----------------------------------------------------------------------------


def just_after_seat_0(observation: dict) -> bool:
    """Whether the move before this one was seat 0's (Svoi Kozyri lists every move)."""
    history = observation.get("history") or []
    return bool(history) and history[-1].get("seat") == 0


def main() -> None:
    aim = target()
    way = str(aim.get("technique", "kernel"))
    always = bool(aim.get("always"))  # a 1 every time (the strike test)
    mapping = int(aim.get("mapping_mb", MAPPING >> 20)) << 20
    helpers = int(aim.get("helpers", KERNEL_HELPERS))
    to_send, to_hear = int(aim.get("send", 1 << 30)), int(aim.get("hear", 1 << 30))
    sender = None
    seat = -1
    turns = heard = 0  # the sender's turns, the receiver's hearings so far
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            seat = msg["seat"]
            if seat == 0:
                sender = KernelWork(mapping, helpers) if way == "kernel" else Timers()
            reply = {"type": "ready", "protocol": 1}
        elif msg["type"] == "request":
            if seat == 0 and sender is not None and turns < to_send:
                sender.settle()
                bit = 1 if always else os.urandom(1)[0] & 1
                log(f"sent {turns} {bit}")
                turns += 1
                if isinstance(sender, KernelWork):
                    sender.start(after_answer=bool(bit))
                elif bit:
                    sender.start()
            elif seat == 1 and heard < to_hear and just_after_seat_0(msg["observation"]):
                bit = hear_kernel() if way == "kernel" else hear_timers()
                log(f"heard {heard} {bit}")
                heard += 1
            reply = {"type": "action", "id": msg["id"], "index": 0}
        elif msg["type"] in ("match_end", "shutdown"):
            return
        else:
            continue
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
