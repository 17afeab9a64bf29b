"""A hostile bot for the freezing tests.

From ``hello`` on, a background thread and a detached process (double-forked, in a session of
its own, so outside the bot's process group) count as fast as they can, into memory shared with
the bot. With every answer the bot notes both counters; when the next request arrives it reports
how far each went meanwhile, as ``HOSTILE idle<TAB><thread> <process> <wall ms>`` on stderr,
then plays the first legal action. Between its answer and its next request a frozen bot counts
nothing (beyond the instants around the freeze and the thaw).
"""

import json
import mmap
import os
import struct
import sys
import threading
import time

COUNTERS = mmap.mmap(-1, 16)  # anonymous and shared: the forked process writes here too
thread_count = 0


def count_in_thread() -> None:
    global thread_count
    while True:
        thread_count += 1


def count_in_process() -> None:
    """Fork a grandchild in a session of its own that counts into ``COUNTERS`` forever."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            n = 0
            while True:
                n += 1
                if n & 1023 == 0:
                    COUNTERS[0:8] = struct.pack("q", n)
        os._exit(0)
    os.wait()


def process_count() -> int:
    return struct.unpack("q", COUNTERS[0:8])[0]


def main() -> None:
    answered: tuple[int, int, float] | None = None
    for line in sys.stdin:
        now = (thread_count, process_count(), time.monotonic())
        msg = json.loads(line)
        if msg["type"] == "hello":
            count_in_process()
            threading.Thread(target=count_in_thread, daemon=True).start()
            reply = {"type": "ready", "protocol": 1}
        elif msg["type"] == "request":
            if answered is not None:
                idle = [now[0] - answered[0], now[1] - answered[1], (now[2] - answered[2]) * 1000]
                report("idle", f"{idle[0]} {idle[1]} {idle[2]:.0f}")
            reply = {"type": "action", "id": msg["id"], "index": 0}
        elif msg["type"] in ("match_end", "shutdown"):
            return
        else:
            continue
        print(json.dumps(reply), flush=True)
        answered = (thread_count, process_count(), time.monotonic())


def report(key: str, value: object) -> None:
    """One finding for the referee's side of the test: ``HOSTILE <key><TAB><value>`` on stderr."""
    print(f"HOSTILE {key}\t{value}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
