#!/usr/bin/env bash
# Build every wheel the platform image needs into build/wheels, so `docker build` can install
# them with no network (see Dockerfile). Run it with a Python of the image's version (3.11).
#
# Usage: docker/build-wheels.sh [python]     (default: .venv/bin/python, else python3)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-}"
if [[ -z $PY ]]; then
    if [[ -x $ROOT/.venv/bin/python ]]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi
fi
OUT="$ROOT/build/wheels"
mkdir -p "$OUT"
# The project's dependencies, not the project: the image installs its sources in editable mode.
REQS="$(mktemp)"
trap 'rm -f "$REQS"' EXIT
"$PY" - "$ROOT/pyproject.toml" >"$REQS" <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
PY
# async-timeout: redis needs it on Python < 3.11.3 (Debian bookworm has 3.11.2), a marker the
# host's newer 3.11 would skip. setuptools 77 reads pyproject's SPDX license string.
"$PY" -m pip wheel -q --wheel-dir "$OUT" pip "setuptools>=77" wheel "async-timeout>=4.0.3" \
    -r "$REQS" -r "$ROOT/docker/requirements.txt" 2>&1 | grep -v "^WARNING: Location" >&2 || true
echo "wheels in $OUT: $(ls "$OUT" | wc -l)"
