"""A hostile bot for the sandbox tests.

Leaves a double-forked, detached child that tries to outlive the match; then crashes.
"""

import json
import os
import sys
import time


def attack() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # the orphan: keeps a heartbeat going for as long as it lives
            while True:
                time.sleep(0.05)
        os._exit(0)
    os.wait()
    report("orphan_started", 1)
    sys.exit(3)


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "hello":
            reply = {"type": "ready", "protocol": 1}
        elif msg["type"] == "request":
            attack()
            reply = {"type": "action", "id": msg["id"], "index": 0}
        elif msg["type"] in ("match_end", "shutdown"):
            return
        else:
            continue
        print(json.dumps(reply), flush=True)


def report(key: str, value: object) -> None:
    """One finding for the referee's side of the test: ``HOSTILE <key><TAB><value>`` on stderr."""
    print(f"HOSTILE {key}\t{value}", file=sys.stderr, flush=True)


def target() -> dict:
    """What the test wants attacked (ports, paths); absent when played outside the tests."""
    try:
        with open("target.json") as f:
            return json.load(f)
    except OSError:
        return {}


if __name__ == "__main__":
    main()
