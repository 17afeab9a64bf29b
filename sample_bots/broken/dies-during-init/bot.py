"""Misbehaving fixture: dies on reading hello."""

import sys

sys.stdin.readline()
print("dies-during-init: cannot load my model", file=sys.stderr, flush=True)
sys.exit(3)
