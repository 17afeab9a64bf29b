"""A hostile bot for the sandbox tests.

Tries to reach a server on the host's loopback, then crashes.
"""

import json
import socket
import sys


def attack() -> None:
    port = int(target().get("port", 8080))
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect((host, port))
                s.sendall(b"escaped\n")
                report(f"connect {host}", "CONNECTED")
        except OSError as exc:
            report(f"connect {host}", f"{type(exc).__name__}:{exc.errno}")
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
