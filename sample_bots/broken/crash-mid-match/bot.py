"""Misbehaving fixture: plays three moves, then crashes with a traceback on stderr."""

import json
import sys

sys.stdin.readline()
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
moves = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "request":
        continue
    moves += 1
    if moves > 3:
        raise RuntimeError("crash-mid-match: deliberate crash")
    print(json.dumps({"type": "action", "id": message["id"], "index": 0}), flush=True)
