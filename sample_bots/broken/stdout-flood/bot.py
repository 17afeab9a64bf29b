"""Misbehaving fixture: answers a request with 16 MiB on a single line."""

import json
import sys

sys.stdin.readline()
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
chunk = "x" * (1 << 20)
for line in sys.stdin:
    if json.loads(line)["type"] == "request":
        for _ in range(16):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
        sys.stdout.flush()
