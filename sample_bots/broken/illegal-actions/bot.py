"""Misbehaving fixture: every answer is illegal (alternately by index and by value)."""

import json
import sys

sys.stdin.readline()
print(json.dumps({"type": "ready", "protocol": 1}), flush=True)
for n, line in enumerate(sys.stdin):
    message = json.loads(line)
    if message["type"] != "request":
        continue
    if n % 2:
        answer = {"index": len(message["legal_actions"]) + 5}
    else:
        answer = {"action": {"type": "lead", "card": "XX"}}
    print(json.dumps({"type": "action", "id": message["id"], **answer}), flush=True)
