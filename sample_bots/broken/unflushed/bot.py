"""Misbehaving fixture: the newcomer's classic. It answers every message, but never flushes
stdout, so its answers wait in a block buffer and the referee hears nothing."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({"type": "ready", "protocol": 1}))
    elif message["type"] == "request":
        print(json.dumps({"type": "action", "id": message["id"], "action": 0}))
    elif message["type"] == "shutdown":
        break
