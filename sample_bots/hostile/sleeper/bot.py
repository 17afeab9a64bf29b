"""A hostile bot for the sandbox tests.

Sleeps forever at its first turn.
"""

import json
import sys
import time


def attack() -> None:
    report("sleeping", 1)
    while True:
        time.sleep(3600)


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
