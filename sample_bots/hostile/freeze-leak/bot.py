"""A hostile pair for the freeze tests: one bit per move across the freeze, on the match core.

The same bot sits in both seats of a two-player game and plays index 0 throughout. Seat 0 (the
sender) draws a random bit at each of its turns and writes ``LEAK sent <bit>`` on stderr (the
replay keeps it; the receiver never sees it). For a 1 it leaves work behind just before it
answers; for a 0 it leaves none. Seat 1 (the receiver) measures its own speed at each of its
turns that follow one of seat 0's and writes ``LEAK heard <bit>``. ``target.json`` names the
technique:

- ``kernel``: a helper process, forked at the start, runs one long system call
  (``madvise(MADV_POPULATE_READ)`` over a 128 MiB mapping, some 25 ms) that starts just before
  the answer. A task stops for the freezer only on its way back to user mode, so unless the
  referee waits for the freeze to settle, the call keeps the core busy into the next seat's
  turn; the receiver, on that core, runs slower in its first milliseconds than later.
- ``timers``: as many one-shot POSIX timers and timerfds as the limits allow, set to expire
  1 to 12 ms after the answer. A frozen bot's timers still fire, as interrupts on the core the
  bot last ran on; the receiver, on that core, counts the gaps in its own loop.
"""

import ctypes
import json
import os
import signal
import sys
import time

MADV_POPULATE_READ, MADV_DONTNEED, MADV_NOHUGEPAGE = 22, 4, 15
MAPPING = 128 << 20
CLOCK_MONOTONIC = 1
SIGEV_SIGNAL = 0
TIMERS_WANTED = 400
GAP_NS = 4000
"""A pause this long in the receiver's tight loop is counted as an interruption."""

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
    """A forked helper that runs one long ``madvise`` each time it is asked."""

    def __init__(self, mapping: int) -> None:
        self.mapping = mapping
        self.ask_r, self.ask_w = os.pipe()
        self.ack_r, self.ack_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            self.serve()
            os._exit(0)

    def serve(self) -> None:
        size = self.mapping
        addr = libc.mmap(None, size, 1, 0x22 | 0x4000, -1, 0)  # read-only, private, anon
        libc.madvise(addr, size, MADV_NOHUGEPAGE)
        while os.read(self.ask_r, 1):
            os.write(self.ack_w, b"k")
            libc.madvise(addr, size, MADV_POPULATE_READ)  # one call, tens of ms in the kernel
            libc.madvise(addr, size, MADV_DONTNEED)

    def start(self) -> None:
        """Set the helper going and return once it is inside the call."""
        os.write(self.ask_w, b"g")
        os.read(self.ack_r, 1)
        give_up = time.monotonic() + 0.02
        while time.monotonic() < give_up and not self.in_madvise():
            time.sleep(0.0001)  # let the helper run (it may share this core)

    def in_madvise(self) -> bool:
        try:
            with open(f"/proc/{self.pid}/syscall") as f:
                return f.read().startswith("28 ")  # madvise, x86_64
        except OSError:
            return False


class sigevent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]  # fmt: skip


class timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


class itimerspec(ctypes.Structure):
    _fields_ = [("interval", timespec), ("value", timespec)]


class Timers:
    """POSIX timers and timerfds, armed again before each answer that sends a 1."""

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
        log(f"armed {len(self.posix)} timers and {len(self.fds)} timerfds")

    def start(self) -> None:
        total = len(self.posix) + len(self.fds)
        for i, timer in enumerate(self.posix):
            libc.timer_settime(timer, 0, ctypes.byref(self.expiry(i, total)), None)
        for i, fd in enumerate(self.fds):
            libc.timerfd_settime(fd, 0, ctypes.byref(self.expiry(len(self.posix) + i, total)),
                                 None)  # fmt: skip

    @staticmethod
    def expiry(i: int, total: int) -> itimerspec:
        ns = 1_000_000 + i * 11_000_000 // max(1, total)
        return itimerspec(value=timespec(0, ns))


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


def hear_kernel() -> int:
    early, late = loop_counts([(0.0, 0.010), (0.150, 0.160)])
    log(f"speed {early} {late}")
    return int(early < 0.75 * late)


def gaps(seconds: float) -> tuple[int, int]:
    """Pauses longer than ``GAP_NS`` in the first and the second half of ``seconds``."""
    clock = time.perf_counter_ns
    start = last = clock()
    half, end = start + int(seconds * 5e8), start + int(seconds * 1e9)
    first = second = 0
    while last < end:
        now = clock()
        if now - last > GAP_NS:
            if now < half:
                first += 1
            else:
                second += 1
        last = now
    return first, second


def hear_timers() -> int:
    first, second = gaps(0.026)
    return int(first > second + 3)


# --- the protocol ----------------------------------------------------------------------------


def just_after_seat_0(observation: dict) -> bool:
    """Whether the move before this one was seat 0's (Svoi Kozyri lists every move)."""
    history = observation.get("history") or []
    return bool(history) and history[-1].get("seat") == 0


def main() -> None:
    way = str(target().get("technique", "kernel"))
    always = bool(target().get("always"))  # a 1 every time (the strike test)
    mapping = int(target().get("mapping_mb", MAPPING >> 20)) << 20
    sender = None
    seat = -1
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            seat = msg["seat"]
            if seat == 0:
                sender = KernelWork(mapping) if way == "kernel" else Timers()
            reply = {"type": "ready", "protocol": 1}
        elif msg["type"] == "request":
            if seat == 0 and sender is not None:
                bit = 1 if always else os.urandom(1)[0] & 1
                log(f"sent {bit}")
                if bit:
                    sender.start()
            elif seat == 1 and just_after_seat_0(msg["observation"]):
                log(f"heard {hear_kernel() if way == 'kernel' else hear_timers()}")
            reply = {"type": "action", "id": msg["id"], "index": 0}
        elif msg["type"] in ("match_end", "shutdown"):
            return
        else:
            continue
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
