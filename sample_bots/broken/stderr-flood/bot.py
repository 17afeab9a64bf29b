"""Misbehaving fixture: a correct player that writes 1 MiB to stderr before every answer."""

import json
import sys

sys.stdin.readline()
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
noise = ("stderr-flood " * 80 + "\n") * 1000
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "request":
        sys.stderr.write(noise)
        sys.stderr.flush()
        print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
