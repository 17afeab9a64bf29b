"""A hostile bot for the sandbox tests.

Fills its /tmp, then tries to write a large file anywhere else; then crashes.
"""

import json
import os
import sys

MB = b"\x00" * (1 << 20)


def fill(path: str, limit_mb: int = 4096) -> tuple[int, str]:
    written = 0
    try:
        with open(path, "wb") as f:
            while written < limit_mb:
                f.write(MB)
                f.flush()
                written += 1
    except OSError as exc:
        return written, type(exc).__name__ + ":" + str(exc.errno)
    return written, "no_error"


def attack() -> None:
    token = target().get("token", "arena-hostile")
    for place in (
        "/tmp",
        "/bot",
        "/kit",
        "/usr",
        "/",
        "/dev/shm",
        target().get("host_dir", "/var"),
    ):
        written, error = fill(os.path.join(place, token))
        report(f"fill {place}", f"{written}MB {error}")
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
