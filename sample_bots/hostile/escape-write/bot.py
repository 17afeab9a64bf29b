"""A hostile bot for the sandbox tests.

Tries to create files outside its /tmp, then crashes.
"""

import json
import os
import sys


def attack() -> None:
    token = target().get("token", "arena-hostile")
    places = ["/bot", "/kit", "/usr", "/usr/bin", "/etc", "/", "/proc", "/dev", "/var", "/home"]
    places += [p for p in (target().get("host_dir"), target().get("other_bot")) if p]
    for place in places:
        path = os.path.join(place, token)
        try:
            with open(path, "w") as f:
                f.write("escaped")
            report(f"write {place}", "WROTE")
        except OSError as exc:
            report(f"write {place}", f"{type(exc).__name__}:{exc.errno}")
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
