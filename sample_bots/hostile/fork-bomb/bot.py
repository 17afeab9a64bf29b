"""A hostile bot for the sandbox tests.

Forks until the process limit stops it, then keeps trying; never answers.
"""

import json
import os
import sys
import time


def attack() -> None:
    forks = 0
    while True:
        try:
            pid = os.fork()
        except OSError as exc:
            report("fork_failed_after", forks)
            report("fork_error", type(exc).__name__)
            break
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        forks += 1
    while True:  # keep the pressure on, as a real bomb would
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
        except OSError:
            time.sleep(0.01)


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
